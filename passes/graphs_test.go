package passes_test

import (
	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// Graphs shared by the scheduling passes' golden cases, built like
// llama.cpp builds them with the ggml API (the same shapes as the
// conformance traces, smaller).

// mlp is the traces' 3-layer MLP: layer 0's weights on backend on0, layers
// 1 and 2's on on1 ("" = the last backend), batch tokens of width in.
func mlp(b *builder, on0, on1 string, in, batch int64) {
	x := b.input("mlp_in", tensor.F32, in, batch)
	h := b.mulMat("fc0_mm", b.weight(on0, "fc0.weight", in, 64), x)
	h = b.add("fc0_add", h, b.weight(on0, "fc0.bias", 64))
	h = b.unary(ops.Relu, "fc0_relu", h)
	h = b.mulMat("fc1_mm", b.weight(on1, "fc1.weight", 64, 64), h)
	h = b.add("fc1_add", h, b.weight(on1, "fc1.bias", 64))
	h = b.unary(ops.Gelu, "fc1_gelu", h)
	h = b.mulMat("fc2_mm", b.weight(on1, "fc2.weight", 64, 16), h)
	b.out(b.add("mlp_out", h, b.weight(on1, "fc2.bias", 16)))
}

// attention is one llama decoder attention block over 8 tokens with a
// 16-entry KV cache (kv_head 8), 4 heads of 16: weights on on, the KV
// cache on kv, the token embedding on the last backend. It writes K into
// the cache (a cpy into a view of the state) and reads K and V through
// views of the cache.
func attention(b *builder, on, kv string) {
	const nTok, nKV, kvHead = 8, 16, 8
	tokens := b.input("inp_tokens", tensor.I32, nTok)
	x := b.op(ops.GetRows, "inp_embd", ir.Args{}, b.weight("", "token_embd.weight", 64, 128), tokens)
	n := b.op(ops.RMSNorm, "norm", ir.Args{Params: ops.NormParams{Eps: 1e-5}}, x)
	n = b.op(ops.Mul, "attn_norm", ir.Args{}, n, b.weight(on, "attn_norm.weight", 64))
	pos := b.input("inp_pos", tensor.I32, nTok)
	rope := ops.RopeParams{NDims: 16, FreqBase: 10000, FreqScale: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}

	cacheK := b.state(kv, "cache_k", 64, nKV)
	cacheV := b.state(kv, "cache_v", nKV, 64)
	k := b.mulMat("Kcur", b.weight(on, "attn_k.weight", 64, 64), n)
	k = b.op(ops.Reshape, "Kcur_3d", ir.Args{Ne: dims([]int64{16, 4, nTok})}, k)
	k = b.op(ops.Rope, "Kcur_rope", ir.Args{Params: rope}, k, pos)
	kView := b.op(ops.View, "k_cache_view", ir.Args{Ne: dims([]int64{64 * nTok}), Offset: ir.Const(kvHead * 64 * 2)}, cacheK)
	b.root(b.op(ops.Cpy, "k_cache_cpy", ir.Args{}, k, kView))

	kk := b.op(ops.View, "k", ir.Args{Ne: dims([]int64{16, nKV, 4}), Nb: dims([]int64{128, 32, 2048}), Offset: ir.Const(0)}, cacheK)
	vv := b.op(ops.View, "v", ir.Args{Ne: dims([]int64{nKV, 16, 4}), Nb: dims([]int64{32, 512, 2048}), Offset: ir.Const(0)}, cacheV)
	q := b.mulMat("Qcur", b.weight(on, "attn_q.weight", 64, 64), n)
	q = b.op(ops.Reshape, "Qcur_3d", ir.Args{Ne: dims([]int64{16, 4, nTok})}, q)
	q = b.op(ops.Rope, "Qcur_rope", ir.Args{Params: rope}, q, pos)
	q = b.op(ops.Permute, "q", ir.Args{Params: ops.PermuteParams{Axes: [4]int{0, 2, 1, 3}}}, q)
	kq := b.mulMat("kq", kk, q)
	kq = b.op(ops.SoftMax, "kq_soft_max", ir.Args{Params: ops.SoftMaxParams{Scale: 0.25}}, kq, b.input("KQ_mask", tensor.F32, nKV, nTok))
	kqv := b.mulMat("kqv", vv, kq)
	kqv = b.op(ops.Permute, "kqv_merged", ir.Args{Params: ops.PermuteParams{Axes: [4]int{0, 2, 1, 3}}}, kqv)
	kqv = b.op(ops.Cont, "kqv_merged_cont", ir.Args{Ne: dims([]int64{64, nTok})}, kqv)
	out := b.mulMat("attn_out", b.weight(on, "attn_output.weight", 64, 64), kqv)
	b.out(b.add("ffn_inp", out, x))
}

// moe is llama.cpp's build_moe_ffn over tokens tokens of width 64: the
// router (ffn_gate_inp, on router) scores 8 experts, each token takes its
// 2 best (argsort, a view of its first 2 columns), and runs their SwiGLU
// feed-forwards through mul_mat_id on the experts' weights
// (ffn_{up,gate,down}_exps, [.., .., 8], on exps; "" = the last backend).
func moe(b *builder, router, exps string, tokens int64) {
	const embd, ff, nExpert, nUsed = 64, 32, 8, 2
	x := b.input("ffn_norm", tensor.F32, embd, tokens)
	logits := b.mulMat("ffn_moe_logits", b.weight(router, "blk.0.ffn_gate_inp.weight", embd, nExpert), x)
	probs := b.op(ops.SoftMax, "ffn_moe_probs", ir.Args{}, logits)
	sorted := b.op(ops.ArgSort, "ffn_moe_argsort", ir.Args{Params: ops.ArgSortParams{Order: 1}}, probs)
	topk := b.op(ops.View, "ffn_moe_topk", ir.Args{Ne: dims([]int64{nUsed, tokens}), Nb: dims([]int64{4 * nExpert}), Offset: ir.Const(0)}, sorted)
	cur := b.op(ops.Reshape, "cur_3d", ir.Args{Ne: dims([]int64{embd, 1, tokens})}, x)
	up := b.op(ops.MulMatID, "ffn_moe_up", ir.Args{}, b.weight(exps, "blk.0.ffn_up_exps.weight", embd, ff, nExpert), cur, topk)
	gate := b.op(ops.MulMatID, "ffn_moe_gate", ir.Args{}, b.weight(exps, "blk.0.ffn_gate_exps.weight", embd, ff, nExpert), cur, topk)
	act := b.op(ops.Mul, "ffn_moe_swiglu", ir.Args{}, b.unary(ops.Silu, "ffn_moe_silu", gate), up)
	b.out(b.op(ops.MulMatID, "ffn_moe_down", ir.Args{}, b.weight(exps, "blk.0.ffn_down_exps.weight", ff, embd, nExpert), act, topk))
}
