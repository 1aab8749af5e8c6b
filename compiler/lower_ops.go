package compiler

import (
	"fmt"
	"sort"
	"strings"

	"github.com/graphc/graphc/dsl"
	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
)

// opByName maps a DSL function to its op; ggml's spelled-out variants
// (view_2d, reshape_3d, cont_2d, soft_max_ext, rope_ext) are accepted too.
func opByName(name string) (ops.Op, bool) {
	switch name {
	case "view_1d", "view_2d", "view_3d", "view_4d":
		return ops.View, true
	case "reshape_1d", "reshape_2d", "reshape_3d", "reshape_4d":
		return ops.Reshape, true
	case "cont_1d", "cont_2d", "cont_3d", "cont_4d":
		return ops.Cont, true
	case "soft_max_ext":
		return ops.SoftMax, true
	case "rope_ext":
		return ops.Rope, true
	case "view":
		return 0, false // needs its rank: view_1d … view_4d
	}
	return ops.Lookup(name)
}

// tensorExpr lowers an expression that must be a tensor. name is the ir
// name for the tensor a call creates ("" for a size builtin's operand).
func (l *lowerer) tensorExpr(e dsl.Expr, name string) *ir.Tensor {
	switch e := e.(type) {
	case *dsl.Name:
		n := l.resolve(e)
		if t := l.scope[n]; t != nil && !l.failed[n] {
			return t
		}
		if l.absent[n] {
			l.absentError(e, n)
			return nil
		}
		if l.failed[n] {
			return nil // its definition's error was reported
		}
		if _, ok := l.dims[n]; ok {
			l.errorf(e, "%s is a dim; a tensor is needed here", n)
		} else if _, ok := l.loops[n]; ok {
			l.errorf(e, "%s is a loop variable; a tensor is needed here", n)
		} else if _, ok := l.params[n]; ok {
			l.errorf(e, "%s is a param (a number); a tensor is needed here", n)
		} else {
			l.errorf(e, "undefined: %s", n)
		}
	case *dsl.Call:
		return l.opCall(e, name)
	default:
		l.errorf(e, "%s is not a tensor", e)
	}
	return nil
}

// opCall lowers op(args…, key=value…) into a node.
func (l *lowerer) opCall(c *dsl.Call, name string) *ir.Tensor {
	fn := c.Func.Name
	op, ok := opByName(fn)
	if !ok {
		var known []string
		for _, o := range ops.All() {
			if o == ops.View {
				known = append(known, "view_1d…view_4d")
			} else {
				known = append(known, o.String())
			}
		}
		if fn == "view" {
			l.errorf(c.Func, "say view_1d, view_2d, view_3d or view_4d")
		} else {
			l.errorf(c.Func, "unknown op %s (known: %s)", fn, strings.Join(known, ", "))
		}
		return nil
	}
	if name == "" {
		name = l.tensorName(fn, true)
	}
	info := op.Info()
	var posArgs []*dsl.Arg
	keys := map[string]*dsl.Arg{}
	for _, a := range c.Args {
		if a.Key == nil {
			posArgs = append(posArgs, a)
			continue
		}
		if keys[a.Key.Name] != nil {
			l.errorf(a.Key, "%s: %s given twice", fn, a.Key.Name)
			return nil
		}
		keys[a.Key.Name] = a
	}

	// Tensor operands come first; optional ones (soft_max's and
	// flash_attn_ext's mask) are the positional arguments given beyond.
	nt := info.MinSrcs
	if info.MaxSrcs > nt && len(posArgs) > nt {
		nt = min(len(posArgs), info.MaxSrcs)
	}
	if len(posArgs) < nt {
		l.errorf(c, "%s takes %d tensor operands, got %d arguments", fn, nt, len(posArgs))
		return nil
	}
	var srcs []*ir.Tensor
	var left *dsl.Arg // an optional operand left out: an absent `or none` weight
	for i, a := range posArgs[:nt] {
		if n, ok := a.Value.(*dsl.Name); ok && i >= info.MinSrcs && l.absent[l.resolve(n)] && l.scope[l.resolve(n)] == nil {
			left = a
			continue
		}
		if left != nil {
			l.errorf(a, "%s: %s is absent, so it cannot be left out before this operand", fn, left.Value)
			return nil
		}
		t := l.tensorExpr(a.Value, l.sub(name, a.Value, i))
		if t == nil {
			return nil
		}
		srcs = append(srcs, t)
	}
	rest := posArgs[nt:]

	var args ir.Args
	ints := func(min, max int) []*ir.Expr {
		if len(rest) < min || len(rest) > max {
			if min == max {
				l.errorf(c, "%s takes %d integer arguments after its tensor, got %d", fn, min, len(rest))
			} else {
				l.errorf(c, "%s takes %d to %d integer arguments after its tensor, got %d", fn, min, max, len(rest))
			}
			return nil
		}
		var out []*ir.Expr
		for _, a := range rest {
			v := l.intExpr(a.Value)
			if v == nil {
				return nil
			}
			out = append(out, v)
		}
		return out
	}
	rank := 0
	if i := strings.LastIndex(fn, "_"); i > 0 && strings.HasSuffix(fn, "d") && len(fn) == i+3 {
		rank = int(fn[i+1] - '0')
	}
	switch op {
	case ops.View:
		v := ints(2*rank, 2*rank)
		if v == nil {
			return nil
		}
		args.Ne, args.Nb, args.Offset = v[:rank], v[rank:2*rank-1], v[2*rank-1]
	case ops.Reshape, ops.Cont:
		lo, hi := 1, 4
		if rank > 0 {
			lo, hi = rank, rank
		}
		if op == ops.Cont && rank == 0 {
			lo = 0
		}
		v := ints(lo, hi)
		if v == nil && (lo > 0 || len(rest) > 0) {
			return nil
		}
		args.Ne = v
	case ops.Permute:
		v := ints(4, 4)
		if v == nil {
			return nil
		}
		var p ops.PermuteParams
		for i, e := range v {
			c, ok := e.Constant()
			if !ok {
				l.errorf(rest[i], "permute axes must be constants")
				return nil
			}
			p.Axes[i] = int(c)
		}
		args.Params = p
	case ops.Scale:
		if len(rest) == 1 && keys["s"] == nil {
			keys["s"] = rest[0]
			rest = nil
		}
		fallthrough
	default:
		if len(rest) > 0 {
			l.errorf(rest[0], "%s: unexpected argument; it takes %d tensor operand(s)%s", fn, nt, keyList(op))
			return nil
		}
	}
	if !l.keyParams(c, op, keys, &args.Params) {
		return nil
	}
	t, err := l.g.NewOp(op, name, srcs, args, pos(c.Pos))
	if err != nil {
		l.errorf(c, "%s", err)
		return nil
	}
	return t
}

// keys are op's keyword parameters, the fields of its table row's Params
// that have a key.
func keys(op ops.Op) []ops.Field {
	p := op.Info().Params
	if p == nil {
		return nil
	}
	var ks []ops.Field
	for _, f := range ops.Fields(p) {
		if f.Key != "" {
			ks = append(ks, f)
		}
	}
	return ks
}

// paramList names op's keyword parameters for an error message.
func paramList(op ops.Op) string {
	if len(keys(op)) == 0 {
		return " (it has none)"
	}
	return " (parameters: " + strings.Join(keyNames(op), " ") + ")"
}

// keyNames lists op's keyword parameters as they are written, "name=".
func keyNames(op ops.Op) []string {
	var names []string
	for _, k := range keys(op) {
		names = append(names, k.Key+"=")
	}
	return names
}

// keyList names op's keyword parameters after its operands, for the
// message about an extra operand.
func keyList(op ops.Op) string {
	if len(keys(op)) == 0 {
		return ""
	}
	return " and keyword parameters " + strings.Join(keyNames(op), ", ")
}

// keyParams applies keyword arguments and defaults to *p, which holds
// op's Params or nil (then its zero value).
func (l *lowerer) keyParams(c *dsl.Call, op ops.Op, given map[string]*dsl.Arg, p *ops.Params) bool {
	if *p == nil {
		*p = op.Info().Params
	}
	ok := true
	known := map[string]bool{}
	for _, k := range keys(op) {
		known[k.Key] = true
		a := given[k.Key]
		if a == nil {
			if k.Required {
				l.errorf(c, "%s: missing %s=", c.Func.Name, k.Key)
				ok = false
			}
			*p = k.Set(*p, k.Default)
			continue
		}
		v, good := l.number(a.Value)
		if !good {
			ok = false
			continue
		}
		*p = k.Set(*p, v)
	}
	var unknown []string
	for name := range given {
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	for _, name := range unknown {
		l.errorf(given[name].Key, "%s has no parameter %s%s", c.Func.Name, name, paramList(op))
		ok = false
	}
	if ch, isChecker := (*p).(ops.Checker); ok && isChecker {
		if key, err := ch.Check(); err != nil {
			var at dsl.Node = c
			if a := given[key]; a != nil {
				at = a
			}
			l.errorf(at, "%s: %v", c.Func.Name, err)
			ok = false
		}
	}
	return ok
}

// sub names the tensor a nested call creates: "<outer>.<op>".
func (l *lowerer) sub(outer string, e dsl.Expr, i int) string {
	c, ok := e.(*dsl.Call)
	if !ok {
		return ""
	}
	return l.tensorName(fmt.Sprintf("%s.%s", strings.SplitN(outer, "#", 2)[0], c.Func.Name), false)
}
