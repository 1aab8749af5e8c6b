// Package llama32 is the llama example with 32 layers (llama32.g), compiled
// by graphc: a benchmark of the CPU backend on many small ops, where
// per-op overhead and the small matrix kernels decide the time. It sets
// parallel_regions: each layer's per-token nodes, from one attention
// product to the next, run as one region, the threads each taking half the
// tokens through all of them without a barrier (BenchmarkEval).
package llama32

//go:generate go run ../../cmd/graphc compile llama32.g
