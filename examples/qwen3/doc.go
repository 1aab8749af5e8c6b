// Package qwen3 is examples/qwen3/qwen3.g compiled by graphc for its
// defaults: a qwen3-architecture decoder (per-head query and key RMS
// norms, neox rope, a head size of its own) whose dims and constants come
// from a GGUF file's metadata. For a file of another shape, compile
// qwen3.g for it: graphc run -weights FILE qwen3.g.
package qwen3

//go:generate go run ../../cmd/graphc compile qwen3.g
