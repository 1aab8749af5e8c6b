package passes_test

import (
	"testing"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

func TestUpgradeBackends(t *testing.T) {
	runGolden(t, "upgrade_backends", []goldenCase{{
		name: "blas",
		doc:  "A big CPU matmul moves to BLAS, which shares the CPU's buffer type (3.upg); a small one stays; so does one reading a GPU tensor, which BLAS cannot read. (BLAS counts as a GPU for the expansion: it is not the last backend.)",
		opts: caseOptions{Backends: []string{"gpu", "blas", "cpu"}},
		build: func(b *builder) {
			x := b.input("x_in", tensor.F32, 64, 32)
			gpu := b.mulMat("gpu_mm", b.weight("gpu", "w_gpu", 64, 64), x)
			b.out(b.add("gpu_add", gpu, b.weight("", "b_cpu", 64)))
			h := b.mulMat("mm0", b.weight("", "w0", 64, 64), x)
			h = b.add("add0", h, b.weight("", "b0", 64))
			h = b.unary(ops.Relu, "relu0", h)
			b.out(b.mulMat("gram", h, h))
			b.out(b.mulMat("small", b.op(ops.View, "relu0_head", ir.Args{Ne: dims([]int64{64, 8}), Offset: ir.Const(0)}, h), h))
			b.out(b.mulMat("cross", gpu, h))
		},
	}, {
		name: "best",
		doc:  "gelu, which the GPU does not support, goes to the backend that reads most of its placed sources in place (3.best): only the CPU supports it.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}, Reject: map[string][]string{"gpu": {"gelu"}}},
		build: func(b *builder) {
			x := b.input("x", tensor.F32, 64, 4)
			h := b.mulMat("mm0", b.weight("gpu", "w0", 64, 64), x)
			h = b.unary(ops.Gelu, "gelu", h)
			h = b.unary(ops.Relu, "relu", h)
			b.out(b.mulMat("mm1", b.weight("gpu", "w1", 64, 64), h))
		},
	}, {
		name: "best_ties",
		doc:  "mix reads a GPU tensor and a host input: an integrated GPU (uma, reads host memory) and the CPU each read one in place; the tie goes to the higher priority (3.best). more_host then goes to uma too: it reads both of its sources in place, the CPU only x.",
		opts: caseOptions{Backends: []string{"gpu", "uma", "cpu"}, Reject: map[string][]string{"gpu": {"mix", "more_host"}}},
		build: func(b *builder) {
			x := b.input("x", tensor.F32, 64, 4)
			h := b.mulMat("mm0", b.weight("gpu", "w0", 64, 64), x)
			m := b.add("mix", h, x)
			b.out(b.add("more_host", m, x))
		},
	}})
}
