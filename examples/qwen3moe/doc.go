// Package qwen3moe is examples/qwen3moe/qwen3moe.g compiled by graphc for
// its defaults: a qwen3moe-architecture decoder (qwen3's attention, a
// mixture of experts for the feed-forward) whose dims and constants come
// from a GGUF file's metadata. For a file of another shape, compile
// qwen3moe.g for it: graphc run -weights FILE qwen3moe.g.
package qwen3moe

//go:generate go run ../../cmd/graphc compile qwen3moe.g
