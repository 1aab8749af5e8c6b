package ir

import (
	"fmt"
	"testing"

	"github.com/graphc/graphc/runtime"
)

func TestOpTable(t *testing.T) {
	for _, op := range Ops() {
		info := op.Info()
		if info.Name == "" || info.GGML == "" || info.Doc == "" || info.MinSrcs > info.MaxSrcs {
			t.Errorf("op %d: incomplete row %+v", op, info)
		}
		if (info.Kernel == "") != op.IsView() {
			t.Errorf("op %s: kernel %q, but only views (which compute nothing) have none", op, info.Kernel)
		}
		for _, p := range info.Params {
			if p.Key == "" || p.Field == 0 {
				t.Errorf("op %s: incomplete parameter %+v", op, p)
			}
			if p.Field == ParamAxes && info.Kernel != "" {
				t.Errorf("op %s: parameter %s has no kernel-argument form, but the op has kernel %s", op, p.Key, info.Kernel)
			}
		}
		if got, ok := LookupOp(info.Name); !ok || got != op {
			t.Errorf("LookupOp(%s)", info.Name)
		}
		if got, ok := LookupGGMLOp(info.GGML, info.Unary); !ok || got != op {
			t.Errorf("LookupGGMLOp(%s, %d) = %v", info.GGML, info.Unary, got)
		}
	}
}

// TestGGMLNumbers checks the table's ggml numbering for what can be
// checked without ggml.h: in range, one number per name, and no number
// (for UNARY: sub-op) given to two ops.
func TestGGMLNumbers(t *testing.T) {
	byNumber := map[[2]int]Op{}
	nameOf := map[int]string{}
	for op := OpNone; op < numOps; op++ {
		info := op.Info()
		if info.GGMLOp < 0 || info.GGMLOp >= GGMLOpCount {
			t.Errorf("op %s: GGML_OP_%s = %d, want 0 ≤ n < GGML_OP_COUNT = %d", op, info.GGML, info.GGMLOp, GGMLOpCount)
		}
		if (info.GGML == "UNARY") != (info.Unary >= 0) {
			t.Errorf("op %s: GGML_OP_%s with unary sub-op %d: only UNARY ops have one", op, info.GGML, info.Unary)
		}
		if info.Unary >= GGMLUnaryOpCount {
			t.Errorf("op %s: unary sub-op %d, want < GGML_UNARY_OP_COUNT = %d", op, info.Unary, GGMLUnaryOpCount)
		}
		if name, ok := nameOf[info.GGMLOp]; ok && name != info.GGML {
			t.Errorf("op %s: GGML_OP_%s = %d, which is GGML_OP_%s's number", op, info.GGML, info.GGMLOp, name)
		}
		nameOf[info.GGMLOp] = info.GGML
		key := [2]int{info.GGMLOp, int(info.Unary)}
		if other, ok := byNumber[key]; ok {
			t.Errorf("ops %s and %s have the same ggml number %d (unary %d)", other, op, info.GGMLOp, info.Unary)
		}
		byNumber[key] = op
	}
}

// TestEveryOpHasShapeRule builds each op on plain f32 operands: operands
// it rejects are fine, a missing case in NewOp's switch is not.
func TestEveryOpHasShapeRule(t *testing.T) {
	for _, op := range Ops() {
		t.Run(op.String(), func(t *testing.T) {
			defer failOnPanic(t)
			g := NewGraph("ops_test")
			var srcs []*Tensor
			for i := range op.Info().MaxSrcs {
				leaf, err := g.NewLeaf(KindInput, fmt.Sprint("s", i), runtime.F32, []*Expr{Const(4), Const(4)}, Pos{})
				if err != nil {
					t.Fatal(err)
				}
				srcs = append(srcs, leaf)
			}
			args := Args{Ne: []*Expr{Const(16)}, Offset: Const(0), Params: Params{Axes: [4]int{0, 1, 2, 3}}}
			g.NewOp(op, "x", srcs, args, Pos{})
		})
	}
}

func TestEveryOpFormats(t *testing.T) {
	for _, op := range Ops() {
		t.Run(op.String(), func(t *testing.T) {
			defer failOnPanic(t)
			(&Tensor{Op: op}).paramString()
		})
	}
}

func failOnPanic(t *testing.T) {
	if r := recover(); r != nil {
		t.Error(r)
	}
}
