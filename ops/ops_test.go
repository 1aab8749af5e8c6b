package ops

import (
	"reflect"
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
		if p := info.Params; p != nil {
			checkParams(t, op, p)
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

// checkParams checks op's Params type: a struct of numbers with keys (the
// DSL's keywords), or of arrays given positionally, that round-trips
// through its ggml encoding.
func checkParams(t *testing.T, op Op, p Params) {
	t.Helper()
	if reflect.TypeOf(p).Kind() != reflect.Struct || !reflect.ValueOf(p).IsZero() {
		t.Errorf("op %s: Params %T is not a struct's zero value", op, p)
		return
	}
	keys := map[string]bool{}
	v := Defaults(p)
	for i, f := range Fields(p) {
		kind := reflect.TypeOf(p).Field(i).Type.Kind()
		switch {
		case f.Key != "" && (kind == reflect.Int || kind == reflect.Float32):
			if keys[f.Key] {
				t.Errorf("op %s: two fields of %T have key %q", op, p, f.Key)
			}
			keys[f.Key] = true
			// A distinct value per field, so that the round trip below
			// catches two fields sharing a word.
			v = f.Set(v, float64(3+i))
		case f.Key == "" && kind == reflect.Array:
		default:
			t.Errorf("op %s: %T.%s: want a keyed int or float32, or an array given positionally", op, p, f.Name)
		}
	}
	if Format(v) == "" {
		t.Errorf("op %s: Format(%+v) is empty", op, v)
	}
	if ch, ok := v.(Checker); ok {
		if _, err := ch.Check(); err != nil {
			v = Defaults(p) // the distinct values are not ones the type takes
		}
	}
	if got := v.FromGGML(v.GGML()); !reflect.DeepEqual(got, v) {
		t.Errorf("op %s: %T's ggml encoding does not round-trip: %+v became %+v", op, p, v, got)
	}
}

// TestOpBatchSize pins BatchSize's answer for every op, so that a new row
// gets a decision (ggml-cuda's get_op_batch_size) in its Batch column
// rather than the default by accident.
func TestOpBatchSize(t *testing.T) {
	ne := [4]int64{2, 3, 5, 7}
	rows := ne[1] * ne[2] * ne[3]
	want := map[string]int64{
		"get_rows": 0, "mul_mat": ne[1], "rope": ne[2],
		"add": rows, "sub": rows, "mul": rows, "div": rows, "scale": rows,
		"relu": rows, "gelu": rows, "silu": rows, "tanh": rows, "sigmoid": rows, "rms_norm": rows, "norm": rows,
		"soft_max": rows, "cpy": rows, "cont": rows,
		"view": rows, "reshape": rows, "permute": rows, "transpose": rows,
		"flash_attn_ext": rows, "mul_mat_id": ne[2], "argsort": rows, "top_k": rows, "sum_rows": rows,
	}
	for _, op := range All() {
		w, ok := want[op.String()]
		if !ok {
			t.Errorf("op %s: no expected BatchSize in TestOpBatchSize (ops/ops_test.go); decide its Batch column from ggml-cuda's get_op_batch_size", op)
			continue
		}
		if got := op.BatchSize(ne); got != w {
			t.Errorf("%s.BatchSize(ne %v) = %d, want %d", op, ne, got, w)
		}
		delete(want, op.String())
	}
	for name := range want {
		t.Errorf("TestOpBatchSize expects op %s, which the op table lacks", name)
	}
}
