package ggufarch

import (
	"math"

	"github.com/graphc/graphc/gguf"
)

// phi3Meta is the metadata llama.cpp's converter writes for a phi3 file
// (Phi3MiniModel) beyond the keys every architecture here has: the rope
// scaling's original context (rope.scaling.original_context_length, which
// llama.cpp compares its context with to pick the long or the short rope
// factors), the sliding window, and, with the rope factors, the rotated
// values' magnitude scale (rope.scaling.attn_factor).
func phi3Meta(o Options) []gguf.KV {
	kvs := []gguf.KV{
		{Key: "phi3.rope.scaling.original_context_length", Value: uint32(phi3OrigCtx(o))},
		{Key: "phi3.attention.sliding_window", Value: uint32(o.SlidingWindow)},
	}
	if o.RopeFactors {
		kvs = append(kvs, gguf.KV{Key: "phi3.rope.scaling.attn_factor", Value: float32(Phi3AttnFactor(o.Ctx, phi3OrigCtx(o)))})
	}
	return kvs
}

// phi3OrigCtx is a phi3 file's original context: RopeOrigCtx, or the
// trained context (Phi-3 mini 4k's files have the two the same).
func phi3OrigCtx(o Options) int {
	if o.RopeOrigCtx > 0 {
		return o.RopeOrigCtx
	}
	return o.Ctx
}

// Phi3AttnFactor is the converter's attn_factor for longrope scaling from
// an original context orig to ctx: sqrt(1 + ln(ctx/orig)/ln(orig)), 1
// when the context is not longer.
func Phi3AttnFactor(ctx, orig int) float64 {
	scale := float64(ctx) / float64(orig)
	if scale <= 1 {
		return 1
	}
	return math.Sqrt(1 + math.Log(scale)/math.Log(float64(orig)))
}

// Phi3RopeFactors are the long and short rope factors a phi3 file of head
// size headDim gets with Options.RopeFactors: one per rotated pair, the
// short ones slightly above 1 and the long ones growing with the pair's
// wavelength to 16, shaped as Phi-3 128k's config.json lists (the real
// ones are fitted per model; any positive values load).
func Phi3RopeFactors(headDim int) (long, short []float32) {
	n := headDim / 2
	long, short = make([]float32, n), make([]float32, n)
	for i := range n {
		x := float64(i) / float64(max(n-1, 1))
		long[i] = float32(1 + 15*x*x)
		short[i] = float32(1 + 0.25*x)
	}
	return long, short
}

// phi3Specials are Phi-3's added tokens (ids 32000..32010 in its
// vocabulary), which its files' vocabularies end with. llama.cpp's
// vocabulary loader looks <|endoftext|> up by text in a file whose
// general.name says phi3 or phi-3 (and fails without it); <|end|> ends a
// turn.
var phi3Specials = []string{
	"<|endoftext|>", "<|assistant|>", "<|placeholder1|>", "<|placeholder2|>", "<|placeholder3|>",
	"<|placeholder4|>", "<|system|>", "<|end|>", "<|placeholder5|>", "<|placeholder6|>", "<|user|>",
}

// phi3Vocab makes the SentencePiece vocabulary kvs (gguf.Vocab's "llama")
// Phi-3's: its last pieces become phi3Specials, control tokens scored
// -1000 as the converter scores added tokens, and <|endoftext|> is the
// end-of-sequence and padding token, as in Phi-3 mini's files.
func phi3Vocab(kvs []gguf.KV) []gguf.KV {
	var tokens []string
	for _, kv := range kvs {
		if kv.Key == "tokenizer.ggml.tokens" {
			tokens = kv.Value.([]string)
		}
	}
	first := len(tokens) - len(phi3Specials)
	for i := range kvs {
		switch v := kvs[i].Value.(type) {
		case []string:
			copy(v[first:], phi3Specials)
		case []float32:
			for j := first; j < len(v); j++ {
				v[j] = -1000
			}
		case []int32:
			for j := first; j < len(v); j++ {
				v[j] = gguf.TokenControl
			}
		}
		if kvs[i].Key == "tokenizer.ggml.eos_token_id" {
			kvs[i].Value = uint32(first)
		}
	}
	return append(kvs, gguf.KV{Key: "tokenizer.ggml.padding_token_id", Value: uint32(first)})
}
