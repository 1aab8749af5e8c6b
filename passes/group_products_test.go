package passes_test

import (
	"testing"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// layer is an attention block's products as llamafile orders them: K, an
// op on it, V, Q, a q8_0 product and an f32 one reading the same
// activation, and a second activation read by two q4_0 products (gate and
// up) with an op between them.
func layer(b *builder) {
	tokens := b.input("inp_tokens", tensor.I32, 1)
	embd := b.typed("", "token_embd.weight", tensor.F32, 64, 100)
	x := b.op(ops.GetRows, "attn_norm", ir.Args{}, embd, tokens)
	k := b.mulMat("Kcur", b.typed("", "blk.0.attn_k.weight", tensor.Q4_0, 64, 16), x)
	kk := b.unary(ops.Silu, "k_op", k)
	v := b.mulMat("Vcur", b.typed("", "blk.0.attn_v.weight", tensor.Q4_0, 64, 16), x)
	q := b.mulMat("Qcur", b.typed("", "blk.0.attn_q.weight", tensor.Q4_0, 64, 64), x)
	q8 := b.mulMat("q8", b.typed("", "blk.0.q8.weight", tensor.Q8_0, 64, 64), x)
	f := b.mulMat("f32", b.weight("", "blk.0.f32.weight", 64, 64), x)
	h := b.add("h", b.add("qf", q, f), q8)
	gate := b.mulMat("ffn_gate", b.typed("", "blk.0.ffn_gate.weight", tensor.Q4_0, 64, 32), h)
	silu := b.unary(ops.Silu, "ffn_silu", gate)
	up := b.mulMat("ffn_up", b.typed("", "blk.0.ffn_up.weight", tensor.Q4_0, 64, 32), h)
	b.out(b.add("out", silu, up))
	b.out(kk)
	b.out(v)
}

func TestGroupProducts(t *testing.T) {
	runGolden(t, "group_products", []goldenCase{{
		name:  "layer",
		doc:   "Q, K and V read attn_norm through q4_0 weights the CPU packs: K and V move up next to Q, the first in graph order, and the three run as one call. The q8_0 product (another kernel) and the f32 one (not packed) stay where they are; gate and up, with silu between them, become a group of two.",
		opts:  caseOptions{Backends: []string{"cpu"}},
		build: layer,
	}, {
		name:  "off",
		doc:   "Without packing (-pack=false) nothing is grouped and nothing moves.",
		opts:  caseOptions{Backends: []string{"cpu"}, NoPack: true},
		build: layer,
	}})
}
