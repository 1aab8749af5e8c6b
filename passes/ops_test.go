package passes

import (
	"testing"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
)

// TestEveryOpHasRegionRule asks regionRule (computed ops) or viewSlice
// (views) about each op on small constant operands; whether it can be cut
// does not matter, a missing case does.
func TestEveryOpHasRegionRule(t *testing.T) {
	four := [4]*ir.Expr{ir.Const(4), ir.Const(4), ir.Const(1), ir.Const(1)}
	d := ir.Slice{Axis: 1, Per: 1}
	for _, op := range ops.All() {
		t.Run(op.String(), func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Error(r)
				}
			}()
			node := &ir.Tensor{Name: "x", Op: op, Ne: four, Params: ops.Defaults(op.Info().Params)}
			for range op.Info().MaxSrcs {
				node.Src = append(node.Src, &ir.Tensor{Name: "s", Ne: four})
			}
			if op.IsView() {
				viewSlice(node, partOf{slice: d}, ir.Const(4))
			} else {
				regionRule(node, d, ir.Const(4))
			}
		})
	}
}
