// Package gemma3 is examples/gemma3/gemma3.g compiled by graphc for its
// defaults: a gemma3-architecture decoder (scaled embeddings, per-head
// query and key norms, post-attention and post-feed-forward norms, a
// GELU-gated feed-forward, sliding-window attention on five of every six
// layers through a second mask) whose dims and constants come from a GGUF
// file's metadata. For a file of another shape, compile gemma3.g for it:
// graphc run -weights FILE gemma3.g.
package gemma3

//go:generate go run ../../cmd/graphc compile gemma3.g
