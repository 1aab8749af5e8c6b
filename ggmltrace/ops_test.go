package ggmltrace

import (
	"testing"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// TestEveryOpImports finds every op by the ggml name and op_params a trace
// records for it, and reads its operands.
func TestEveryOpImports(t *testing.T) {
	g := ir.NewGraph("ops_test")
	src, err := g.NewLeaf(ir.KindInput, "a", tensor.F32, []*ir.Expr{ir.Const(4)}, ir.Pos{})
	if err != nil {
		t.Fatal(err)
	}
	srcName := "a"
	for _, op := range ops.All() {
		t.Run(op.String(), func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Error(r)
				}
			}()
			info := op.Info()
			nt := &Tensor{Name: "x", Op: info.GGML, Ne: [4]int64{4, 1, 1, 1}, ViewSrc: &srcName}
			if info.Unary >= 0 {
				nt.OpParams = []int32{info.Unary} // ggml_unary_impl's op_params[0]
			}
			if got, ok := ops.LookupGGML(nt.Op, nt.opParam(0)); !ok || got != op {
				t.Errorf("a traced GGML_OP_%s (op_params %v) imports as %v, want %s", nt.Op, nt.OpParams, got, op)
			}
			var srcs []*ir.Tensor
			for range info.MaxSrcs {
				srcs = append(srcs, src)
			}
			if _, err := opArgs(op, nt, srcs); err != nil {
				t.Errorf("opArgs: %v", err)
			}
		})
	}
}

// TestTopKImportsK: ggml_top_k stores no op_params, so a traced TOP_K
// node's k is its ne[0].
func TestTopKImportsK(t *testing.T) {
	nt := &Tensor{Name: "ffn_moe_group_topk", Op: "TOP_K", Ne: [4]int64{3, 5, 1, 1}}
	args, err := opArgs(ops.TopK, nt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := args.Params, (ops.TopKParams{K: 3}); got != want {
		t.Errorf("a traced TOP_K [3, 5] imports with %+v, want %+v", got, want)
	}
}
