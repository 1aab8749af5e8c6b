package passes_test

import (
	"testing"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// quantized is a small model with one weight of each kind pack_weights
// tells apart: a tied q8_0 embedding (get_rows and the output's mul_mat),
// a q4_0 and an odd-rowed q4_0 matrix, an f32 matrix, and a q4_0 matrix
// on the first backend (gpu, "" for none).
func quantized(b *builder, gpu string) {
	tokens := b.input("inp_tokens", tensor.I32, 4)
	embd := b.typed("", "token_embd.weight", tensor.Q8_0, 64, 100)
	x := b.op(ops.GetRows, "inp_embd", ir.Args{}, embd, tokens)
	h := b.mulMat("q4", b.typed("", "blk.0.q4.weight", tensor.Q4_0, 64, 64), x)
	h = b.mulMat("f32", b.weight("", "blk.0.f32.weight", 64, 64), h)
	if gpu != "" {
		h = b.mulMat("on_gpu", b.typed(gpu, "blk.0.gpu.weight", tensor.Q4_0, 64, 64), h)
	}
	b.out(b.mulMat("odd", b.typed("", "blk.0.odd.weight", tensor.Q4_0, 64, 20), h))
	b.out(b.mulMat("result_output", embd, h))
}

func TestPackWeights(t *testing.T) {
	runGolden(t, "pack_weights", []goldenCase{{
		name: "quantized",
		doc:  "The CPU packs every q4_0 and q8_0 weight its mul_mats read, the tied embedding too, and each is released once packed: get_rows reads the embedding's rows it picks back from the file. The f32 weight and the one on the GPU stay as they are. The 20-row weight's copy is padded to 32 rows.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}},
		build: func(b *builder) {
			quantized(b, "gpu")
		},
	}, {
		name: "shared",
		doc:  "A packed weight a product on the GPU reads too, through a split input's copy, keeps its memory: it is packed for the CPU's product but not released.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}},
		build: func(b *builder) {
			x := b.input("x", tensor.F32, 64, 4)
			w := b.typed("", "blk.0.shared.weight", tensor.Q4_0, 64, 64)
			h := b.mulMat("on_cpu", w, x)
			b.out(b.on("gpu", b.mulMat("on_gpu", w, h)))
		},
	}, {
		name: "off",
		doc:  "With packing off (-pack=false, set pack_weights = 0) nothing is packed.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}, NoPack: true},
		build: func(b *builder) {
			quantized(b, "gpu")
		},
	}, {
		name: "experts",
		doc:  "A mixture of experts' q4_0 weight, read by mul_mat_id, is packed whole, its experts' matrices one after the other, as ggml's CPU_REPACK takes MUL_MAT_ID.",
		opts: caseOptions{Backends: []string{"cpu"}},
		build: func(b *builder) {
			x := b.input("x", tensor.F32, 64, 1, 3)
			ids := b.input("ids", tensor.I32, 2, 3)
			b.out(b.op(ops.MulMatID, "ffn_moe_up", ir.Args{}, b.typed("", "blk.0.ffn_up_exps.weight", tensor.Q4_0, 64, 32, 4), x, ids))
		},
	}, {
		name: "offloaded",
		doc:  "With op_offload the GPU takes the 32-token products of the CPU's q4_0 weight through a copy: no mul_mat reads the weight itself on the CPU, so it is not packed; the tied embedding's output product stays on the CPU and is.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}, OpOffload: true},
		build: func(b *builder) {
			tokens := b.input("inp_tokens", tensor.I32, 32)
			embd := b.typed("", "token_embd.weight", tensor.Q8_0, 64, 100)
			x := b.op(ops.GetRows, "inp_embd", ir.Args{}, embd, tokens)
			h := b.mulMat("q4", b.typed("", "blk.0.q4.weight", tensor.Q4_0, 64, 64), x)
			b.out(b.on("cpu", b.mulMat("result_output", embd, h)))
		},
	}})
}
