package ir

import (
	"math"
	"testing"
)

func TestCheckedOps(t *testing.T) {
	const max, min = math.MaxInt64, math.MinInt64
	for _, tc := range []struct {
		op   ExprOp
		x, y int64
		ok   bool
	}{
		{ExprAdd, max, 1, false}, {ExprAdd, max, 0, true}, {ExprAdd, min, -1, false}, {ExprAdd, -5, 3, true},
		{ExprSub, min, 1, false}, {ExprSub, 0, min, false}, {ExprSub, max, -1, false}, {ExprSub, -1, max, true},
		{ExprMul, 1 << 32, 1 << 31, false}, {ExprMul, 1 << 31, 1 << 31, true}, {ExprMul, min, -1, false},
		{ExprMul, -1, min, false}, {ExprMul, 3037000500, 3037000500, false}, {ExprMul, 0, min, true},
		{ExprDiv, 1, 0, false}, {ExprDiv, min, -1, false}, {ExprMod, 1, 0, false}, {ExprDiv, min, 1, true},
	} {
		if _, ok := checkedOp(tc.op, tc.x, tc.y); ok != tc.ok {
			t.Errorf("%d %s %d: ok = %v, want %v", tc.x, exprOpSyms[tc.op], tc.y, ok, tc.ok)
		}
	}
}

// TestOverflowIsNeverFolded: an overflowing constant stays an expression
// that Range rejects, never a wrapped constant.
func TestOverflowIsNeverFolded(t *testing.T) {
	e := Mul(Const(1<<32), Const(1<<32))
	if _, c := e.Constant(); c {
		t.Fatalf("folded to %s", e)
	}
	if _, _, err := Add(e, Const(1)).Range(); err == nil || err.Error() != "4294967296 * 4294967296 overflows int64" {
		t.Errorf("got %v", err)
	}
	n := &Dim{Name: "n", Bound: 1 << 62, Bounded: true}
	if _, _, err := Mul(DimRef(n), Const(4)).Range(); err == nil || err.Error() != "n * 4 overflows int64 for some values of its dims within their bounds" {
		t.Errorf("got %v", err)
	}
	m := &Dim{Name: "m", Bound: 8, Bounded: true}
	if _, _, err := Binary(ExprDiv, Const(16), Sub(DimRef(m), Const(4))).Range(); err == nil || err.Error() != "16 / (m - 4) may divide by zero for some values of its dims within their bounds" {
		t.Errorf("got %v", err)
	}
	if v := SumBytes(math.MaxInt64, 1); v != math.MaxInt64 {
		t.Errorf("SumBytes wrapped to %d", v)
	}
}

func TestMultiple(t *testing.T) {
	n := &Dim{Name: "n", Bound: 8, Bounded: true}
	for _, tc := range []struct {
		e    *Expr
		want int64
	}{
		{Mul(Const(4), DimRef(n)), 4},
		{Add(Mul(Const(8), DimRef(n)), Const(12)), 4},
		{Add(Mul(Const(4), DimRef(n)), Const(3)), 1},
		{Mul(Const(2), Sub(DimRef(n), Const(1))), 2},
		{Const(0), 0},
		{Binary(ExprDiv, DimRef(n), Const(2)), 1},
	} {
		if got := tc.e.Multiple(); got != tc.want {
			t.Errorf("Multiple(%s) = %d, want %d", tc.e, got, tc.want)
		}
	}
}
