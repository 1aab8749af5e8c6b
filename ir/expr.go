package ir

import (
	"fmt"
	"strconv"
)

// Dim is a named size. A constant dim has Bound == Value and !Bounded; a
// bounded dim takes its value at run time, anywhere in [0, Bound].
type Dim struct {
	Name    string
	Bound   int64
	Bounded bool
	Pos     Pos
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

// Binary builds x op y, folding constants and trivial identities.
func Binary(op ExprOp, x, y *Expr) *Expr {
	if x.Op == ExprConst && y.Op == ExprConst {
		if (op == ExprDiv || op == ExprMod) && y.Val == 0 {
			return &Expr{Op: op, X: x, Y: y}
		}
		return Const(evalOp(op, x.Val, y.Val))
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

func evalOp(op ExprOp, x, y int64) int64 {
	switch op {
	case ExprAdd:
		return x + y
	case ExprSub:
		return x - y
	case ExprMul:
		return x * y
	case ExprDiv:
		if y == 0 {
			return 0
		}
		return x / y
	case ExprMod:
		if y == 0 {
			return 0
		}
		return x % y
	}
	panic(fmt.Sprintf("BUG: evalOp %d", op))
}

// Eval computes e with the bounded dims' values given by val.
func (e *Expr) Eval(val func(*Dim) int64) int64 {
	switch e.Op {
	case ExprConst:
		return e.Val
	case ExprDim:
		return val(e.Dim)
	}
	return evalOp(e.Op, e.X.Eval(val), e.Y.Eval(val))
}

// AtBounds evaluates e with every bounded dim at its bound: the size ggml's
// reserve step would plan for.
func (e *Expr) AtBounds() int64 { return e.Eval(func(d *Dim) int64 { return d.Bound }) }

// Range returns lower and upper bounds of e over all dim values in
// [0, Bound], by interval arithmetic (sound, not always tight).
func (e *Expr) Range() (lo, hi int64) {
	switch e.Op {
	case ExprConst:
		return e.Val, e.Val
	case ExprDim:
		return 0, e.Dim.Bound
	}
	xl, xh := e.X.Range()
	yl, yh := e.Y.Range()
	switch e.Op {
	case ExprAdd:
		return xl + yl, xh + yh
	case ExprSub:
		return xl - yh, xh - yl
	case ExprMul:
		c := [4]int64{xl * yl, xl * yh, xh * yl, xh * yh}
		lo, hi = c[0], c[0]
		for _, v := range c[1:] {
			lo, hi = min(lo, v), max(hi, v)
		}
		return lo, hi
	case ExprDiv:
		if yl > 0 && xl >= 0 {
			return xl / yh, xh / yl
		}
	case ExprMod:
		if yl > 0 && xl >= 0 {
			return 0, min(xh, yh-1)
		}
	}
	// Unknown sign or a possible zero divisor: be conservative.
	m := max(abs(xl), abs(xh), abs(yl), abs(yh))
	return -m, m
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// Max is an upper bound of e over all dim values.
func (e *Expr) Max() int64 { _, hi := e.Range(); return hi }

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
			return int64(h%uint64(d.Bound+1)) + 1
		}
		if x.Eval(val) != y.Eval(val) {
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
