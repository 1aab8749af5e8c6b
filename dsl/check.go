package dsl

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// Check reports the structural problems of f that need neither shapes nor
// knowledge of ops. It returns every problem it finds as an ErrorList
// sorted by position, or nil. It checks that:
//
//   - every name is defined before it is used, and every "{var}"
//     interpolation names an enclosing loop variable;
//   - dims, inputs, weights and states are declared once, also after
//     loops are expanded: a declaration (or output) inside a loop must
//     interpolate every enclosing loop variable;
//   - dims are top-level, with values (and bounds) that are constant
//     integer expressions of at least 1 over literals and constant dims,
//     or for a bound an earlier bounded dim alone;
//   - if conditions are constant: over literals, constant dims and loop
//     variables;
//   - loop bounds are integer literals or constant dims, and loop
//     variables shadow nothing;
//   - dtypes are known (see DTypes), shapes have 1 to 4 integer
//     dimensions over dims and loop variables;
//   - fill is only used on inputs and refers only to i, i0..i3, dims and
//     loop variables; "on" is only used on weights, states and
//     definitions, and names a declared backend;
//   - assignments do not rebind dims, tensors or loop variables; keyword
//     arguments are not repeated; keywords are not used as names.
//
// Call names are not checked: the op table lives elsewhere.
//
// Scoping: a name first assigned inside a loop body is local to that body.
// Check expands loops (bounds are constants) to compare the names that
// interpolations produce. Loops with no iterations, or too many to expand,
// are checked once with an unknown variable value; names that depend on it
// are then not looked up.
func Check(f *File) error {
	if f == nil {
		return nil
	}
	c := &checker{
		reported: map[[2]int]bool{},
		globals:  map[string]*binding{},
		scopes:   []map[string]*binding{{}},
		outputs:  map[string]lexer.Position{},
		budget:   checkBudget,
	}
	c.collectBackends(f.Stmts)
	c.stmts(f.Stmts)
	c.errs.Sort()
	return c.errs.Err()
}

// checkBudget caps the statements Check visits while expanding loops.
const checkBudget = 1 << 16

// fillVars are the variables of a fill expression.
var fillVars = []string{"i", "i0", "i1", "i2", "i3"}

// maxRank is the most dimensions a tensor can have (GGML_MAX_DIMS).
const maxRank = 4

type checker struct {
	errs     ErrorList
	reported map[[2]int]bool // spans already reported

	globals  map[string]*binding   // dims and tensor declarations
	scopes   []map[string]*binding // assigned names, innermost last
	loops    []*loopVar            // enclosing loops, innermost last
	outputs  map[string]lexer.Position
	backends map[string]bool // nil without a backends statement
	budget   int             // statement visits left for loop expansion
}

// binding is what a name refers to.
type binding struct {
	kind    string // "dim", "input", "weight", "state" or "value"
	pos     lexer.Position
	isConst bool  // a constant dim (not bounded)
	known   bool  // isConst and its value is known before lowering: not from meta(…)
	value   int64 // its value
}

type loopVar struct {
	name  string
	pos   lexer.Position
	value int64
	known bool
}

// errorf reports a problem spanning pos..end, once per span.
func (c *checker) errorf(pos, end lexer.Position, format string, args ...any) {
	key := [2]int{pos.Offset, end.Offset}
	if c.reported[key] {
		return
	}
	c.reported[key] = true
	c.errs = append(c.errs, &Error{Pos: pos, EndPos: end, Msg: fmt.Sprintf(format, args...)})
}

// nodeErrorf reports a problem spanning n.
func (c *checker) nodeErrorf(n Node, format string, args ...any) {
	c.errorf(n.Position(), n.End(), format, args...)
}

// collectBackends reads the backends statement.
func (c *checker) collectBackends(stmts []Stmt) {
	var first *Backends
	for _, s := range stmts {
		b, ok := s.(*Backends)
		if !ok {
			continue
		}
		if first != nil {
			c.nodeErrorf(b, "duplicate backends statement; first at %s", lineCol(first.Pos))
			continue
		}
		first = b
		c.backends = map[string]bool{}
		for _, id := range b.Names {
			if c.backends[id.Name] {
				c.nodeErrorf(id, "backend %s listed twice", id.Name)
			}
			c.keyword(id, id.Name)
			c.backends[id.Name] = true
		}
	}
}

func (c *checker) stmts(list []Stmt) {
	for _, s := range list {
		c.budget--
		c.stmt(s)
	}
}

func (c *checker) stmt(s Stmt) {
	switch s := s.(type) {
	case *Backends:
		if len(c.loops) > 0 {
			c.nodeErrorf(s, "backends must be declared at top level")
		}
	case *Place:
		if len(c.loops) > 0 {
			c.nodeErrorf(s, "place must be at top level")
		}
		str, ok := s.Pattern.(*String)
		if !ok {
			c.nodeErrorf(s.Pattern, "place wants a regular expression in a string literal")
		} else if _, err := regexp.Compile(str.Value); err != nil {
			c.nodeErrorf(s.Pattern, "bad regular expression: %v", err)
		}
		c.on(s.On)
	case *Set:
		if len(c.loops) > 0 {
			c.nodeErrorf(s, "set must be at top level")
		}
		if _, ok := Options[s.Name.Name]; !ok {
			var names []string
			for n := range Options {
				names = append(names, n)
			}
			slices.Sort(names)
			c.nodeErrorf(s.Name, "unknown option %s (options: %s)", s.Name.Name, strings.Join(names, ", "))
		}
		if v, known := c.intExpr(s.Value, modeConst); known && v < 0 {
			c.nodeErrorf(s.Value, "%s must not be negative", s.Name.Name)
		}
	case *Dim:
		c.dim(s)
	case *Param:
		c.param(s)
	case *Decl:
		c.decl(s)
	case *Output:
		c.output(s)
	case *Assign:
		c.expr(s.Value, modeValue)
		c.on(s.On)
		c.assign(s.Name)
	case *CallStmt:
		c.expr(s.Call, modeValue)
		c.on(s.On)
	case *For:
		c.loop(s)
	case *If:
		c.cond(s.Cond)
		c.stmts(s.Body)
	}
}

// cond checks an if's condition: a comparison of constant integer
// expressions, or one that holds when nonzero.
func (c *checker) cond(e Expr) {
	if b, ok := e.(*Binary); ok && b.Op.Precedence() == precCompare {
		c.intExpr(b.X, modeCond)
		c.intExpr(b.Y, modeCond)
		return
	}
	c.intExpr(e, modeCond)
}

func (c *checker) dim(s *Dim) {
	if len(c.loops) > 0 {
		c.nodeErrorf(s, "dims must be declared at top level")
		return
	}
	if n, ok := s.Value.(*Name); ok && s.Bounded {
		// dim n_outputs <= n_tokens: at most another bounded dim's value.
		if name, ok := c.resolve(n); ok {
			if b := c.lookup(name); b != nil && b.kind == "dim" && !b.isConst {
				c.declare(s.Name, &binding{kind: "dim", pos: s.Name.Pos})
				return
			}
		}
	}
	v, known := c.intExpr(s.Value, modeConst)
	if known && v < 1 {
		c.nodeErrorf(s.Value, "dim %s must be at least 1, got %d", s.Name.Text, v)
	}
	b := &binding{kind: "dim", pos: s.Name.Pos, isConst: !s.Bounded, known: known && !s.Bounded && v >= 1, value: v}
	c.declare(s.Name, b)
}

func (c *checker) param(s *Param) {
	if len(c.loops) > 0 {
		c.nodeErrorf(s, "params must be declared at top level")
		return
	}
	c.floatExpr(s.Value)
	c.declare(s.Name, &binding{kind: "param", pos: s.Name.Pos})
}

// floatExpr checks a param's value: arithmetic on numbers, constant dims,
// params, meta(…) and sqrt(…).
func (c *checker) floatExpr(e Expr) {
	switch e := e.(type) {
	case *Number:
		c.number(e)
	case *Name:
		b, lv := c.nameRef(e, modeValue)
		switch {
		case lv != nil:
			c.nodeErrorf(e, "param values must be constant; %s is a loop variable", e.Text)
		case b != nil && b.kind == "dim" && !b.isConst:
			c.nodeErrorf(e, "param values must be constant; %s is a bounded dim", e.Text)
		case b != nil && b.kind != "dim" && b.kind != "param":
			c.nodeErrorf(e, "param values can use dims and params, not %s %s", b.kind, e.Text)
		}
	case *Unary:
		c.floatExpr(e.X)
	case *Binary:
		if e.Op.Precedence() == precCompare || e.Op == OpRem {
			c.nodeErrorf(e, "param values use + - * / only")
			return
		}
		c.floatExpr(e.X)
		c.floatExpr(e.Y)
	case *Call:
		switch e.Func.Name {
		case "meta":
			c.meta(e)
		case "flag":
			c.flag(e)
		case "sqrt":
			if len(e.Args) != 1 || e.Args[0].Key != nil {
				c.nodeErrorf(e, "sqrt takes one positional argument")
				return
			}
			c.floatExpr(e.Args[0].Value)
		default:
			c.nodeErrorf(e.Func, "param values can call meta, flag and sqrt, not %s", e.Func.Name)
		}
	case *String:
		c.nodeErrorf(e, "param values are numbers, not strings")
	}
}

// meta checks meta("key") and meta("key", default): a value the
// compilation reads from the weights file's metadata.
func (c *checker) meta(e *Call) {
	if len(e.Args) < 1 || len(e.Args) > 2 || e.Args[0].Key != nil || (len(e.Args) == 2 && e.Args[1].Key != nil) {
		c.nodeErrorf(e, `meta takes a metadata key and an optional default: meta("llama.block_count", 4)`)
		return
	}
	if key, ok := e.Args[0].Value.(*String); !ok || key.Value == "" {
		c.nodeErrorf(e.Args[0].Value, "meta's key must be a non-empty string literal")
	}
	if len(e.Args) == 2 {
		c.floatExpr(e.Args[1].Value)
	}
}

// flag checks flag("name", default[, max=limit]): a value the command
// line may set when compiling (-name VALUE), bounded by max.
func (c *checker) flag(e *Call) {
	var pos []*Arg
	for _, a := range e.Args {
		switch {
		case a.Key == nil:
			pos = append(pos, a)
		case a.Key.Name == "max":
			c.floatExpr(a.Value)
		default:
			c.nodeErrorf(a.Key, "flag has no parameter %s (parameters: max=)", a.Key.Name)
		}
	}
	if len(pos) != 2 {
		c.nodeErrorf(e, `flag takes a name and a default: flag("ctx", 64), flag("ctx", 64, max=meta("llama.context_length", 64))`)
		return
	}
	if name, ok := pos[0].Value.(*String); !ok || !validFlagName(name.Value) {
		c.nodeErrorf(pos[0].Value, "flag's name must be a string literal of lower-case letters, digits and _, starting with a letter")
	}
	c.floatExpr(pos[1].Value)
}

// typeFlag checks flag("name", dtype)[…]: an element type the command
// line may set when compiling (-name TYPE).
func (c *checker) typeFlag(t *TensorType) {
	if t.DType.Name != "flag" {
		c.nodeErrorf(t.DType, "a tensor type calls only flag, not %s", t.DType.Name)
		return
	}
	if len(t.FlagArgs) != 2 || t.FlagArgs[0].Key != nil || t.FlagArgs[1].Key != nil {
		c.nodeErrorf(t.DType, `a type flag takes a name and a default type: flag("ctk", f16)`)
		return
	}
	if name, ok := t.FlagArgs[0].Value.(*String); !ok || !validFlagName(name.Value) {
		c.nodeErrorf(t.FlagArgs[0].Value, "flag's name must be a string literal of lower-case letters, digits and _, starting with a letter")
	}
	if def, ok := t.FlagArgs[1].Value.(*Name); !ok || !def.IsIdent() || !IsDType(def.Text) {
		c.nodeErrorf(t.FlagArgs[1].Value, "a type flag's default must be a dtype; valid dtypes are %s", dtypeList())
	}
}

func validFlagName(s string) bool {
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

func (c *checker) decl(s *Decl) {
	kind := string(s.Kind)
	if s.Type != nil {
		c.tensorType(s.Type)
	}
	if s.Fill != nil {
		if s.Kind != DeclInput {
			c.nodeErrorf(s.Fill, "fill is only allowed on inputs")
		} else {
			c.expr(s.Fill, modeFill)
		}
	}
	if s.On != nil && s.Kind == DeclInput {
		c.nodeErrorf(s.On, "inputs cannot be placed with on; only weights, states and computed values can")
	} else {
		c.on(s.On)
	}
	if s.Or != nil {
		if s.Kind != DeclWeight && s.OrNone() {
			c.nodeErrorf(s.Or, "only a weight can be optional; or none is not allowed on %s", kind)
		} else if s.Kind != DeclWeight {
			c.nodeErrorf(s.Or, "only a weight can stand in for a missing weight; or is not allowed on %s", kind)
		} else if s.OrNone() {
			// An optional weight: the file compiled for may lack it.
		} else if b, _ := c.nameRef(s.Or, modeValue); b != nil && b.kind != "weight" {
			c.nodeErrorf(s.Or, "%s stands in for a missing weight, so it must be a weight, not %s", s.Or.Text, b.kind)
		}
	}
	if c.loopInterpolation(s.Name, kind) {
		c.declare(s.Name, &binding{kind: kind, pos: s.Name.Pos})
	}
}

func (c *checker) tensorType(t *TensorType) {
	if t.FlagArgs != nil {
		c.typeFlag(t)
	} else if !IsDType(t.DType.Name) {
		c.nodeErrorf(t.DType, "unknown dtype %q; valid dtypes are %s", t.DType.Name, dtypeList())
	}
	if len(t.Shape) > maxRank {
		c.errorf(t.Shape[maxRank].Position(), t.Shape[len(t.Shape)-1].End(), "a tensor has at most %d dimensions, got %d", maxRank, len(t.Shape))
	}
	for _, d := range t.Shape {
		if v, known := c.intExpr(d, modeShape); known && v < 1 {
			c.nodeErrorf(d, "dimension must be at least 1, got %d", v)
		}
	}
}

func (c *checker) output(s *Output) {
	if s.Value != nil {
		c.expr(s.Value, modeValue)
	} else if s.On != nil {
		c.nodeErrorf(s.On, "on needs a definition: output %s = ... on %s", s.Name.Text, s.On.Name)
	}
	c.on(s.On)
	if !c.loopInterpolation(s.Name, "output") {
		return
	}
	if s.Value != nil {
		c.assign(s.Name)
	}
	name, ok := c.resolve(s.Name)
	if !ok {
		return
	}
	if s.Value == nil && c.lookup(name) == nil && c.loopVar(name) == nil {
		c.nodeErrorf(s.Name, "undefined: %s", describe(s.Name, name))
		return
	}
	if pos, dup := c.outputs[name]; dup {
		c.nodeErrorf(s.Name, "%s is already an output (at %s)", describe(s.Name, name), lineCol(pos))
		return
	}
	c.outputs[name] = s.Name.Pos
}

// assign binds name as a computed value: rebinding it where it is already
// bound, or else in the innermost scope.
func (c *checker) assign(n *Name) {
	if n.IsIdent() && c.keyword(n, n.Text) {
		return
	}
	name, ok := c.resolve(n)
	if !ok {
		return
	}
	if lv := c.loopVar(name); lv != nil {
		c.nodeErrorf(n, "cannot assign to loop variable %s", name)
		return
	}
	for i := len(c.scopes) - 1; i >= 0; i-- {
		if c.scopes[i][name] != nil {
			return
		}
	}
	if b := c.globals[name]; b != nil {
		c.nodeErrorf(n, "cannot assign to %s %s (declared at %s)", b.kind, describe(n, name), lineCol(b.pos))
		return
	}
	c.scopes[len(c.scopes)-1][name] = &binding{kind: "value", pos: n.Pos}
}

// declare binds a dim or tensor name globally, reporting duplicates.
func (c *checker) declare(n *Name, b *binding) {
	if n.IsIdent() && c.keyword(n, n.Text) {
		return
	}
	name, ok := c.resolve(n)
	if !ok {
		return
	}
	if prev := c.lookup(name); prev != nil {
		c.nodeErrorf(n, "%s %s redeclared; first declared as %s at %s", b.kind, describe(n, name), prev.kind, lineCol(prev.pos))
		return
	}
	if lv := c.loopVar(name); lv != nil {
		c.nodeErrorf(n, "%s %s redeclares the loop variable at %s", b.kind, name, lineCol(lv.pos))
		return
	}
	c.globals[name] = b
}

// loopInterpolation reports whether a declaration named n interpolates
// every enclosing loop variable, reporting it if not.
func (c *checker) loopInterpolation(n *Name, what string) bool {
	vars := n.Vars()
	for _, lv := range c.loops {
		if !slices.Contains(vars, lv.name) {
			c.nodeErrorf(n, "%s %s is inside the loop over %s (at %s) but does not interpolate {%s}, so it would be declared once per iteration", what, n.Text, lv.name, lineCol(lv.pos), lv.name)
			return false
		}
	}
	return true
}

func (c *checker) loop(s *For) {
	name := s.Var.Name
	shadow := c.keyword(s.Var, name)
	if lv := c.loopVar(name); lv != nil && !shadow {
		c.nodeErrorf(s.Var, "loop variable %s shadows the loop variable at %s", name, lineCol(lv.pos))
		shadow = true
	} else if b := c.lookup(name); b != nil && !shadow {
		c.nodeErrorf(s.Var, "loop variable %s shadows %s %s (declared at %s)", name, b.kind, name, lineCol(b.pos))
		shadow = true
	}
	lo, loKnown := c.bound(s.From)
	hi, hiKnown := c.bound(s.To)
	if loKnown && hiKnown && lo > hi {
		c.errorf(s.From.Position(), s.To.End(), "loop range %d..%d is reversed", lo, hi)
	}

	iter := func(v int64, known bool) {
		lv := &loopVar{name: name, pos: s.Pos, value: v, known: known}
		if shadow {
			// Keep checking the body without the shadowing variable.
			lv.name = ""
		}
		c.loops = append(c.loops, lv)
		c.scopes = append(c.scopes, map[string]*binding{})
		c.stmts(s.Body)
		c.scopes = c.scopes[:len(c.scopes)-1]
		c.loops = c.loops[:len(c.loops)-1]
	}
	if loKnown && hiKnown && hi > lo && (hi-lo) <= int64(c.budget)/c.cost(s.Body) {
		for v := lo; v < hi; v++ {
			iter(v, true)
		}
		return
	}
	iter(0, false)
}

// bound checks a loop bound and returns its value.
func (c *checker) bound(e Expr) (int64, bool) {
	switch e := e.(type) {
	case *Number:
		if v, err := strconv.ParseInt(e.Text, 10, 64); err == nil {
			return v, true
		}
	case *Name:
		name, ok := c.resolve(e)
		if !ok {
			return 0, false
		}
		b := c.lookup(name)
		switch {
		case b == nil:
			c.nodeErrorf(e, "undefined: %s", describe(e, name))
			return 0, false
		case b.isConst:
			return b.value, b.known
		case b.kind == "dim":
			c.nodeErrorf(e, "loop bound %s is a bounded dim; loop bounds must be constant", name)
			return 0, false
		}
	}
	c.nodeErrorf(e, "loop bound must be an integer literal or a constant dim")
	return 0, false
}

// cost returns how many statement visits one pass over stmts takes,
// at least 1.
func (c *checker) cost(stmts []Stmt) int64 {
	n := int64(1)
	for _, s := range stmts {
		n++
		if b, ok := s.(*If); ok {
			n += c.cost(b.Body)
		}
		if loop, ok := s.(*For); ok {
			trips := int64(1)
			lo, ok1 := c.constBound(loop.From)
			hi, ok2 := c.constBound(loop.To)
			if ok1 && ok2 && hi > lo {
				trips = hi - lo
			}
			n += min(trips, checkBudget) * c.cost(loop.Body)
		}
		n = min(n, checkBudget+1)
	}
	return n
}

// constBound is bound without reports.
func (c *checker) constBound(e Expr) (int64, bool) {
	switch e := e.(type) {
	case *Number:
		v, err := strconv.ParseInt(e.Text, 10, 64)
		return v, err == nil
	case *Name:
		if b := c.globals[e.Text]; b != nil && b.known {
			return b.value, true
		}
	}
	return 0, false
}

// on checks a backend placement.
func (c *checker) on(id *Ident) {
	if id == nil || c.backends == nil || c.backends[id.Name] {
		return
	}
	c.nodeErrorf(id, "unknown backend %s; the backends statement lists %s", id.Name, strings.Join(c.backendNames(), ", "))
}

func (c *checker) backendNames() []string {
	var names []string
	for n := range c.backends {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// keyword reports whether name is a keyword, reporting it if so.
func (c *checker) keyword(n Node, name string) bool {
	if !isKeyword(name) {
		return false
	}
	c.nodeErrorf(n, "%s is a keyword and cannot be used as a name", name)
	return true
}

// resolve substitutes the enclosing loop variables into n. It reports
// interpolations of undefined loop variables, and returns false if the
// name cannot be resolved (then it has been reported, or depends on an
// unknown loop value).
func (c *checker) resolve(n *Name) (string, bool) {
	ok := true
	for i, p := range n.Parts {
		if p.Var != "" && c.loopVar(p.Var) == nil {
			pos, end := n.PartSpan(i)
			c.errorf(pos, end, "undefined loop variable %s in %s", p.Var, n.Text)
			ok = false
		}
	}
	if !ok {
		return "", false
	}
	return n.resolve(func(v string) (int64, bool) {
		lv := c.loopVar(v)
		return lv.value, lv.known
	})
}

// loopVar returns the innermost enclosing loop variable called name.
func (c *checker) loopVar(name string) *loopVar {
	for i := len(c.loops) - 1; i >= 0; i-- {
		if c.loops[i].name == name {
			return c.loops[i]
		}
	}
	return nil
}

// lookup returns the binding of a resolved name other than a loop
// variable.
func (c *checker) lookup(name string) *binding {
	for i := len(c.scopes) - 1; i >= 0; i-- {
		if b := c.scopes[i][name]; b != nil {
			return b
		}
	}
	return c.globals[name]
}

// exprMode says where an expression appears, which decides the names and
// forms it may use.
type exprMode int

const (
	modeValue exprMode = iota // a computation: any name
	modeFill                  // a fill expression: i, i0..i3, dims, loop variables
	modeShape                 // a shape dimension: integer arithmetic on dims and loop variables
	modeConst                 // a dim value: integer arithmetic on constant dims
	modeCond                  // an if's condition: integer arithmetic on constant dims and loop variables
)

// expr checks an expression of a computation or fill.
func (c *checker) expr(e Expr, mode exprMode) {
	switch e := e.(type) {
	case *Binary:
		c.expr(e.X, mode)
		c.expr(e.Y, mode)
	case *Unary:
		c.expr(e.X, mode)
	case *Call:
		if e.Func.Name == "meta" && mode == modeValue {
			c.meta(e)
			return
		}
		if e.Func.Name == "flag" && mode == modeValue {
			c.flag(e)
			return
		}
		seen := map[string]*Ident{}
		for _, a := range e.Args {
			if a.Key != nil {
				if prev := seen[a.Key.Name]; prev != nil {
					c.nodeErrorf(a.Key, "keyword argument %s repeated; first at %s", a.Key.Name, lineCol(prev.Pos))
				}
				seen[a.Key.Name] = a.Key
			}
			c.expr(a.Value, mode)
		}
	case *Number:
		c.number(e)
	case *Name:
		c.nameRef(e, mode)
	}
}

// nameRef checks a name used in an expression. It returns the loop
// variable or the binding the name refers to; both are nil for fill
// variables and for names it reported.
func (c *checker) nameRef(n *Name, mode exprMode) (b *binding, lv *loopVar) {
	if n.IsIdent() {
		if c.keyword(n, n.Text) {
			return nil, nil
		}
		if mode == modeFill && slices.Contains(fillVars, n.Text) {
			return nil, nil
		}
	}
	name, ok := c.resolve(n)
	if !ok {
		return nil, nil
	}
	if lv := c.loopVar(name); lv != nil {
		if mode == modeConst {
			c.nodeErrorf(n, "dim values must be constant; %s is a loop variable", name)
		}
		return nil, lv
	}
	b = c.lookup(name)
	switch {
	case b == nil:
		c.nodeErrorf(n, "undefined: %s", describe(n, name))
	case mode == modeFill && b.kind != "dim":
		c.nodeErrorf(n, "fill expressions can use i, i0..i3, dims and loop variables, not %s %s", b.kind, describe(n, name))
	case mode == modeShape && b.kind != "dim":
		c.nodeErrorf(n, "shapes can use dims and loop variables, not %s %s", b.kind, describe(n, name))
	case mode == modeConst && b.kind != "dim":
		c.nodeErrorf(n, "dim values can use constant dims, not %s %s", b.kind, describe(n, name))
	case mode == modeConst && !b.isConst:
		c.nodeErrorf(n, "dim values must be constant; %s is a bounded dim", name)
	case mode == modeCond && b.kind != "dim":
		c.nodeErrorf(n, "if conditions can use constant dims and loop variables, not %s %s", b.kind, describe(n, name))
	case mode == modeCond && !b.isConst:
		c.nodeErrorf(n, "if conditions must be constant; %s is a bounded dim", name)
	default:
		return b, nil
	}
	return nil, nil
}

// number checks that a literal is in range.
func (c *checker) number(n *Number) {
	if n.Text == "inf" {
		return
	}
	if n.isInt() {
		if _, err := strconv.ParseInt(n.Text, 10, 64); err != nil {
			c.nodeErrorf(n, "integer %s out of range", n.Text)
		}
		return
	}
	if _, err := strconv.ParseFloat(n.Text, 64); err != nil {
		c.nodeErrorf(n, "number %s out of range", n.Text)
	}
}

// intExpr checks an integer expression of a shape or dim value and
// returns its value if known.
func (c *checker) intExpr(e Expr, mode exprMode) (int64, bool) {
	what := "shapes"
	switch mode {
	case modeConst:
		what = "dim values"
	case modeCond:
		what = "if conditions"
	}
	switch e := e.(type) {
	case *Number:
		if !e.isInt() {
			c.nodeErrorf(e, "%s must be integers, not %s", what, e.Text)
			return 0, false
		}
		v, err := strconv.ParseInt(e.Text, 10, 64)
		if err != nil {
			c.nodeErrorf(e, "integer %s out of range", e.Text)
			return 0, false
		}
		return v, true
	case *Name:
		b, lv := c.nameRef(e, mode)
		switch {
		case lv != nil:
			return lv.value, lv.known
		case b != nil && b.isConst:
			return b.value, b.known
		}
		return 0, false
	case *Unary:
		v, ok := c.intExpr(e.X, mode)
		if ok && v == math.MinInt64 {
			c.nodeErrorf(e, "integer overflow")
			return 0, false
		}
		return -v, ok
	case *Binary:
		if e.Op.Precedence() == precCompare {
			c.nodeErrorf(e, "%s cannot use comparisons", what)
			return 0, false
		}
		x, okx := c.intExpr(e.X, mode)
		y, oky := c.intExpr(e.Y, mode)
		if !okx || !oky {
			return 0, false
		}
		v, err := arith(e.Op, x, y)
		if err != "" {
			c.nodeErrorf(e, "%s", err)
			return 0, false
		}
		return v, true
	case *Call:
		if e.Func.Name == "meta" && (mode == modeConst || mode == modeCond) {
			c.meta(e)
			return 0, false
		}
		if e.Func.Name == "flag" && (mode == modeConst || mode == modeCond) {
			c.flag(e)
			return 0, false
		}
		c.nodeErrorf(e, "%s cannot call functions", what)
	case *String:
		c.nodeErrorf(e, "%s must be integers, not strings", what)
	}
	return 0, false
}

// arith returns x op y, or a message on overflow or division by zero.
func arith(op BinaryOp, x, y int64) (int64, string) {
	switch op {
	case OpAdd:
		if v := x + y; (v > x) == (y > 0) {
			return v, ""
		}
	case OpSub:
		if v := x - y; (v < x) == (y > 0) {
			return v, ""
		}
	case OpMul:
		if x == 0 || y == 0 {
			return 0, ""
		}
		if v := x * y; v/y == x && !(x == -1 && y == math.MinInt64) && !(y == -1 && x == math.MinInt64) {
			return v, ""
		}
	case OpDiv, OpRem:
		if y == 0 {
			return 0, "division by zero"
		}
		if x == math.MinInt64 && y == -1 {
			break
		}
		if op == OpDiv {
			return x / y, ""
		}
		return x % y, ""
	}
	return 0, "integer overflow"
}

// isInt reports whether the literal is an integer.
func (n *Number) isInt() bool {
	return n.Text != "inf" && !strings.ContainsAny(n.Text, ".eE")
}

// describe returns a name for a message: its source form, followed by the
// resolved name if it has interpolations.
func describe(n *Name, resolved string) string {
	if resolved == n.Text {
		return n.Text
	}
	return n.Text + " (" + resolved + ")"
}

// lineCol formats pos as line:col.
func lineCol(pos lexer.Position) string {
	return fmt.Sprintf("%d:%d", pos.Line, pos.Column)
}
