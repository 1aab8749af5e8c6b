// Package llama is the llama-style decoder of llama.g compiled by graphc:
// the graph of ggml's llama_cpu conformance trace, planned at compile time.
package llama

//go:generate go run ../../cmd/graphc compile llama.g
