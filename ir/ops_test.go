package ir

import (
	"fmt"
	"testing"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// TestEveryOpHasShapeRule builds each op on plain f32 operands: operands
// it rejects are fine, a missing case in NewOp's switch is not.
func TestEveryOpHasShapeRule(t *testing.T) {
	for _, op := range ops.All() {
		t.Run(op.String(), func(t *testing.T) {
			defer failOnPanic(t)
			g := NewGraph("ops_test")
			var srcs []*Tensor
			for i := range op.Info().MaxSrcs {
				leaf, err := g.NewLeaf(KindInput, fmt.Sprint("s", i), tensor.F32, []*Expr{Const(4), Const(4)}, Pos{})
				if err != nil {
					t.Fatal(err)
				}
				srcs = append(srcs, leaf)
			}
			args := Args{Ne: []*Expr{Const(16)}, Offset: Const(0)}
			if op == ops.Permute {
				args.Params = ops.PermuteParams{Axes: [4]int{0, 1, 2, 3}}
			}
			g.NewOp(op, "x", srcs, args, Pos{})
		})
	}
}

func TestEveryOpFormats(t *testing.T) {
	for _, op := range ops.All() {
		t.Run(op.String(), func(t *testing.T) {
			defer failOnPanic(t)
			(&Tensor{Op: op, Params: op.Info().Params}).paramString()
		})
	}
}

func failOnPanic(t *testing.T) {
	if r := recover(); r != nil {
		t.Error(r)
	}
}
