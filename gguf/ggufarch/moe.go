package ggufarch

import (
	"fmt"

	"github.com/graphc/graphc/gguf"
)

// moeArch is llama.cpp's qwen3moe: qwen3's attention (a head size of its
// own, per-head query and key norms) with a mixture of experts for its
// feed-forward, as Qwen3-30B-A3B's converter writes it.
const moeArch = "qwen3moe"

// qwen3moe files take qwen3's rope base, epsilon and tokenizer.
func init() { archDefaults[moeArch] = archDefaults["qwen3"] }

// The defaults of a qwen3moe file's experts: 8, 2 of them per token.
const (
	defaultExperts     = 8
	defaultExpertsUsed = 2
)

// ownHeads reports whether arch's files state their heads' size
// (attention.key_length) and have per-head query and key norms.
func ownHeads(arch string) bool { return arch == "qwen3" || arch == moeArch || arch == "gemma3" }

// experts are the file's experts, those each token uses and an expert's
// feed-forward width, defaults filled in: ExpertFF 0 is FF / ExpertsUsed,
// llama.cpp's fallback for a file without expert_feed_forward_length.
func (o *Options) experts() (n, used, ff int) {
	n, used, ff = o.Experts, o.ExpertsUsed, o.ExpertFF
	if n == 0 {
		n = defaultExperts
	}
	if used == 0 {
		used = min(defaultExpertsUsed, n)
	}
	if ff == 0 {
		ff = o.FF / used
	}
	return n, used, ff
}

// checkMoE reports expert options that make no file llama.cpp loads, or
// that a file of another architecture would ignore.
func (o *Options) checkMoE() error {
	if o.Arch != moeArch {
		if o.Experts != 0 || o.ExpertsUsed != 0 || o.ExpertFF != 0 {
			return fmt.Errorf("-experts, -experts-used and -expert-ff: only %s files have experts, not %s", moeArch, o.Arch)
		}
		return nil
	}
	n, used, ff := o.experts()
	bs := o.Type.BlockSize()
	switch {
	case o.Experts < 0 || o.ExpertsUsed < 0 || o.ExpertFF < 0:
		return fmt.Errorf("-experts, -experts-used and -expert-ff must not be negative")
	case used > n:
		return fmt.Errorf("-experts-used %d is more than the %d experts (-experts)", used, n)
	case ff < 1:
		return fmt.Errorf("the experts' feed-forward width is 0: -ff %d / -experts-used %d; give -expert-ff", o.FF, used)
	case ff%bs != 0:
		return fmt.Errorf("-expert-ff %d must be a multiple of %s's block size %d", ff, o.Type, bs)
	case o.Mix != "":
		return fmt.Errorf("-type %s: graphc writes %s files of one type for the experts, not llama.cpp's mixes", o.Mix, moeArch)
	}
	return nil
}

// moeMeta is a qwen3moe file's metadata of its experts.
func (o *Options) moeMeta() []gguf.KV {
	if o.Arch != moeArch {
		return nil
	}
	n, used, ff := o.experts()
	p := o.Arch + "."
	return []gguf.KV{
		{Key: p + "expert_count", Value: uint32(n)},
		{Key: p + "expert_used_count", Value: uint32(used)},
		{Key: p + "expert_feed_forward_length", Value: uint32(ff)},
	}
}

// moeFFN are the feed-forward tensors of the block named b (its "blk.N."
// prefix): the router ffn_gate_inp (f32, as llama.cpp's converter and
// quantizer keep it) and the experts' gate, up and down matrices, one per
// expert in their third dimension.
func (o *Options) moeFFN(b string) []weight {
	n, _, ff := o.experts()
	return []weight{
		{name: b + "ffn_gate_inp.weight", ne0: o.Embd, rows: n},
		{name: b + "ffn_gate_exps.weight", ne0: o.Embd, rows: ff, ne2: n, matrix: true},
		{name: b + "ffn_down_exps.weight", ne0: ff, rows: o.Embd, ne2: n, matrix: true},
		{name: b + "ffn_up_exps.weight", ne0: o.Embd, rows: ff, ne2: n, matrix: true},
	}
}
