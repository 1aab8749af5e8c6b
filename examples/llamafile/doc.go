// Package llamafile is examples/llamafile/llama.g compiled by graphc for
// its defaults: a llama-architecture decoder whose dims, eps and rope
// parameters come from a GGUF file's metadata (meta(…) in llama.g), with
// Mixtral's mixture of experts for its feed-forward when the file states
// llama.expert_count.
// Compiled this way it loads files of the default shape (2 layers,
// n_embd 64, 4 heads, 2 KV heads); for any other llama file, compile
// llama.g for it: graphc run -weights FILE llama.g, or
// graphc compile -weights FILE llama.g. Loading a file whose metadata
// differs from Meta fails naming the key.
package llamafile

//go:generate go run ../../cmd/graphc compile llama.g
