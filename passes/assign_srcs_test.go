package passes_test

import (
	"testing"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

func TestAssignSrcs(t *testing.T) {
	runGolden(t, "assign_srcs", []goldenCase{{
		name: "views",
		doc:  "Views of computed tensors follow their view source (4.vsrc).",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}},
		build: func(b *builder) {
			attention(b, "gpu", "gpu")
		},
	}, {
		name: "leaf_follows_consumer",
		doc:  "A leaf that is neither a weight nor an input (ggml: a tensor without a buffer) goes where its first consumer is (4.cur).",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}},
		build: func(b *builder) {
			x := b.input("x", tensor.F32, 64, 4)
			h := b.mulMat("mm", b.weight("gpu", "w", 64, 64), x)
			b.out(b.add("biased", h, b.leaf("bias", 64)))
		},
	}, {
		name: "view_of_unplaced_leaf",
		doc:  "A view whose source leaf has no backend yet goes to the first backend that supports it (ggml records 2.sup); the leaf, seen only by the view, keeps none (4.cur from the then unassigned view).",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}},
		build: func(b *builder) {
			l := b.leaf("table", 64, 4)
			v := b.op(ops.Reshape, "table_3d", ir.Args{Ne: dims([]int64{16, 4, 4})}, l)
			b.out(b.unary(ops.Relu, "relu", v))
		},
	}, {
		name: "error_no_backend",
		doc:  "No backend supports gelu.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}, Reject: map[string][]string{"gpu": {"gelu"}, "cpu": {"gelu"}}},
		build: func(b *builder) {
			mlp(b, "gpu", "", 32, 4)
		},
	}})
}
