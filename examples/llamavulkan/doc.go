// Package llamavulkan is the llama example (../llama/llama.g) compiled for
// ggml's Vulkan device 0 and the CPU with llamapipe's pipeline parallelism:
// the token embedding, layers 0 and 1 and their KV cache on the CPU, layers
// 2 and 3 and theirs and the output layer on vulkan0, four pipeline
// copies. The device is last so that Submit returns while it computes: the
// CPU starts the next evaluation's first layers meanwhile.
//
// Its tests run it on a real device (Mesa's lavapipe in CI, see .ci/run)
// and skip, saying how to get one, without; they want the CPU-only llama
// package's logits within 1e-4 (the device's kernels are ggml's, summing in
// another order), with up to four evaluations in flight, and the bytes
// copied the plan's.
package llamavulkan

//go:generate go run ../../cmd/graphc compile -backends vulkan0,cpu -n-copies 4 -ot blk\.[01]\.=cpu -ot cache_._l[01]=cpu -ot blk\.[23]\.=vulkan0 -ot cache_._l[23]=vulkan0 -ot output=vulkan0 -pkg llamavulkan -o . ../llama/llama.g
