// Package mlp is the 3-layer perceptron of mlp.g compiled by graphc: the
// graph of ggml's mlp conformance trace, planned at compile time.
package mlp

//go:generate go run ../../cmd/graphc compile mlp.g
