package ir

import (
	"fmt"
	"math"
	"strconv"

	"github.com/graphc/graphc/tensor"
)

// FillExpr computes the deterministic value of an input element from its
// flat index i and coordinates i0..i3, in float64 like the C reference that
// recorded ggml's traces: `fill where(i0 <= kv_head + i1, 0, -inf)`.
type FillExpr struct {
	Op   string // "num", "var", "dim", "neg", "+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "call"
	Num  float64
	Var  string // i, i0, i1, i2, i3
	Dim  *Dim
	Func string // cos, sin, exp, sqrt, where
	Args []*FillExpr
}

// DefaultFill is the fill of inputs that declare none: the conformance
// traces' rule for float inputs (mlp_in, x_in: cos(i*0.013)), zero for
// indices. Generated programs and internal/interp both fill by it, so that
// their runs see the same inputs.
func DefaultFill(t DType) *FillExpr {
	if t == tensor.I32 {
		return &FillExpr{Op: "num"}
	}
	i := &FillExpr{Op: "var", Var: "i"}
	return &FillExpr{Op: "call", Func: "cos", Args: []*FillExpr{{Op: "*", Args: []*FillExpr{i, {Op: "num", Num: 0.013}}}}}
}

// FillFuncs are the functions a fill expression may call, with arity.
var FillFuncs = map[string]int{"cos": 1, "sin": 1, "exp": 1, "sqrt": 1, "where": 3}

// FillVars are the index variables of a fill expression.
var FillVars = []string{"i", "i0", "i1", "i2", "i3"}

// Eval computes the expression for the element at flat index i and
// coordinates idx, with dims valued by dim.
func (f *FillExpr) Eval(i int64, idx [4]int64, dim func(*Dim) int64) float64 {
	switch f.Op {
	case "num":
		return f.Num
	case "var":
		if f.Var == "i" {
			return float64(i)
		}
		return float64(idx[f.Var[1]-'0'])
	case "dim":
		return float64(dim(f.Dim))
	case "neg":
		return -f.Args[0].Eval(i, idx, dim)
	case "call":
		a := make([]float64, len(f.Args))
		for k, x := range f.Args {
			a[k] = x.Eval(i, idx, dim)
		}
		switch f.Func {
		case "cos":
			return math.Cos(a[0])
		case "sin":
			return math.Sin(a[0])
		case "exp":
			return math.Exp(a[0])
		case "sqrt":
			return math.Sqrt(a[0])
		case "where":
			if a[0] != 0 {
				return a[1]
			}
			return a[2]
		}
	}
	x, y := f.Args[0].Eval(i, idx, dim), f.Args[1].Eval(i, idx, dim)
	b := func(c bool) float64 {
		if c {
			return 1
		}
		return 0
	}
	switch f.Op {
	case "+":
		return x + y
	case "-":
		return x - y
	case "*":
		return x * y
	case "/":
		return x / y
	case "%":
		return math.Mod(x, y)
	case "<":
		return b(x < y)
	case "<=":
		return b(x <= y)
	case ">":
		return b(x > y)
	case ">=":
		return b(x >= y)
	case "==":
		return b(x == y)
	case "!=":
		return b(x != y)
	}
	panic(fmt.Sprintf("BUG: fill op %q", f.Op))
}

func (f *FillExpr) String() string {
	switch f.Op {
	case "num":
		if math.IsInf(f.Num, 1) {
			return "inf"
		}
		return strconv.FormatFloat(f.Num, 'g', -1, 64)
	case "var":
		return f.Var
	case "dim":
		return f.Dim.Name
	case "neg":
		return "-" + f.Args[0].String()
	case "call":
		s := f.Func + "("
		for k, a := range f.Args {
			if k > 0 {
				s += ", "
			}
			s += a.String()
		}
		return s + ")"
	}
	return "(" + f.Args[0].String() + " " + f.Op + " " + f.Args[1].String() + ")"
}
