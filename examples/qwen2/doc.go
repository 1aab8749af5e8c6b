// Package qwen2 is examples/qwen2/qwen2.g compiled by graphc for its
// defaults: a qwen2-architecture decoder (Q/K/V biases, neox rope) whose
// dims and constants come from a GGUF file's metadata. For a file of
// another shape, compile qwen2.g for it: graphc run -weights FILE qwen2.g.
package qwen2

//go:generate go run ../../cmd/graphc compile qwen2.g
