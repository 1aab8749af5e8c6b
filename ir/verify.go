package ir

import (
	"errors"
	"fmt"

	"github.com/graphc/graphc/ops"
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
		if err := CheckSizes(t); err != nil {
			bad("%s: %v", t.Name, err)
			return
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
		g.verifySplits(bad)
		g.verifyRegions(bad)
	}
	g.verifyPacked(bad)
	g.verifyGroups(bad)
	return errors.Join(errs...)
}

// verifyPacked checks that only weights have packed copies, each made by
// a backend of the target that runs a mul_mat (or mul_mat_id) reading the
// weight itself: a copy nobody reads is memory wasted, and codegen would
// make it.
func (g *Graph) verifyPacked(bad func(string, ...any)) {
	readers := map[*Tensor]map[int]bool{}
	for _, t := range g.Nodes {
		if (t.Op == ops.MulMat || t.Op == ops.MulMatID) && len(t.Src) > 0 {
			if readers[t.Src[0]] == nil {
				readers[t.Src[0]] = map[int]bool{}
			}
			readers[t.Src[0]][t.Backend] = true
		}
	}
	for _, t := range g.Tensors {
		p := t.Packed
		switch {
		case p == Packing{}:
		case t.Kind != KindWeight || p.Bytes <= 0:
			bad("%s %s has a packed copy of %d bytes, want only weights packed, with a size", t.Kind, t.Name, p.Bytes)
		case p.Backend < 0 || p.Backend >= len(g.Backends):
			bad("weight %s is packed by backend %d, want one of the %d backends", t.Name, p.Backend, len(g.Backends))
		case !readers[t][p.Backend]:
			bad("weight %s is packed for %s, where no mul_mat reads it", t.Name, g.Backends[p.Backend].Name)
		}
	}
}

// verifyGroups checks product groups: each is consecutive mul_mat nodes of
// one backend, in one split, reading one activation, each through a weight
// that backend packs; no node belongs to two.
func (g *Graph) verifyGroups(bad func(string, ...any)) {
	splitOf := func(i int) int {
		for k, s := range g.Splits {
			if s.First <= i && i < s.End {
				return k
			}
		}
		return -1
	}
	for i := 0; i < len(g.Nodes); i++ {
		t := g.Nodes[i]
		if t.Group == 0 {
			continue
		}
		if t.Group < 2 || i+t.Group > len(g.Nodes) {
			bad("%s leads a group of %d products, want at least 2 within the %d nodes", t.Name, t.Group, len(g.Nodes))
			continue
		}
		split := splitOf(i)
		for j, m := range g.Nodes[i : i+t.Group] {
			switch {
			case m.Op != ops.MulMat || m.Src[1] != t.Src[1] || m.Backend != t.Backend:
				bad("%s in %s's group: %s reading %s on backend %d, want mul_mat reading %s on %d", m.Name, t.Name, m.Op, m.Src[min(1, len(m.Src)-1)].Name, m.Backend, t.Src[1].Name, t.Backend)
			case m.Src[0].Packed.Bytes == 0 || m.Src[0].Packed.Backend != t.Backend:
				bad("%s in %s's group reads %s, which its backend does not pack", m.Name, t.Name, m.Src[0].Name)
			case j > 0 && m.Group != 0:
				bad("%s leads a group inside %s's", m.Name, t.Name)
			case splitOf(i+j) != split:
				bad("%s's group crosses from split %d to %d", t.Name, split, splitOf(i+j))
			}
		}
		i += t.Group - 1
	}
}

// verifySplits checks the plan split_graph made: the splits cover the
// nodes in order, each non-view node runs on its split's backend (ggml
// does not split at view ops, which run nowhere), and no node reads a
// tensor from another backend's memory that its backend cannot read
// without going through a copy made for its split's backend.
func (g *Graph) verifySplits(bad func(string, ...any)) {
	next := 0
	for k, s := range g.Splits {
		if s.First != next || s.End <= s.First || s.End > len(g.Nodes) {
			bad("split %d covers nodes [%d, %d), want it to start at %d", k, s.First, s.End, next)
		}
		next = s.End
		if s.Backend < 0 || s.Backend >= len(g.Backends) {
			bad("split %d has backend %d, want one of the %d backends", k, s.Backend, len(g.Backends))
			continue
		}
		be := g.Backends[s.Backend]
		for _, t := range g.Nodes[min(s.First, len(g.Nodes)):min(s.End, len(g.Nodes))] {
			if t.Backend < 0 || t.Backend >= len(g.Backends) {
				bad("node %s has backend %d after splitting, want one of the %d backends", t.Name, t.Backend, len(g.Backends))
				continue
			}
			if t.Op.IsView() {
				continue
			}
			if t.Backend != s.Backend {
				bad("node %s on backend %d inside split %d of backend %d", t.Name, t.Backend, k, s.Backend)
			}
			for _, src := range t.Src {
				if src.Kind == KindCopy {
					if src.Backend != s.Backend {
						bad("node %s in split %d reads copy %s on backend %d, want a copy on backend %d", t.Name, k, src.Name, src.Backend, s.Backend)
					}
					continue
				}
				if src.Backend == s.Backend {
					continue
				}
				if bt, ok := g.BufferTypeOf(src); !ok || !be.ReadsBufferType(bt) {
					bad("node %s on %s reads %s from backend %d (buffer type %q) without a copy", t.Name, be.Name, src.Name, src.Backend, bt)
				}
			}
		}
		for i, in := range s.Inputs {
			if in.Experts != nil {
				verifyExpertCopy(g, k, s, i, bad)
			}
			if len(in.Copies) != max(g.NCopies, 1) {
				bad("split %d input %s has %d copies, want %d", k, in.Tensor.Name, len(in.Copies), max(g.NCopies, 1))
			}
			for _, c := range in.Copies {
				if c.Kind != KindCopy || c.CopyOf != in.Tensor || c.Backend != s.Backend {
					bad("split %d input %s: %s (%s on backend %d) is not a copy of it on backend %d", k, in.Tensor.Name, c.Name, c.Kind, c.Backend, s.Backend)
				}
			}
		}
	}
	if next != len(g.Nodes) {
		bad("splits cover %d of %d nodes", next, len(g.Nodes))
	}
	for _, in := range g.InputCopies {
		if len(in.Copies) != g.NCopies || len(in.Copies) == 0 || in.Copies[0] != in.Tensor {
			bad("graph input %s has %d versions, want %d starting with itself", in.Tensor.Name, len(in.Copies), g.NCopies)
			continue
		}
		for _, c := range in.Copies[1:] {
			if c.Kind != KindCopy || c.CopyOf != in.Tensor || c.Backend != in.Tensor.Backend {
				bad("graph input %s: version %s is not a copy of it on its backend %d", in.Tensor.Name, c.Name, in.Tensor.Backend)
			}
		}
	}
}

// verifyExpertCopy checks input i of split k, an expert copy: the split's
// first node is a mul_mat_id reading the copy as its experts, the input
// is a weight in host memory, and the ids are the node's, or the original
// of a later input of the split whose copy the node reads.
func verifyExpertCopy(g *Graph, k int, s *Split, i int, bad func(string, ...any)) {
	in := s.Inputs[i]
	if s.First >= s.End {
		bad("split %d: expert copy %s in a split without nodes", k, in.Tensor.Name)
		return
	}
	node := g.Nodes[s.First]
	if node.Op != ops.MulMatID || len(in.Copies) == 0 || node.Src[0] != in.Copies[0] {
		bad("split %d: expert copy %s, but its first node %s (%s) is no mul_mat_id of it", k, in.Tensor.Name, node.Name, node.Op)
		return
	}
	if in.Tensor.Kind != KindWeight || in.Tensor.IsView() {
		bad("split %d: expert copy of %s, which is no weight", k, in.Tensor.Name)
	} else if p := g.PlacedBackend(in.Tensor); p < 0 || !g.Backends[p].Host {
		bad("split %d: expert copy of %s, which is not in host memory", k, in.Tensor.Name)
	}
	ids := in.Experts.IDs
	if ids == node.Src[2] {
		return
	}
	for _, later := range s.Inputs[i+1:] {
		if later.Tensor == ids && later.Copies[0] == node.Src[2] {
			return
		}
	}
	bad("split %d: expert copy %s reads its ids from %s, neither %s's ids %s nor a later input copied into them", k, in.Tensor.Name, ids.Name, node.Name, node.Src[2].Name)
}
