package gguf

import "fmt"

// Token types of tokenizer.ggml.token_type (llama.cpp's llama_token_type).
const (
	TokenNormal  int32 = 1
	TokenUnknown int32 = 2
	TokenControl int32 = 3
	TokenByte    int32 = 6
)

// Vocab returns the tokenizer metadata of a small vocabulary of n tokens
// that llama.cpp loads and a real tokenizer can use, for test and
// benchmark files of random weights (graphc gguf new -arch). model is
// tokenizer.ggml.model:
//
//   - "llama" (SentencePiece, as Llama 1/2 files): 0 <unk> (unknown),
//     1 <s> and 2 </s> (control; bos and eos), 3..258 the byte tokens
//     <0x00>..<0xFF> (byte fallback), then pieces (normal): "▁", the
//     letters, digits and ASCII punctuation, "▁" + a letter, two letters,
//     "▁" + two letters, and so on until n. Every token has a score
//     (tokenizer.ggml.scores): 0 for the specials and bytes, -i for the
//     i-th piece, so shorter, earlier pieces rank first.
//     tokenizer.ggml.add_bos_token is true.
//   - "gpt2" (byte-level BPE, as Qwen2 files; tokenizer.ggml.pre is
//     "qwen2"): tokens 0..255 are the bytes 0..255 in GPT-2's byte-to-
//     unicode spelling ("Ġ" is the space), then one token per merge in
//     tokenizer.ggml.merges ("a b" makes "ab", each of a and b an earlier
//     token): "Ġ" + a letter, two letters, then those plus a letter, and
//     so on; the last three are <|endoftext|> (bos, padding),
//     <|im_start|> and <|im_end|> (eos), all control tokens.
//
// n must be at least 288 for either.
func Vocab(model string, n int) ([]KV, error) {
	if n < 288 {
		return nil, fmt.Errorf("gguf: a %s vocabulary needs at least 288 tokens, got %d", model, n)
	}
	switch model {
	case "llama":
		return spmVocab(n), nil
	case "gpt2":
		return bpeVocab(n), nil
	}
	return nil, fmt.Errorf("gguf: vocabulary model %q: want llama or gpt2", model)
}

const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// grow returns want strings: first, then each earlier one (from index
// from on) extended by a letter, breadth first, skipping duplicates.
func grow(seen map[string]bool, first []string, want int) []string {
	out := make([]string, 0, want)
	add := func(s string) {
		if len(out) < want && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, s := range first {
		add(s)
	}
	for i := 0; len(out) < want && i < len(out); i++ {
		for _, c := range letters {
			add(out[i] + string(c))
		}
	}
	return out
}

func spmVocab(n int) []KV {
	tokens := []string{"<unk>", "<s>", "</s>"}
	types := []int32{TokenUnknown, TokenControl, TokenControl}
	for b := range 256 {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, TokenByte)
	}
	first := []string{"▁"}
	for c := '!'; c <= '~'; c++ {
		first = append(first, string(c))
	}
	for _, c := range letters {
		first = append(first, "▁"+string(c))
	}
	pieces := grow(map[string]bool{}, first, n-len(tokens))
	scores := make([]float32, len(tokens), n)
	for i, p := range pieces {
		tokens = append(tokens, p)
		types = append(types, TokenNormal)
		scores = append(scores, -float32(i))
	}
	return []KV{
		{Key: "tokenizer.ggml.model", Value: "llama"},
		{Key: "tokenizer.ggml.tokens", Value: tokens},
		{Key: "tokenizer.ggml.scores", Value: scores},
		{Key: "tokenizer.ggml.token_type", Value: types},
		{Key: "tokenizer.ggml.unknown_token_id", Value: uint32(0)},
		{Key: "tokenizer.ggml.bos_token_id", Value: uint32(1)},
		{Key: "tokenizer.ggml.eos_token_id", Value: uint32(2)},
		{Key: "tokenizer.ggml.add_bos_token", Value: true},
		{Key: "tokenizer.ggml.add_eos_token", Value: false},
	}
}

// byteRunes is GPT-2's bytes_to_unicode: printable Latin-1 bytes stand
// for themselves, the others for the runes from U+0100 on, in order.
func byteRunes() [256]rune {
	var r [256]rune
	next := rune(256)
	for b := range 256 {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			r[b] = rune(b)
		} else {
			r[b] = next
			next++
		}
	}
	return r
}

func bpeVocab(n int) []KV {
	runes := byteRunes()
	var tokens []string
	seen := map[string]bool{}
	for _, r := range runes {
		tokens = append(tokens, string(r))
		seen[string(r)] = true
	}
	space := string(runes[' '])
	var first []string
	for _, c := range letters {
		first = append(first, space+string(c))
	}
	for _, c := range letters {
		for _, d := range letters {
			first = append(first, string(c)+string(d))
		}
	}
	specials := []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"}
	merged := grow(seen, first, n-len(tokens)-len(specials))
	merges := make([]string, len(merged))
	for i, t := range merged {
		// The last rune was added to an earlier token, or (first
		// level) to a single byte token.
		r := []rune(t)
		merges[i] = string(r[:len(r)-1]) + " " + string(r[len(r)-1])
		tokens = append(tokens, t)
	}
	types := make([]int32, len(tokens), n)
	for i := range types {
		types[i] = TokenNormal
	}
	eot := uint32(len(tokens))
	for _, s := range specials {
		tokens = append(tokens, s)
		types = append(types, TokenControl)
	}
	return []KV{
		{Key: "tokenizer.ggml.model", Value: "gpt2"},
		{Key: "tokenizer.ggml.pre", Value: "qwen2"},
		{Key: "tokenizer.ggml.tokens", Value: tokens},
		{Key: "tokenizer.ggml.token_type", Value: types},
		{Key: "tokenizer.ggml.merges", Value: merges},
		{Key: "tokenizer.ggml.bos_token_id", Value: eot},
		{Key: "tokenizer.ggml.padding_token_id", Value: eot},
		{Key: "tokenizer.ggml.eos_token_id", Value: eot + 2},
		{Key: "tokenizer.ggml.add_bos_token", Value: false},
	}
}
