// Package lm generates text with a language model compiled by graphc:
// the decoding loop, the KV cache's slots, sequences decoded together in
// one evaluation (continuous batching), sampling and stop conditions. It
// drives any Model; the packages graphc generates for llama.cpp's decoder
// architectures (examples/llamafile, qwen2, qwen3, gemma3) provide one from
// (*Model).LM(), and the programs generated with -main are graphc's
// generate, chat and serve commands for their model.
package lm

// Model is a compiled decoder: a KV cache of Info().NCtx slots and one
// evaluation of up to Info().NBatch tokens at a time.
type Model interface {
	Info() Info
	// Decode evaluates b and returns the logits of the tokens b.Outputs
	// names: len(b.Outputs) rows of Info().NVocab, in b.Outputs' order.
	// The returned slice is the caller's; it is in b.Logits' memory where
	// that holds it.
	Decode(b *Batch) ([]float32, error)
}

// Info is a Model's shape.
type Info struct {
	NCtx   int // KV cache slots
	NBatch int // most tokens in one Decode
	NVocab int // logits per output token
	// SlidingWindow, where not 0, is the window in positions of the
	// model's sliding-window attention layers (gemma3's): each Batch
	// then has their mask in MaskSWA too.
	SlidingWindow int
}

// Batch is one evaluation, as llama.cpp's decoders take it: its tokens'
// keys and values go to KV cache slots NKV-len(Tokens) … NKV-1, and each
// token attends to the slots its row of Mask leaves open.
type Batch struct {
	Tokens []int32
	Pos    []int32   // each token's position in its sequence (rope's)
	Mask   []float32 // len(Tokens) rows of NKV: 0 where the token sees the slot, -inf where it does not
	// MaskSWA is Mask for the sliding-window layers of a model whose
	// Info has a SlidingWindow: a token sees only the slots of its
	// sequence's last SlidingWindow positions, its own included
	// (llama.cpp's KQ_mask_swa).
	MaskSWA []float32
	NKV     int // cache slots in use after this batch
	// Outputs are the indexes into Tokens whose logits Decode returns.
	Outputs []int32
	// Logits, where its capacity holds them, is memory the caller no
	// longer reads (an earlier Decode's logits) for Decode's result:
	// memory new to the process costs a page fault a page.
	Logits []float32
}

// Func is a Model made of its shape and a decode function: what generated
// packages return from (*Model).LM(), decode wrapping their Eval.
func Func(info Info, decode func(*Batch) ([]float32, error)) Model {
	return funcModel{info, decode}
}

type funcModel struct {
	info   Info
	decode func(*Batch) ([]float32, error)
}

func (f funcModel) Info() Info                         { return f.info }
func (f funcModel) Decode(b *Batch) ([]float32, error) { return f.decode(b) }
