package passes

import (
	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
)

// groupProducts gathers the mul_mats of a split that read one activation
// through weights of one type their backend packs (a layer's Q, K and V;
// its gate and up) into consecutive nodes, in their order, and marks each
// such run a group (ir.Tensor.Group on its first node), up to the
// backend's GroupProducts: the program runs a group as one call
// (cpu.Backend.MulMats), which for a generated token quantizes the
// activation once and streams the group's weights as one long product —
// on its own a small product, such as a 0.6 MB K, streams well below the
// bandwidth of long ones — and makes the threads wait for each other once
// per group.
// Results are bit for bit those of one call per product.
//
// A later product moves up to the group's first past the nodes between
// them: it reads only the activation, computed before the first, and a
// weight. It does not move past a node that writes into the activation's
// memory (a cpy into it) or past a parallel region's nodes.
//
// ggml has no counterpart: ggml_backend_sched runs the nodes of a split in
// graph order (llama.cpp computes Q, K and V in one product only for
// models that ship one fused wqkv weight). On with pack_weights, whose
// packed weights it groups. It moves nodes only within a split and
// changes no backend, split or copy; plan_memory, after it, lays out the
// moved products' results for their new lifetimes. Traces (ggmltrace)
// describe no packing backend and are not affected.
//
// See testdata/group_products/.
func groupProducts(g *ir.Graph, pc *Context) error {
	for _, t := range g.Nodes {
		t.Group = 0
	}
	groupable := func(t *ir.Tensor) bool {
		if t.Op != ops.MulMat || t.Backend < 0 || pc.Backends[t.Backend].GroupProducts < 2 {
			return false
		}
		w := t.Src[0]
		return w.IsPacked() && w.Packed.Backend == t.Backend
	}
	for _, s := range g.Splits {
		for i := s.First; i < s.End; i++ {
			t := g.Nodes[i]
			if !groupable(t) || g.RegionOf(i) != nil {
				continue
			}
			x := t.Src[1]
			mem := x
			if x.ViewSrc != nil {
				mem = x.ViewSrc
			}
			limit := pc.Backends[t.Backend].GroupProducts
			n := 1
			for j := i + 1; j < s.End && n < limit; j++ {
				u := g.Nodes[j]
				if g.RegionOf(j) != nil || !u.Op.IsView() && u.ViewSrc == mem {
					break
				}
				if !groupable(u) || u.Src[1] != x || u.Src[0].Type != t.Src[0].Type {
					continue
				}
				copy(g.Nodes[i+n+1:j+1], g.Nodes[i+n:j])
				g.Nodes[i+n] = u
				n++
			}
			if n < 2 {
				continue
			}
			t.Group = n
			for _, u := range g.Nodes[i+1 : i+n] {
				pc.Notef(u.Pos, "%s: runs with %s in one call on %s (both read %s through packed weights)", u.Name, t.Name, pc.Backends[t.Backend].Name, x.Name)
			}
			i += n - 1
		}
	}
	return nil
}
