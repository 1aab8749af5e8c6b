package ir

import (
	"errors"
	"fmt"
)

// Verify checks the graph's structural invariants, and those of the plan as
// far as the passes have made it. Its messages name what was found and what
// was expected; any failure is a bug in graphc, not in the user's model.
func (g *Graph) Verify() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	pos := map[*Tensor]int{}
	for i, t := range g.Nodes {
		pos[t] = i
	}
	names := map[string]*Tensor{}
	check := func(t *Tensor) {
		if o := names[t.Name]; o != nil && o != t {
			bad("two tensors named %q", t.Name)
		}
		names[t.Name] = t
		info := t.Op.Info()
		if len(t.Src) < info.MinSrcs || len(t.Src) > info.MaxSrcs {
			bad("%s %s has %d srcs, want %d..%d", t.Op, t.Name, len(t.Src), info.MinSrcs, info.MaxSrcs)
		}
		for _, e := range append(t.Ne[:], t.Nb[:]...) {
			if e == nil {
				bad("%s has a nil dim or stride", t.Name)
				return
			}
		}
		if t.IsView() && t.ViewSrc.IsView() {
			bad("view %s has view source %s, want its root", t.Name, t.ViewSrc.Name)
		}
		if t.Op.IsView() && t.ViewSrc == nil {
			bad("%s %s has no view source", t.Op, t.Name)
		}
	}
	for _, t := range g.Leafs {
		check(t)
		if !t.IsLeaf() {
			bad("leaf %s has op %s", t.Name, t.Op)
		}
	}
	for i, t := range g.Nodes {
		check(t)
		if t.IsLeaf() {
			bad("node %s has no op", t.Name)
		}
		for _, s := range t.Src {
			if !g.InGraph(s) {
				bad("%s reads %s, which is not in the graph", t.Name, s.Name)
			} else if p, ok := pos[s]; ok && p >= i {
				bad("%s (node %d) reads %s (node %d) before it is computed", t.Name, i, s.Name, p)
			}
		}
	}
	assigned := len(g.Backends) > 0 && len(g.Splits) > 0
	if assigned {
		next := 0
		for k, s := range g.Splits {
			if s.First != next || s.End <= s.First || s.End > len(g.Nodes) {
				bad("split %d covers nodes [%d, %d), want it to start at %d", k, s.First, s.End, next)
			}
			next = s.End
			for _, t := range g.Nodes[s.First:min(s.End, len(g.Nodes))] {
				if t.Backend != s.Backend {
					bad("node %s on backend %d inside split %d of backend %d", t.Name, t.Backend, k, s.Backend)
				}
			}
		}
		if next != len(g.Nodes) {
			bad("splits cover %d of %d nodes", next, len(g.Nodes))
		}
	}
	return errors.Join(errs...)
}
