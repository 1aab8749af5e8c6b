package passes_test

import (
	"testing"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

func TestPlanRegions(t *testing.T) {
	runGolden(t, "plan_regions", []goldenCase{{
		name: "attention",
		doc:  "The attention block cuts into two regions over its 8 tokens: the product kq reads the K cache the first region's copy writes, so a barrier comes before it.",
		opts: caseOptions{Backends: []string{"cpu"}, Regions: true},
		build: func(b *builder) {
			attention(b, "", "")
		},
	}, {
		name: "off",
		doc:  "Without the option there are no regions (ggml's one barrier per node).",
		opts: caseOptions{Backends: []string{"cpu"}},
		build: func(b *builder) {
			attention(b, "", "")
		},
	}, {
		name: "cpu_split_only",
		doc:  "Only the CPU runs parts: layer 0 on the GPU has no region, layers 1 and 2 on the CPU one together, reading the copy of the GPU's result whole.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}, Regions: true},
		build: func(b *builder) {
			mlp(b, "gpu", "", 32, 4)
		},
	}, {
		name: "broadcast_and_reshape",
		doc:  "A bias repeated over the tokens is read whole, a reshape and a copy between shapes keep each token's elements in its part.",
		opts: caseOptions{Backends: []string{"cpu"}, Regions: true},
		build: func(b *builder) {
			x := b.input("x", tensor.F32, 64, 6)
			h := b.mulMat("mm", b.weight("", "w", 64, 64), x)
			h = b.add("biased", h, b.weight("", "bias", 64))
			h = b.op(ops.Reshape, "h_3d", ir.Args{Ne: dims([]int64{16, 4, 6})}, h)
			h = b.unary(ops.Silu, "act", h)
			b.out(b.op(ops.Cont, "flat", ir.Args{Ne: dims([]int64{64 * 6})}, h))
		},
	}, {
		name: "large_weight",
		doc:  "A 4 MiB weight would be read by every part: its product stays out of regions and splits its rows over the threads; the small nodes after it form one.",
		opts: caseOptions{Backends: []string{"cpu"}, Regions: true},
		build: func(b *builder) {
			x := b.input("x", tensor.F32, 1024, 4)
			h := b.mulMat("mm", b.weight("", "w", 1024, 1024), x)
			h = b.add("biased", h, b.weight("", "bias", 1024))
			b.out(b.unary(ops.Silu, "act", h))
		},
	}, {
		name: "uncuttable",
		doc:  "A softmax over the tokens' axis (dim 0) cannot be cut: it ends the region before it, and the single node after it is not worth a region.",
		opts: caseOptions{Backends: []string{"cpu"}, Regions: true},
		build: func(b *builder) {
			x := b.input("x", tensor.F32, 64, 4)
			h := b.mulMat("mm", b.weight("", "w", 64, 64), x)
			h = b.unary(ops.Silu, "act", h)
			h = b.op(ops.Transpose, "ht", ir.Args{}, h)
			h = b.op(ops.Cont, "ht_cont", ir.Args{}, h)
			b.out(b.op(ops.SoftMax, "over_tokens", ir.Args{Params: ops.SoftMaxParams{Scale: 1}}, h))
		},
	}})
}
