package passes_test

import (
	"testing"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

func TestExpandBackends(t *testing.T) {
	runGolden(t, "expand_backends", []goldenCase{{
		name: "mlp",
		doc:  "The GPU spreads down to fc0_relu (expand gpu down); the CPU only afterwards, to fc1_gelu (expand rest down).",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}},
		build: func(b *builder) {
			mlp(b, "gpu", "", 32, 4)
		},
	}, {
		name: "gpu_up",
		doc:  "A weightless node between a CPU weight op and a GPU weight op is pulled up to the GPU (expand gpu up), not down to the CPU.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}},
		build: func(b *builder) {
			x := b.input("x", tensor.F32, 64, 4)
			h := b.mulMat("cpu_mm", b.weight("", "w0", 64, 64), x)
			h = b.add("residual", h, x)
			b.out(b.mulMat("gpu_mm", b.weight("gpu", "w1", 64, 64), h))
		},
	}, {
		name: "unsupported_left",
		doc:  "The GPU does not support gelu: every sweep passes over it, and with no other candidate it stays unassigned for upgrade_backends.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}, Reject: map[string][]string{"gpu": {"gelu"}}},
		build: func(b *builder) {
			x := b.input("x", tensor.F32, 64, 4)
			h := b.mulMat("mm0", b.weight("gpu", "w0", 64, 64), x)
			h = b.unary(ops.Gelu, "gelu", h)
			h = b.unary(ops.Relu, "relu", h)
			b.out(b.mulMat("mm1", b.weight("gpu", "w1", 64, 64), h))
		},
	}, {
		name: "unsupported_cpu_fallback",
		doc:  "The GPU does not support gelu, which the CPU's expansion then reaches from below (expand rest up).",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}, Reject: map[string][]string{"gpu": {"gelu"}}},
		build: func(b *builder) {
			x := b.input("x", tensor.F32, 64, 4)
			h := b.mulMat("mm0", b.weight("gpu", "w0", 64, 64), x)
			h = b.unary(ops.Gelu, "gelu", h)
			b.out(b.mulMat("mm1", b.weight("", "w1", 64, 64), h))
		},
	}, {
		name: "views_skipped",
		doc:  "View ops are neither assigned nor do they stop the expansion.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}},
		build: func(b *builder) {
			x := b.input("x", tensor.F32, 64, 4)
			h := b.mulMat("mm", b.weight("gpu", "w", 64, 64), x)
			h = b.op(ops.Reshape, "mm_3d", ir.Args{Ne: dims([]int64{16, 4, 4})}, h)
			h = b.op(ops.Permute, "mm_p", ir.Args{Params: ops.PermuteParams{Axes: [4]int{0, 2, 1, 3}}}, h)
			b.out(b.op(ops.Cont, "cont", ir.Args{}, h))
		},
	}})
}
