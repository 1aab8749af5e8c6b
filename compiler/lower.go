package compiler

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"

	"github.com/graphc/graphc/dsl"
	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// Settings are what a model file says about its target: the `backends`
// list, `place` rules and `set` options.
type Settings struct {
	Backends []string
	Places   []Override
	Options  map[string]int64
}

// Lower turns a checked DSL file into an ir.Graph in ggml's node order, and
// returns the file's settings. Loops are unrolled, names interpolated,
// calls turned into ops with inferred shapes. weightTypes, when not nil,
// overrides the element type of the weights it names: the types of the
// weights file the model is compiled for (f32 declared, q8_0 in the file).
// file, when not nil, is the weights file compiled for: meta(…) reads its
// metadata, and a weight declared with `or` that it lacks is the other
// weight. flags are the values of the model's flag(…)s the command line
// gives (-ctx 4096: "ctx" = 4096); one the model does not read is an
// error. Every problem is reported, positioned, in one dsl.ErrorList.
func Lower(f *dsl.File, weightTypes map[string]tensor.DType, file *WeightsFile, flags map[string]int64) (*ir.Graph, *Settings, error) {
	l := &lowerer{
		weightTypes: weightTypes,
		file:        file,
		flags:       flags,
		flagsRead:   map[string]bool{},
		params:      map[string]float64{},
		metaIndex:   map[string]int{},
		g:           ir.NewGraph(f.Pos.Filename),
		dims:        map[string]*ir.Dim{},
		scope:       map[string]*ir.Tensor{},
		failed:      map[string]bool{},
		absent:      map[string]bool{},
		loops:       map[string]int64{},
		used:        map[string]int{},
		outputs:     map[*ir.Tensor]bool{},
		budget:      maxUnrolled,
		settings:    &Settings{Options: map[string]int64{}},
	}
	l.stmts(f.Stmts)
	l.unreadTensors(f)
	for _, name := range sortedKeys(flags) {
		if !l.flagsRead[name] {
			l.errs = append(l.errs, &dsl.Error{Pos: f.Pos, EndPos: f.Pos, Msg: fmt.Sprintf("-%s: the model has no flag(%q, …) to set", name, name)})
		}
	}
	if len(l.errs) > 0 {
		l.errs.Sort()
		return nil, nil, l.errs
	}
	if len(l.g.Outputs) == 0 && len(l.errs) == 0 {
		return nil, nil, dsl.ErrorList{{Pos: f.Pos, EndPos: f.Pos, Msg: "the model has no output: mark one with `output NAME` or `output NAME = …`"}}
	}
	return l.g, l.settings, nil
}

type lowerer struct {
	g        *ir.Graph
	errs     dsl.ErrorList
	dims     map[string]*ir.Dim
	scope    map[string]*ir.Tensor // current binding of each tensor name
	failed   map[string]bool       // names whose definition had errors: uses stay quiet
	absent   map[string]bool       // optional weights (`or none`) the file lacks: only optional operands may name them
	loops    map[string]int64      // loop variables' current values
	loopVals []int64               // enclosing loops' values, outermost first
	used     map[string]int        // ir tensor names handed out
	outputs  map[*ir.Tensor]bool
	settings *Settings
	budget   int // statements left to unroll

	weightTypes map[string]tensor.DType
	file        *WeightsFile
	params      map[string]float64
	metaIndex   map[string]int // key → index in g.Meta
	flags       map[string]int64
	flagsRead   map[string]bool
	unrecorded  bool // meta(…) values read now are not the plan's (a flag's max)
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// maxUnrolled bounds the statements loops may unroll to, so a typo like
// 0..100000000 is an error, not a hang.
const maxUnrolled = 1 << 20

func (l *lowerer) errorf(n dsl.Node, format string, a ...any) {
	l.errs = append(l.errs, &dsl.Error{Pos: n.Position(), EndPos: n.End(), Msg: fmt.Sprintf(format, a...)})
}

func pos(p lexer.Position) ir.Pos { return ir.Pos{File: p.Filename, Line: p.Line, Col: p.Column} }

// resolve substitutes the enclosing loops' values into a name.
func (l *lowerer) resolve(n *dsl.Name) string {
	var b strings.Builder
	for _, p := range n.Parts {
		if p.Var == "" {
			b.WriteString(p.Lit)
		} else {
			b.WriteString(strconv.FormatInt(l.loops[p.Var], 10))
		}
	}
	return b.String()
}

func interpolated(n *dsl.Name) bool {
	for _, p := range n.Parts {
		if p.Var != "" {
			return true
		}
	}
	return false
}

// tensorName picks the unique ir name of a computed tensor bound to base.
// Inside loops a plain name gets ggml's "-<layer>" suffix ("norm-0").
func (l *lowerer) tensorName(base string, suffixLoops bool) string {
	if suffixLoops {
		for _, v := range l.loopVals {
			base += "-" + strconv.FormatInt(v, 10)
		}
	}
	n := l.used[base]
	l.used[base] = n + 1
	if n == 0 {
		return base
	}
	return fmt.Sprintf("%s#%d", base, n+1)
}

func (l *lowerer) stmts(stmts []dsl.Stmt) {
	for _, s := range stmts {
		if l.budget--; l.budget < 0 {
			if l.budget == -1 {
				l.errorf(s, "the model unrolls to more than %d statements", maxUnrolled)
			}
			return
		}
		l.stmt(s)
	}
}

func (l *lowerer) stmt(s dsl.Stmt) {
	switch s := s.(type) {
	case *dsl.Backends:
		for _, n := range s.Names {
			l.settings.Backends = append(l.settings.Backends, n.Name)
		}
	case *dsl.Place:
		if str, ok := s.Pattern.(*dsl.String); ok {
			if re, err := regexp.Compile(str.Value); err == nil {
				l.settings.Places = append(l.settings.Places, Override{Pattern: re, Backend: s.On.Name})
			}
		}
	case *dsl.Set:
		if v, ok := l.constInt(s.Value); ok {
			l.settings.Options[s.Name.Name] = v
		}
	case *dsl.Dim:
		name := l.resolve(s.Name)
		if n, isName := s.Value.(*dsl.Name); isName && s.Bounded {
			if within := l.dims[l.resolve(n)]; within != nil && within.Bounded {
				d := &ir.Dim{Name: name, Bound: within.Bound, Bounded: true, AtMost: within, Pos: pos(s.Pos)}
				l.dims[name] = d
				l.g.Dims = append(l.g.Dims, d)
				return
			}
		}
		v, ok := l.constInt(s.Value)
		if !ok {
			return
		}
		if v < 0 {
			l.errorf(s.Value, "dim %s = %d must not be negative", name, v)
			return
		}
		d := &ir.Dim{Name: name, Bound: v, Bounded: s.Bounded, Pos: pos(s.Pos)}
		l.dims[name] = d
		l.g.Dims = append(l.g.Dims, d)
	case *dsl.Param:
		if v, ok := l.number(s.Value); ok {
			l.params[l.resolve(s.Name)] = v
		}
	case *dsl.Decl:
		l.decl(s)
	case *dsl.For:
		from, ok1 := l.constInt(s.From)
		to, ok2 := l.constInt(s.To)
		if !ok1 || !ok2 {
			return
		}
		for i := from; i < to; i++ {
			l.loops[s.Var.Name] = i
			l.loopVals = append(l.loopVals, i)
			l.stmts(s.Body)
			l.loopVals = l.loopVals[:len(l.loopVals)-1]
		}
		delete(l.loops, s.Var.Name)
	case *dsl.If:
		if l.cond(s.Cond) {
			l.stmts(s.Body)
		}
	case *dsl.Assign:
		name := l.resolve(s.Name)
		if alias, ok := s.Value.(*dsl.Name); ok {
			// x = y binds x to y's tensor: no new node.
			if t := l.tensorExpr(alias, ""); t != nil {
				if s.On != nil {
					l.errorf(s.On, "%s = %s creates no op to place", name, l.resolve(alias))
				}
				l.scope[name] = t
			}
			return
		}
		t := l.tensorExpr(s.Value, l.tensorName(name, !interpolated(s.Name)))
		if t == nil {
			l.failed[name] = true
			return
		}
		delete(l.failed, name)
		l.place(t, s.On)
		l.scope[name] = t
		if t.Op.Info().Flags&ops.FlagWritesSrc != 0 && t.Root().Kind == ir.KindState {
			l.g.Expand(t) // a write into state is a root, like ggml_build_forward_expand(cpy)
		}
	case *dsl.CallStmt:
		t := l.tensorExpr(s.Call, l.tensorName(s.Call.Func.Name, true))
		if t == nil {
			return
		}
		l.place(t, s.On)
		l.g.Expand(t)
	case *dsl.Output:
		name := l.resolve(s.Name)
		var t *ir.Tensor
		if s.Value != nil {
			t = l.tensorExpr(s.Value, l.tensorName(name, !interpolated(s.Name)))
			if t == nil {
				return
			}
			l.place(t, s.On)
			l.scope[name] = t
		} else if t = l.scope[name]; t == nil && l.absent[name] {
			l.absentError(s.Name, name)
			return
		} else if t == nil {
			l.errorf(s.Name, "output %s: no tensor of that name", name)
			return
		}
		if l.outputs[t] {
			l.errorf(s.Name, "output %s: already an output", name)
			return
		}
		if t.Kind != ir.KindNode {
			l.errorf(s.Name, "output %s: a %s cannot be an output; outputs are computed", name, t.Kind)
			return
		}
		l.outputs[t] = true
		t.Output = true
		l.g.Outputs = append(l.g.Outputs, t)
		l.g.Expand(t)
	default:
		panic(fmt.Sprintf("BUG: lower: statement %T", s))
	}
}

// dtype is t's element type: its name, or a type flag's value (the
// command line's -name TYPE, else the default).
func (l *lowerer) dtype(t *dsl.TensorType) (tensor.DType, bool) {
	name := t.DType.Name
	if t.FlagArgs != nil {
		def, ok := t.FlagArgs[1].Value.(*dsl.Name)
		str, ok2 := t.FlagArgs[0].Value.(*dsl.String)
		if !ok || !ok2 {
			return 0, false // dsl.Check reports it
		}
		l.flagsRead[str.Value] = true
		if v, given := l.flags[str.Value]; given {
			return tensor.DType(v), true
		}
		name = def.Text
	}
	dt, ok := tensor.ParseDType(name)
	if !ok {
		l.errorf(t.DType, "unknown dtype %s (known: %s)", name, strings.Join(dsl.DTypes(), ", "))
	}
	return dt, ok
}

func (l *lowerer) place(t *ir.Tensor, on *dsl.Ident) {
	if on != nil {
		t.Placement = on.Name
	}
}

func (l *lowerer) decl(s *dsl.Decl) {
	name := l.resolve(s.Name)
	dt, ok := l.dtype(s.Type)
	if !ok {
		return
	}
	if len(s.Type.Shape) > 4 {
		return // dsl.Check reports it
	}
	if wt, ok := l.weightTypes[name]; ok && s.Kind == dsl.DeclWeight {
		dt = wt
	}
	var ne []*ir.Expr
	for _, e := range s.Type.Shape {
		v := l.intExpr(e)
		if v == nil {
			return
		}
		if _, c := v.Constant(); !c && s.Kind != dsl.DeclInput {
			l.errorf(e, "%s %s: dim %s is bounded; weights and state need fixed shapes", s.Kind, name, v)
			return
		}
		if lo, _, _ := v.Range(); lo < 0 {
			l.errorf(e, "%s %s: %s can be negative (down to %d for dim values within bounds)", s.Kind, name, v, lo)
			return
		}
		ne = append(ne, v)
	}
	if bs := int64(dt.BlockSize()); bs > 1 {
		if n, ok := ne[0].Constant(); !ok || n%bs != 0 {
			l.errorf(s.Type.Shape[0], "%s %s: ne0 = %s is not a multiple of %s's block size %d", s.Kind, name, ne[0], dt, bs)
			return
		}
		if s.Kind == dsl.DeclInput {
			l.errorf(s.Type.DType, "%s %s: %s tensors can only be weights and state", s.Kind, name, dt)
			return
		}
	}
	if _, dup := l.scope[name]; dup || l.used[name] > 0 || l.absent[name] {
		l.errorf(s.Name, "%s is declared twice", name)
		return
	}
	if s.Kind == dsl.DeclWeight && s.OrNone() && (l.file == nil || !l.file.Tensors[name]) {
		l.absent[name] = true // an optional operand naming it is left out
		return
	}
	if s.Or != nil && !s.OrNone() && s.Kind == dsl.DeclWeight && l.file != nil && !l.file.Tensors[name] {
		l.standIn(s, name, ne)
		return
	}
	kind := map[dsl.DeclKind]ir.Kind{dsl.DeclInput: ir.KindInput, dsl.DeclWeight: ir.KindWeight, dsl.DeclState: ir.KindState}[s.Kind]
	t, err := l.g.NewLeaf(kind, name, dt, ne, pos(s.Pos))
	if err != nil {
		l.errorf(s.Type, "%s", err)
		l.failed[name] = true
		return
	}
	l.used[name]++
	if s.On != nil {
		t.Placement = s.On.Name
	}
	if s.Fill != nil {
		t.Fill = l.fill(s.Fill)
	}
	l.scope[name] = t
}

// unreadTensors reports the weights file's tensors that no weight
// declaration reads, or with AllowUnused lists them in file.Ignored.
func (l *lowerer) unreadTensors(f *dsl.File) {
	if l.file == nil {
		return
	}
	read := map[string]bool{}
	for _, t := range l.scope {
		if t.Kind == ir.KindWeight {
			read[t.Name] = true
		}
	}
	var unread []string
	for _, n := range l.file.Names {
		if !read[n] {
			unread = append(unread, n)
		}
	}
	switch {
	case len(unread) == 0:
	case l.file.AllowUnused:
		l.file.Ignored = unread
	default:
		l.errs = append(l.errs, &dsl.Error{Pos: f.Pos, EndPos: f.Pos, Msg: fmt.Sprintf("weights file %s: %s (-allow-unused ignores them)", l.file.Path, gguf.UnusedList(unread))})
	}
}

// absentError reports a use of an optional weight the file lacks (or,
// without a file, any optional weight) where the tensor is needed: only
// an op's optional operand may name it, and is then left out.
func (l *lowerer) absentError(n dsl.Node, name string) {
	from := " (compiled without a weights file)"
	if l.file != nil {
		from = " from " + l.file.Path
	}
	l.errorf(n, "%s is absent%s and this use needs it (only an optional operand may name an absent `or none` weight)", name, from)
}

// standIn binds a weight the file lacks to the weight its declaration
// names after `or`, which must have its shape: the graph reads that
// weight, as llama.cpp's output = token_embd when output.weight is absent.
func (l *lowerer) standIn(s *dsl.Decl, name string, ne []*ir.Expr) {
	alt := l.scope[l.resolve(s.Or)]
	if alt == nil || alt.Kind != ir.KindWeight {
		if !l.failed[l.resolve(s.Or)] {
			l.errorf(s.Or, "%s: no weight %s to stand in for it", name, l.resolve(s.Or))
		}
		l.failed[name] = true
		return
	}
	for i := range 4 {
		want, have := int64(1), int64(1)
		if i < len(ne) {
			want, _ = ne[i].Constant()
		}
		have, _ = alt.Ne[i].Constant()
		if want != have {
			l.errorf(s.Or, "%s is missing from the weights file, and %s cannot stand in for it: ne%d is %d, %s wants %d", name, alt.Name, i, have, name, want)
			l.failed[name] = true
			return
		}
	}
	l.used[name]++
	l.scope[name] = alt
}

// metaValue resolves meta("key"[, default]) against the weights file's
// metadata, and records the value in the graph so that loading a file
// can check it was compiled for the file's values.
func (l *lowerer) metaValue(c *dsl.Call) (float64, bool) {
	if len(c.Args) < 1 || len(c.Args) > 2 {
		return 0, false // dsl.Check reports it
	}
	str, ok := c.Args[0].Value.(*dsl.String)
	if !ok {
		return 0, false
	}
	key := str.Value
	var def *float64
	if len(c.Args) == 2 {
		v, ok := l.number(c.Args[1].Value)
		if !ok {
			return 0, false
		}
		def = &v
	}
	if l.file != nil {
		if raw, ok := l.file.Meta[key]; ok {
			v, ok := gguf.Value(raw)
			if !ok {
				l.errorf(c, "meta(%q): the weights file's value is %T, not a number or an array", key, raw)
				return 0, false
			}
			return l.recordMeta(c, tensor.Meta{Key: key, Value: v, Default: def != nil}), true
		}
	}
	switch {
	case def != nil:
		return l.recordMeta(c, tensor.Meta{Key: key, Value: *def, Default: true}), true
	case l.file == nil:
		l.errorf(c, "meta(%q): compiled without a weights file to read it from: give one (-weights FILE) or a default, meta(%q, VALUE)", key, key)
	default:
		l.errorf(c, "meta(%q): the weights file has no such key (a default, meta(%q, VALUE), would be used instead)", key, key)
	}
	return 0, false
}

// flagValue resolves flag("name", default[, max=limit]): the command
// line's -name value, else the default. A value beyond max is an error
// naming both, and the metadata key when max reads one.
func (l *lowerer) flagValue(c *dsl.Call) (float64, bool) {
	var pos []dsl.Expr
	var limit dsl.Expr
	for _, a := range c.Args {
		if a.Key == nil {
			pos = append(pos, a.Value)
		} else if a.Key.Name == "max" {
			limit = a.Value
		}
	}
	if len(pos) != 2 {
		return 0, false // dsl.Check reports it
	}
	str, ok := pos[0].(*dsl.String)
	if !ok {
		return 0, false
	}
	name := str.Value
	v, given := l.flags[name]
	l.flagsRead[name] = true
	if !given {
		return l.number(pos[1])
	}
	if limit != nil {
		// The bound checks this compilation's value; it does not shape the
		// plan, so a file read at run time need not have the same.
		l.unrecorded = true
		mx, ok := l.number(limit)
		l.unrecorded = false
		if !ok {
			return 0, false
		}
		if float64(v) > mx {
			what := fmt.Sprintf("max=%s", limit)
			if m, ok := limit.(*dsl.Call); ok && m.Func.Name == "meta" && l.file != nil {
				if key, ok := m.Args[0].Value.(*dsl.String); ok && l.file.Meta[key.Value] != nil {
					what = "the weights file's " + key.Value
				}
			}
			l.errorf(c, "-%s %d is beyond %s, %v", name, v, what, mx)
			// The value stands, so that what uses it reports nothing more.
		}
	}
	return float64(v), true
}

func (l *lowerer) recordMeta(c *dsl.Call, m tensor.Meta) float64 {
	if l.unrecorded {
		return m.Value
	}
	if i, ok := l.metaIndex[m.Key]; ok {
		if prev := l.g.Meta[i]; prev.Value != m.Value {
			l.errorf(c, "meta(%q) is %v here and %v where used before: give every use the same default", m.Key, m.Value, prev.Value)
		}
		return l.g.Meta[i].Value
	}
	l.metaIndex[m.Key] = len(l.g.Meta)
	l.g.Meta = append(l.g.Meta, m)
	return m.Value
}

// cond evaluates an if's condition: a comparison of constant integers,
// or a constant integer that holds when nonzero.
func (l *lowerer) cond(e dsl.Expr) bool {
	if b, ok := e.(*dsl.Binary); ok {
		cmp := map[dsl.BinaryOp]func(x, y int64) bool{
			dsl.OpEq: func(x, y int64) bool { return x == y }, dsl.OpNe: func(x, y int64) bool { return x != y },
			dsl.OpLt: func(x, y int64) bool { return x < y }, dsl.OpLe: func(x, y int64) bool { return x <= y },
			dsl.OpGt: func(x, y int64) bool { return x > y }, dsl.OpGe: func(x, y int64) bool { return x >= y },
		}
		if f, ok := cmp[b.Op]; ok {
			x, okx := l.constInt(b.X)
			y, oky := l.constInt(b.Y)
			return okx && oky && f(x, y)
		}
	}
	v, ok := l.constInt(e)
	return ok && v != 0
}

// constInt evaluates an expression that must not depend on bounded dims.
func (l *lowerer) constInt(e dsl.Expr) (int64, bool) {
	v := l.intExpr(e)
	if v == nil {
		return 0, false
	}
	c, ok := v.Constant()
	if !ok {
		l.errorf(e, "%s depends on a bounded dim; a constant is needed here", v)
	}
	return c, ok
}

// intExpr evaluates an integer expression over dims and loop variables.
func (l *lowerer) intExpr(e dsl.Expr) *ir.Expr {
	switch e := e.(type) {
	case *dsl.Number:
		v, err := strconv.ParseInt(e.Text, 10, 64)
		if errors.Is(err, strconv.ErrRange) {
			l.errorf(e, "%s is out of range: integers are int64, at most %d", e.Text, int64(math.MaxInt64))
			return nil
		}
		if err != nil {
			l.errorf(e, "%s is not an integer", e.Text)
			return nil
		}
		return ir.Const(v)
	case *dsl.Name:
		name := l.resolve(e)
		if v, ok := l.loops[name]; ok {
			return ir.Const(v)
		}
		if d, ok := l.dims[name]; ok {
			return ir.DimRef(d)
		}
		if _, ok := l.scope[name]; ok || l.absent[name] {
			l.errorf(e, "%s is a tensor; an integer is needed here", name)
		} else {
			l.errorf(e, "undefined: %s", name)
		}
	case *dsl.Unary:
		if x := l.intExpr(e.X); x != nil {
			return l.checked(e, ir.Sub(ir.Const(0), x))
		}
	case *dsl.Binary:
		ops := map[dsl.BinaryOp]ir.ExprOp{dsl.OpAdd: ir.ExprAdd, dsl.OpSub: ir.ExprSub, dsl.OpMul: ir.ExprMul, dsl.OpDiv: ir.ExprDiv, dsl.OpRem: ir.ExprMod}
		op, ok := ops[e.Op]
		if !ok {
			l.errorf(e, "comparison %s is only allowed in fill expressions", e.Op)
			return nil
		}
		x, y := l.intExpr(e.X), l.intExpr(e.Y)
		if x == nil || y == nil {
			return nil
		}
		if c, ok := y.Constant(); ok && c == 0 && (op == ir.ExprDiv || op == ir.ExprMod) {
			l.errorf(e, "division by zero")
			return nil
		}
		return l.checked(e, ir.Binary(op, x, y))
	case *dsl.Call:
		if v := l.intCall(e); v != nil {
			return l.checked(e, v)
		}
	case *dsl.String:
		l.errorf(e, "a string is not an integer")
	default:
		panic(fmt.Sprintf("BUG: lower: expression %T", e))
	}
	return nil
}

// checked reports v, the value of e, if it may overflow int64 or divide by
// zero for some dim values within bounds: every integer the lowering hands
// on has a range, so nothing computed from it later wraps silently.
func (l *lowerer) checked(e dsl.Expr, v *ir.Expr) *ir.Expr {
	if _, _, err := v.Range(); err != nil {
		l.errorf(e, "%v", err)
		return nil
	}
	return v
}

// intCall evaluates the size builtins: ne(t, i), nb(t, i), esize(t),
// row_size(t, n) (ggml_row_size).
func (l *lowerer) intCall(c *dsl.Call) *ir.Expr {
	fn := c.Func.Name
	if fn == "meta" || fn == "flag" {
		read := l.metaValue
		if fn == "flag" {
			read = l.flagValue
		}
		v, ok := read(c)
		if !ok {
			return nil
		}
		if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
			l.errorf(c, "%s(…) = %v: an integer is needed here", fn, v)
			return nil
		}
		return ir.Const(int64(v))
	}
	want := map[string]int{"ne": 2, "nb": 2, "esize": 1, "row_size": 2}
	n, ok := want[fn]
	if !ok {
		if _, isOp := opByName(fn); isOp {
			l.errorf(c, "%s(…) is a tensor; an integer is needed here", fn)
		} else {
			l.errorf(c.Func, "unknown function %s", fn)
		}
		return nil
	}
	if len(c.Args) != n || c.Args[0].Key != nil {
		l.errorf(c, "%s takes %d positional arguments", fn, n)
		return nil
	}
	t := l.tensorExpr(c.Args[0].Value, "")
	if t == nil {
		return nil
	}
	es := ir.Const(int64(t.Type.Size()))
	if fn == "esize" {
		if t.Type.Quantized() {
			l.errorf(c, "esize(%s): %s is block-quantized; use row_size", t.Name, t.Type)
			return nil
		}
		return es
	}
	if c.Args[1].Key != nil {
		l.errorf(c.Args[1], "%s takes positional arguments", fn)
		return nil
	}
	if fn == "row_size" {
		if x := l.intExpr(c.Args[1].Value); x != nil {
			if bs := int64(t.Type.BlockSize()); bs > 1 {
				return ir.Mul(ir.Binary(ir.ExprDiv, x, ir.Const(bs)), es)
			}
			return ir.Mul(es, x)
		}
		return nil
	}
	i, ok := l.constInt(c.Args[1].Value)
	if !ok {
		return nil
	}
	if i < 0 || i > 3 {
		l.errorf(c.Args[1], "dimension index %d is outside 0..3", i)
		return nil
	}
	if fn == "ne" {
		return t.Ne[i]
	}
	return t.Nb[i]
}

// number evaluates a float parameter (integers allowed).
func (l *lowerer) number(e dsl.Expr) (float64, bool) {
	switch e := e.(type) {
	case *dsl.Number:
		if e.Text == "inf" {
			return math.Inf(1), true
		}
		v, err := strconv.ParseFloat(e.Text, 64)
		if err != nil {
			l.errorf(e, "bad number %s", e.Text)
			return 0, false
		}
		return v, true
	case *dsl.Unary:
		v, ok := l.number(e.X)
		return -v, ok
	case *dsl.Name:
		if v, ok := l.params[l.resolve(e)]; ok {
			return v, true
		}
	case *dsl.Binary:
		if l.isFloat(e) {
			return l.floatBinary(e)
		}
	case *dsl.Call:
		switch e.Func.Name {
		case "meta":
			return l.metaValue(e)
		case "flag":
			return l.flagValue(e)
		case "sqrt":
			if len(e.Args) != 1 {
				l.errorf(e, "sqrt takes one argument")
				return 0, false
			}
			v, ok := l.number(e.Args[0].Value)
			if ok && v < 0 {
				l.errorf(e, "sqrt of %v", v)
				return 0, false
			}
			return math.Sqrt(v), ok
		}
	}
	c, ok := l.constInt(e)
	return float64(c), ok
}

// isFloat reports whether a number's expression has float arithmetic: a
// float literal, a param or a float function. Without one, / stays the
// integer division it is in dims (n_embd / n_head).
func (l *lowerer) isFloat(e dsl.Expr) bool {
	switch e := e.(type) {
	case *dsl.Number:
		_, err := strconv.ParseInt(e.Text, 10, 64)
		return err != nil
	case *dsl.Name:
		_, ok := l.params[l.resolve(e)]
		return ok
	case *dsl.Unary:
		return l.isFloat(e.X)
	case *dsl.Binary:
		return l.isFloat(e.X) || l.isFloat(e.Y)
	case *dsl.Call:
		return e.Func.Name == "meta" || e.Func.Name == "sqrt"
	}
	return false
}

func (l *lowerer) floatBinary(e *dsl.Binary) (float64, bool) {
	x, okx := l.number(e.X)
	y, oky := l.number(e.Y)
	if !okx || !oky {
		return 0, false
	}
	switch e.Op {
	case dsl.OpAdd:
		return x + y, true
	case dsl.OpSub:
		return x - y, true
	case dsl.OpMul:
		return x * y, true
	case dsl.OpDiv:
		if y == 0 {
			l.errorf(e, "division by zero")
			return 0, false
		}
		return x / y, true
	}
	l.errorf(e, "%s is not allowed in a number", e.Op)
	return 0, false
}

// fill converts an input's fill expression.
func (l *lowerer) fill(e dsl.Expr) *ir.FillExpr {
	switch e := e.(type) {
	case *dsl.Number:
		v, ok := l.number(e)
		if !ok {
			return nil
		}
		return &ir.FillExpr{Op: "num", Num: v}
	case *dsl.Name:
		name := l.resolve(e)
		for _, v := range ir.FillVars {
			if name == v {
				return &ir.FillExpr{Op: "var", Var: v}
			}
		}
		if v, ok := l.loops[name]; ok {
			return &ir.FillExpr{Op: "num", Num: float64(v)}
		}
		if d, ok := l.dims[name]; ok {
			return &ir.FillExpr{Op: "dim", Dim: d}
		}
		l.errorf(e, "undefined in fill expression: %s (use i, i0..i3, dims or loop variables)", name)
	case *dsl.Unary:
		if x := l.fill(e.X); x != nil {
			return &ir.FillExpr{Op: "neg", Args: []*ir.FillExpr{x}}
		}
	case *dsl.Binary:
		x, y := l.fill(e.X), l.fill(e.Y)
		if x != nil && y != nil {
			return &ir.FillExpr{Op: string(e.Op), Args: []*ir.FillExpr{x, y}}
		}
	case *dsl.Call:
		n, ok := ir.FillFuncs[e.Func.Name]
		if !ok {
			var known []string
			for k := range ir.FillFuncs {
				known = append(known, k)
			}
			sort.Strings(known)
			l.errorf(e.Func, "unknown fill function %s (known: %s)", e.Func.Name, strings.Join(known, ", "))
			return nil
		}
		if len(e.Args) != n {
			l.errorf(e, "%s takes %d arguments, got %d", e.Func.Name, n, len(e.Args))
			return nil
		}
		f := &ir.FillExpr{Op: "call", Func: e.Func.Name}
		for _, a := range e.Args {
			if a.Key != nil {
				l.errorf(a, "%s takes no keyword arguments", e.Func.Name)
				return nil
			}
			x := l.fill(a.Value)
			if x == nil {
				return nil
			}
			f.Args = append(f.Args, x)
		}
		return f
	case *dsl.String:
		l.errorf(e, "a string is not a number")
	}
	return nil
}
