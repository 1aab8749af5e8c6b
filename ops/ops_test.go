package ops

import (
	"testing"
)

func TestOpTable(t *testing.T) {
	for _, op := range All() {
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
		if got, ok := Lookup(info.Name); !ok || got != op {
			t.Errorf("Lookup(%s)", info.Name)
		}
		if got, ok := LookupGGML(info.GGML, info.Unary); !ok || got != op {
			t.Errorf("LookupGGML(%s, %d) = %v", info.GGML, info.Unary, got)
		}
	}
}

// TestGGMLNumbers checks the table's ggml numbering for what can be
// checked without ggml.h: in range, one number per name, and no number
// (for UNARY: sub-op) given to two ops.
func TestGGMLNumbers(t *testing.T) {
	byNumber := map[[2]int]Op{}
	nameOf := map[int]string{}
	for op := None; op < numOps; op++ {
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
