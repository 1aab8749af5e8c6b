package ir

import (
	"fmt"
	"math"
	"strconv"
)

// Dim is a named size. A constant dim has Bound == Value and !Bounded; a
// bounded dim takes its value at run time, anywhere in [0, Bound].
type Dim struct {
	Name    string
	Bound   int64
	Bounded bool
	// AtMost is the bounded dim whose value, in each evaluation, bounds
	// this one's (dim n_outputs <= n_tokens); Bound is then AtMost's.
	AtMost *Dim
	Pos    Pos
}

// ExprOp is the operator of an Expr node.
type ExprOp uint8

const (
	ExprConst ExprOp = iota
	ExprDim
	ExprAdd
	ExprSub
	ExprMul
	ExprDiv
	ExprMod
)

var exprOpSyms = [...]string{ExprAdd: "+", ExprSub: "-", ExprMul: "*", ExprDiv: "/", ExprMod: "%"}

// Expr is an integer expression over bounded dims: a tensor size, stride or
// view offset. Constant sub-expressions are folded on construction, so an
// Expr over constant dims only is always a single ExprConst. Exprs are
// immutable and may be shared.
type Expr struct {
	Op   ExprOp
	Val  int64 // ExprConst
	Dim  *Dim  // ExprDim
	X, Y *Expr // binary ops
}

// Const returns the constant expression v.
func Const(v int64) *Expr { return &Expr{Op: ExprConst, Val: v} }

// DimRef returns an expression for d: its value for a constant dim.
func DimRef(d *Dim) *Expr {
	if !d.Bounded {
		return Const(d.Bound)
	}
	return &Expr{Op: ExprDim, Dim: d}
}

// Binary builds x op y, folding constants and trivial identities. Constants
// whose x op y overflows int64 or divides by zero are left unfolded: the
// result has no Constant value and Range reports the overflow.
func Binary(op ExprOp, x, y *Expr) *Expr {
	if x.Op == ExprConst && y.Op == ExprConst {
		if v, ok := checkedOp(op, x.Val, y.Val); ok {
			return Const(v)
		}
		return &Expr{Op: op, X: x, Y: y}
	}
	switch {
	case op == ExprAdd && x.isConst(0):
		return y
	case (op == ExprAdd || op == ExprSub) && y.isConst(0):
		return x
	case op == ExprMul && (x.isConst(0) || y.isConst(0)):
		return Const(0)
	case op == ExprMul && x.isConst(1):
		return y
	case (op == ExprMul || op == ExprDiv) && y.isConst(1):
		return x
	}
	return &Expr{Op: op, X: x, Y: y}
}

func Add(x, y *Expr) *Expr { return Binary(ExprAdd, x, y) }
func Sub(x, y *Expr) *Expr { return Binary(ExprSub, x, y) }
func Mul(x, y *Expr) *Expr { return Binary(ExprMul, x, y) }

func (e *Expr) isConst(v int64) bool { return e.Op == ExprConst && e.Val == v }

// Constant reports the value of e if it does not depend on bounded dims.
func (e *Expr) Constant() (int64, bool) { return e.Val, e.Op == ExprConst }

// Eval computes e with the bounded dims' values given by val, or ok ==
// false when that overflows int64 or divides by zero.
func (e *Expr) Eval(val func(*Dim) int64) (v int64, ok bool) {
	switch e.Op {
	case ExprConst:
		return e.Val, true
	case ExprDim:
		return val(e.Dim), true
	}
	x, ok := e.X.Eval(val)
	if !ok {
		return 0, false
	}
	y, ok := e.Y.Eval(val)
	if !ok {
		return 0, false
	}
	return checkedOp(e.Op, x, y)
}

// AtBounds evaluates e with every bounded dim at its bound: the size ggml's
// reserve step would plan for. Only for checked expressions (see Range).
func (e *Expr) AtBounds() int64 {
	v, ok := e.Eval(func(d *Dim) int64 { return d.Bound })
	if !ok {
		panic(fmt.Sprintf("BUG: %s overflows at the dims' bounds; lowering checks every size", e))
	}
	return v
}

// Range returns lower and upper bounds of e over all dim values in
// [0, Bound], by interval arithmetic (sound, not always tight), or a
// *RangeError when some sub-expression may overflow int64 or divide by
// zero there. When it returns no error, evaluating e for any dim values
// within their bounds cannot overflow either: every intermediate value
// lies in its sub-expression's range.
func (e *Expr) Range() (lo, hi int64, err error) {
	switch e.Op {
	case ExprConst:
		return e.Val, e.Val, nil
	case ExprDim:
		return 0, e.Dim.Bound, nil
	}
	xl, xh, err := e.X.Range()
	if err != nil {
		return 0, 0, err
	}
	yl, yh, err := e.Y.Range()
	if err != nil {
		return 0, 0, err
	}
	overflow := &RangeError{Sub: e}
	switch e.Op {
	case ExprAdd, ExprSub, ExprMul:
		var c [4]int64
		var ok [4]bool
		switch e.Op {
		case ExprAdd:
			c[0], ok[0] = CheckedAdd(xl, yl)
			c[1], ok[1] = CheckedAdd(xh, yh)
			c[2], c[3], ok[2], ok[3] = c[0], c[1], ok[0], ok[1]
		case ExprSub:
			c[0], ok[0] = CheckedSub(xl, yh)
			c[1], ok[1] = CheckedSub(xh, yl)
			c[2], c[3], ok[2], ok[3] = c[0], c[1], ok[0], ok[1]
		case ExprMul:
			c[0], ok[0] = CheckedMul(xl, yl)
			c[1], ok[1] = CheckedMul(xl, yh)
			c[2], ok[2] = CheckedMul(xh, yl)
			c[3], ok[3] = CheckedMul(xh, yh)
		}
		lo, hi = c[0], c[0]
		for i, v := range c {
			if !ok[i] {
				return 0, 0, overflow
			}
			lo, hi = min(lo, v), max(hi, v)
		}
		return lo, hi, nil
	}
	if yl <= 0 && yh >= 0 {
		return 0, 0, &RangeError{Sub: e, DivByZero: true}
	}
	if xl == math.MinInt64 || yl == math.MinInt64 {
		return 0, 0, overflow
	}
	if e.Op == ExprMod && yl > 0 && xl >= 0 {
		return 0, min(xh, yh-1), nil
	}
	// Dividing by a divisor that does not change sign shrinks magnitudes
	// (a remainder is smaller than both operands): |result| <= |x|.
	m := max(-xl, xh)
	if e.Op == ExprDiv && yl > 0 && xl >= 0 {
		return xl / yh, xh / yl, nil
	}
	return -m, m, nil
}

// Max is an upper bound of e over all dim values. Only for checked
// expressions (see Range).
func (e *Expr) Max() int64 {
	_, hi, err := e.Range()
	if err != nil {
		panic(fmt.Sprintf("BUG: %v; lowering checks every size", err))
	}
	return hi
}

// Multiple is a number that divides e for every value of its dims (1 when
// nothing better is known, 0 when e is always 0): what proves a view's
// offset and strides aligned without knowing the dims.
func (e *Expr) Multiple() int64 {
	switch e.Op {
	case ExprConst:
		if e.Val == 0 || e.Val == math.MinInt64 {
			return 0 // divisible by anything; gcd(0, m) = m
		}
		return abs(e.Val)
	case ExprAdd, ExprSub:
		return gcd(e.X.Multiple(), e.Y.Multiple())
	case ExprMul:
		x, y := e.X.Multiple(), e.Y.Multiple()
		if p, ok := CheckedMul(x, y); ok {
			return p
		}
		return max(x, y)
	}
	return 1
}

func gcd(x, y int64) int64 {
	for y != 0 {
		x, y = y, x%y
	}
	return x
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// Equal reports whether x and y are the same function of the dims. Both are
// evaluated at the bounds, at zero and at a few fixed pseudo-random points:
// for the polynomials sizes are made of, agreement everywhere is what this
// checks with overwhelming probability.
func Equal(x, y *Expr) bool {
	if x == y {
		return true
	}
	if xc, ok := x.Constant(); ok {
		if yc, ok := y.Constant(); ok {
			return xc == yc
		}
	}
	for seed := uint64(0); seed < 5; seed++ {
		val := func(d *Dim) int64 {
			switch seed {
			case 0:
				return d.Bound
			case 1:
				return 0
			}
			h := seed*0x9E3779B97F4A7C15 ^ uint64(len(d.Name))*0xBF58476D1CE4E5B9
			for _, c := range d.Name {
				h = (h ^ uint64(c)) * 0x100000001B3
			}
			if d.Bound == 0 {
				return 0
			}
			return int64(h%uint64(d.Bound)) + 1 // in [1, Bound]: Range vouches only for values within bounds
		}
		xv, xok := x.Eval(val)
		yv, yok := y.Eval(val)
		if xok != yok || xv != yv {
			return false
		}
	}
	return true
}

// Dims appends the bounded dims e depends on to out, without duplicates.
func (e *Expr) Dims(out []*Dim) []*Dim {
	switch e.Op {
	case ExprConst:
	case ExprDim:
		for _, d := range out {
			if d == e.Dim {
				return out
			}
		}
		out = append(out, e.Dim)
	default:
		out = e.Y.Dims(e.X.Dims(out))
	}
	return out
}

func prec(op ExprOp) int {
	switch op {
	case ExprAdd, ExprSub:
		return 1
	case ExprMul, ExprDiv, ExprMod:
		return 2
	}
	return 3
}

// String prints e with minimal parentheses, dims by name.
func (e *Expr) String() string { return e.Format(func(d *Dim) string { return d.Name }) }

// Format prints e, naming each dim with name(d); codegen uses it to print
// Go expressions over its own dim variables.
func (e *Expr) Format(name func(*Dim) string) string {
	switch e.Op {
	case ExprConst:
		return strconv.FormatInt(e.Val, 10)
	case ExprDim:
		return name(e.Dim)
	}
	x := e.X.Format(name)
	if prec(e.X.Op) < prec(e.Op) {
		x = "(" + x + ")"
	}
	y := e.Y.Format(name)
	if prec(e.Y.Op) <= prec(e.Op) && e.Y.Op != ExprConst && e.Y.Op != ExprDim {
		y = "(" + y + ")"
	}
	return x + " " + exprOpSyms[e.Op] + " " + y
}
