package ggufarch

import (
	"fmt"

	"github.com/graphc/graphc/gguf"
)

// moeArch is llama.cpp's qwen3moe: qwen3's attention (a head size of its
// own, per-head query and key norms) with a mixture of experts for its
// feed-forward, as Qwen3-30B-A3B's converter writes it. llama files have
// experts too when Options.Experts is set: Mixtral's, which llama.cpp
// loads as llama files stating expert_count, their experts -ff wide.
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

// hasExperts reports whether o's file has a mixture of experts for its
// feed-forward: every qwen3moe file, and llama files with Experts set.
func (o *Options) hasExperts() bool {
	return o.Arch == moeArch || o.Arch == "llama" && o.Experts > 0
}

// experts are the file's experts, those each token uses and an expert's
// feed-forward width, defaults filled in: ExpertFF 0 is FF / ExpertsUsed,
// llama.cpp's fallback for a qwen3moe file without
// expert_feed_forward_length; a llama file's experts are FF wide, as
// llama.cpp reads them (Mixtral's converter writes the experts'
// intermediate_size as feed_forward_length).
func (o *Options) experts() (n, used, ff int) {
	n, used, ff = o.Experts, o.ExpertsUsed, o.ExpertFF
	if n == 0 {
		n = defaultExperts
	}
	if used == 0 {
		used = min(defaultExpertsUsed, n)
	}
	switch {
	case o.Arch == "llama":
		ff = o.FF
	case ff == 0:
		ff = o.FF / used
	}
	return n, used, ff
}

// checkMoE reports expert options that make no file llama.cpp loads, or
// that a file of another architecture would ignore.
func (o *Options) checkMoE() error {
	switch {
	case o.Arch == "llama" && o.ExpertFF != 0:
		return fmt.Errorf("-expert-ff: a llama file's experts are -ff wide (llama.cpp reads feed_forward_length for them)")
	case o.Arch == "llama" && o.Experts == 0 && o.ExpertsUsed != 0:
		return fmt.Errorf("-experts-used %d: a llama file has experts only with -experts", o.ExpertsUsed)
	case !o.hasExperts():
		if o.Experts != 0 || o.ExpertsUsed != 0 || o.ExpertFF != 0 {
			return fmt.Errorf("-experts, -experts-used and -expert-ff: only %s and llama files have experts, not %s", moeArch, o.Arch)
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
	}
	return nil
}

// moeMeta is a file's metadata of its experts: a llama file's states
// no width of their own, as Mixtral's converter writes it.
func (o *Options) moeMeta() []gguf.KV {
	if !o.hasExperts() {
		return nil
	}
	n, used, ff := o.experts()
	p := o.Arch + "."
	kv := []gguf.KV{
		{Key: p + "expert_count", Value: uint32(n)},
		{Key: p + "expert_used_count", Value: uint32(used)},
	}
	if o.Arch == moeArch {
		kv = append(kv, gguf.KV{Key: p + "expert_feed_forward_length", Value: uint32(ff)})
	}
	return kv
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
