package ir

import (
	"fmt"
	"math"
)

// ByteLimit is the most bytes one tensor, or one planned buffer, may span:
// 1 TiB. It is far above any single tensor of today's models (a 405B
// model's largest f16 weight is about 4 GiB) and above the memory of any
// one accelerator, so no real model meets it; and it leaves a factor of
// 2^23 below int64's range, so that the planner's and the generated code's
// sums of sizes and offsets over up to eight million tensors cannot wrap.
// Every size graphc computes is checked against it at compile time.
const ByteLimit = 1 << 40

// Sizes, strides and offsets are int64 computed with the checked helpers
// below: an overflow is never a wrapped value, it is ok == false, which
// the caller turns into a positioned error (lowering) or a BUG panic (past
// lowering, where every expression has been checked).

// CheckedAdd, CheckedSub and CheckedMul are x op y, or ok == false when it
// overflows int64.
func CheckedAdd(x, y int64) (int64, bool) {
	s := x + y
	return s, (s > x) == (y > 0)
}

func CheckedSub(x, y int64) (int64, bool) {
	d := x - y
	return d, (d < x) == (y > 0)
}

func CheckedMul(x, y int64) (int64, bool) {
	if x == 0 || y == 0 {
		return 0, true
	}
	p := x * y
	if p/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
		return 0, false
	}
	return p, true
}

// checkedOp is x op y, or ok == false when it overflows int64 or divides by
// zero.
func checkedOp(op ExprOp, x, y int64) (int64, bool) {
	switch op {
	case ExprAdd:
		return CheckedAdd(x, y)
	case ExprSub:
		return CheckedSub(x, y)
	case ExprMul:
		return CheckedMul(x, y)
	case ExprDiv, ExprMod:
		if y == 0 || (x == math.MinInt64 && y == -1) {
			return 0, false
		}
		if op == ExprDiv {
			return x / y, true
		}
		return x % y, true
	}
	panic(fmt.Sprintf("BUG: checkedOp %d", op))
}

// SumBytes adds non-negative byte counts, saturating at math.MaxInt64:
// with only additions of non-negative terms a saturated sum is still an
// upper bound, so comparing it against a limit stays sound.
func SumBytes(sizes ...int64) int64 {
	var total int64
	for _, n := range sizes {
		if n < 0 {
			panic(fmt.Sprintf("BUG: SumBytes of a negative size %d", n))
		}
		s, ok := CheckedAdd(total, n)
		if !ok {
			return math.MaxInt64
		}
		total = s
	}
	return total
}

// RangeError says why an expression has no int64 range over the values of
// its dims: Sub, one of its sub-expressions, overflows int64 or may divide
// by zero.
type RangeError struct {
	Sub       *Expr
	DivByZero bool
}

func (e *RangeError) Error() string {
	what := "overflows int64"
	if e.DivByZero {
		what = "may divide by zero"
	}
	if len(e.Sub.Dims(nil)) > 0 {
		what += " for some values of its dims within their bounds"
	}
	return fmt.Sprintf("%s %s", e.Sub, what)
}
