// Package llama32 is the llama example with 32 layers (llama32.g), compiled
// by graphc: a benchmark of the CPU backend on many small ops, where
// per-op overhead and the small matrix kernels decide the time.
package llama32

//go:generate go run ../../cmd/graphc compile llama32.g
