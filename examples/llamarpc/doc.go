// Package llamarpc is the llama example (../llama/llama.g) compiled as
// ../llamapipe is, with ggml rpc-servers in place of the simulated devices:
// layers 0 and 1 and their KV cache on rpc0, layers 2 and 3 and theirs and
// the output layer on rpc1, the token embedding on the CPU, four pipeline
// copies. rpc<N> is the N-th endpoint bound when the model is made
// (rpc.SetEndpoints, $GRAPHC_RPC).
//
// Its tests start two servers ($GRAPHC_RPC_SERVER, or rpc-server on
// $PATH; they skip without one) and check that it computes
// what the CPU-only llama package computes with several evaluations in
// flight, and how it fails: a server killed between and during
// evaluations, and a server busy with another client.
package llamarpc

//go:generate go run ../../cmd/graphc compile -backends rpc0,rpc1,cpu -n-copies 4 -ot blk\.[01]\.=rpc0 -ot cache_._l[01]=rpc0 -ot blk\.[23]\.=rpc1 -ot cache_._l[23]=rpc1 -ot output=rpc1 -pkg llamarpc -o . ../llama/llama.g
