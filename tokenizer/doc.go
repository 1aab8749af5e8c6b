// Package tokenizer turns text into token ids and back with the vocabulary
// a GGUF file carries, the way llama.cpp does, so that a prompt given to
// graphc and to llama.cpp reaches the model as the same ids.
//
// Two tokenizer models are supported, named by tokenizer.ggml.model:
//
//   - "llama": SentencePiece-style (SPM). Spaces become ▁ (U+2581), a
//     space is prefixed to the text unless tokenizer.ggml.add_space_prefix
//     is false, and adjacent pieces merge by the highest score in
//     tokenizer.ggml.scores. Characters no piece covers fall back to the
//     <0xXX> byte tokens.
//   - "gpt2": byte-level BPE. The text is split by a pre-tokenizer
//     (tokenizer.ggml.pre: "llama-bpe" or "qwen2"), each byte of a word is
//     mapped to a printable character with GPT-2's bytes-to-unicode table,
//     and tokenizer.ggml.merges are applied lowest rank first.
//
// Control, user-defined and unknown tokens are kept whole: with
// parseSpecial, their text in the input is cut out before the model sees
// the rest (user-defined tokens always are), longest text first.
//
// The algorithms follow llama.cpp's src/llama-vocab.cpp and the pre-
// tokenizer regexes of its src/unicode.cpp; Go's regexp has no lookahead,
// so the split is written by hand. internal/llamacpp's tests compare the
// ids with llama.cpp's own.
package tokenizer
