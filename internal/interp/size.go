package interp

import (
	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/tensor"
)

// Sizes here are computed with overflow checks (ir's): a fuzzed model's
// shapes must not wrap into a size that passes the budget or a tensor
// placed at a negative offset. ok is false once anything overflowed.

// evalAll evaluates four expressions, checked.
func evalAll(es [4]*ir.Expr, val func(*ir.Dim) int64) (v [4]int64, ok bool) {
	for i, e := range es {
		if v[i], ok = e.Eval(val); !ok {
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
		if n, ok = ir.CheckedMul(n, x); !ok {
			return 0, false
		}
	}
	return n, true
}

// denseBytes is the size of a contiguous tensor of type t and shape ne.
func denseBytes(t tensor.DType, ne [4]int64) (int64, bool) {
	n, ok := elems(ne)
	if !ok {
		return 0, false
	}
	return ir.CheckedMul(n/int64(t.BlockSize()), int64(t.Size()))
}

// extent is the range of bytes, relative to its first element, that a
// tensor of type t, shape ne and strides nb addresses: [lo, hi), empty
// when a dim is not positive. backwards reports a stride below zero along
// a dim of more than one element, which no kernel supports.
func extent(t tensor.DType, ne, nb [4]int64) (lo, hi int64, backwards, ok bool) {
	if n, _ := elems(ne); n == 0 {
		return 0, 0, false, true
	}
	hi = int64(t.Size())
	for i := range 4 {
		step, ok := ir.CheckedMul(ne[i]-1, nb[i])
		if !ok {
			return 0, 0, false, false
		}
		if i == 0 && t.BlockSize() > 1 {
			// A block type's row is ne0/blockSize blocks of Size bytes.
			if step, ok = ir.CheckedMul(ne[0]/int64(t.BlockSize()), nb[0]); !ok {
				return 0, 0, false, false
			}
			hi = 0
		}
		if step < 0 {
			backwards = true
			if lo, ok = ir.CheckedAdd(lo, step); !ok {
				return 0, 0, false, false
			}
		} else if hi, ok = ir.CheckedAdd(hi, step); !ok {
			return 0, 0, false, false
		}
	}
	return lo, hi, backwards, true
}
