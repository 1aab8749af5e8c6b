package interp

import (
	"math"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/runtime"
)

// Sizes here are computed with overflow checks: a fuzzed model's shapes
// (f32[4294967296, 4294967296]) wrap int64 in ir.Expr.Eval, and a wrapped
// size would let a huge model pass the budget or place a tensor at a
// negative offset. ok is false once anything overflowed.

func mulOK(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	r := a * b
	if r/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return r, true
}

func addOK(a, b int64) (int64, bool) {
	r := a + b
	if (a > 0 && b > 0 && r < 0) || (a < 0 && b < 0 && r >= 0) {
		return 0, false
	}
	return r, true
}

// evalOK is ir.Expr.Eval with overflow checks; division and remainder by
// zero give 0, as there.
func evalOK(e *ir.Expr, val func(*ir.Dim) int64) (int64, bool) {
	switch e.Op {
	case ir.ExprConst:
		return e.Val, true
	case ir.ExprDim:
		return val(e.Dim), true
	}
	x, ok := evalOK(e.X, val)
	if !ok {
		return 0, false
	}
	y, ok := evalOK(e.Y, val)
	if !ok {
		return 0, false
	}
	switch e.Op {
	case ir.ExprAdd:
		return addOK(x, y)
	case ir.ExprSub:
		if y == math.MinInt64 {
			return 0, false
		}
		return addOK(x, -y)
	case ir.ExprMul:
		return mulOK(x, y)
	case ir.ExprDiv, ir.ExprMod:
		if y == 0 {
			return 0, true
		}
		if x == math.MinInt64 && y == -1 {
			return 0, false
		}
		if e.Op == ir.ExprDiv {
			return x / y, true
		}
		return x % y, true
	}
	return 0, false
}

// evalAll evaluates four expressions with evalOK.
func evalAll(es [4]*ir.Expr, val func(*ir.Dim) int64) (v [4]int64, ok bool) {
	for i, e := range es {
		if v[i], ok = evalOK(e, val); !ok {
			return v, false
		}
	}
	return v, true
}

// elems is the element count of shape ne, 0 if any dim is not positive.
func elems(ne [4]int64) (int64, bool) {
	n := int64(1)
	for _, x := range ne {
		if x <= 0 {
			return 0, true
		}
		var ok bool
		if n, ok = mulOK(n, x); !ok {
			return 0, false
		}
	}
	return n, true
}

// denseBytes is the size of a contiguous tensor of type t and shape ne.
func denseBytes(t runtime.DType, ne [4]int64) (int64, bool) {
	n, ok := elems(ne)
	if !ok {
		return 0, false
	}
	return mulOK(n/int64(t.BlockSize()), int64(t.Size()))
}

// extent is the range of bytes, relative to its first element, that a
// tensor of type t, shape ne and strides nb addresses: [lo, hi), empty
// when a dim is not positive. backwards reports a stride below zero along
// a dim of more than one element, which no kernel supports.
func extent(t runtime.DType, ne, nb [4]int64) (lo, hi int64, backwards, ok bool) {
	if n, _ := elems(ne); n == 0 {
		return 0, 0, false, true
	}
	hi = int64(t.Size())
	for i := range 4 {
		step, ok := mulOK(ne[i]-1, nb[i])
		if !ok {
			return 0, 0, false, false
		}
		if i == 0 && t.BlockSize() > 1 {
			// A block type's row is ne0/blockSize blocks of Size bytes.
			if step, ok = mulOK(ne[0]/int64(t.BlockSize()), nb[0]); !ok {
				return 0, 0, false, false
			}
			hi = 0
		}
		if step < 0 {
			backwards = true
			if lo, ok = addOK(lo, step); !ok {
				return 0, 0, false, false
			}
		} else if hi, ok = addOK(hi, step); !ok {
			return 0, 0, false, false
		}
	}
	return lo, hi, backwards, true
}
