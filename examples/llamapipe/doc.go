// Package llamapipe is the llama example (../llama/llama.g) compiled for two
// simulated devices and the CPU, with pipeline parallelism: layers 0 and 1
// and their KV cache on sim0, layers 2 and 3 and theirs and the output
// layer on sim1, the token embedding on the CPU, four pipeline copies: an
// evaluation is issued while the earlier ones still compute. The
// simulated devices run the CPU kernels on memory of their own, each on its
// own queue, so this is what a two-GPU plan does, on any machine.
//
// Its tests check that it computes exactly what the CPU-only llama package
// computes, evaluation by evaluation and with up to four evaluations in
// flight, that it copies what the plan says, and the eval callback; CI runs
// them under the race detector.
package llamapipe

//go:generate go run ../../cmd/graphc compile -backends sim0,sim1,cpu -n-copies 4 -ot blk\.[01]\.=sim0 -ot cache_._l[01]=sim0 -ot blk\.[23]\.=sim1 -ot cache_._l[23]=sim1 -ot output=sim1 -pkg llamapipe -o . ../llama/llama.g
