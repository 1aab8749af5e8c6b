package ir

import (
	"fmt"
	"sort"
	"strings"
)

// A Region is a run of one split's nodes that a multi-threaded backend
// runs as independent parts, one per thread, with no barrier between its
// nodes: part p of P computes, for every node, only the elements of units
// split(Units, p, P) along the node's slice axis, and reads only what the
// same part wrote earlier in the region or what was complete before it.
// ggml instead synchronises all threads after every node
// (ggml_graph_compute_thread's barrier); with about a thousand small nodes
// per evaluation those barriers cost as much as the arithmetic.
//
// Units is what the parts divide, the same for every node: for a batch of
// tokens it is n_tokens, and the region's nodes are the per-token ones
// between two attention products.
type Region struct {
	First, End int   // g.Nodes[First:End], all in one split
	Units      *Expr // the count of units cut into parts
	// Dst is the slice of each computed node's result a part writes; Src
	// the slices of its sources it reads, in source order. Views are not
	// computed: their consumers' Src say how they are read.
	Dst map[*Tensor]Slice
	Src map[*Tensor][]Slice
}

// Slice is the part of a tensor one part of a region touches: along Axis,
// Per elements per unit; Axis < 0 is the whole tensor.
type Slice struct {
	Axis int
	Per  int64
}

// Whole is the slice covering the whole tensor, for every part.
var Whole = Slice{Axis: -1}

// IsWhole reports whether s covers the whole tensor.
func (s Slice) IsWhole() bool { return s.Axis < 0 }

func (s Slice) String() string {
	if s.IsWhole() {
		return "whole"
	}
	if s.Per == 1 {
		return fmt.Sprintf("ne%d", s.Axis)
	}
	return fmt.Sprintf("ne%d*%d", s.Axis, s.Per)
}

// RegionOf returns the region holding node index i, or nil. Regions are in
// node order, so it searches: printers ask for every node of large graphs.
func (g *Graph) RegionOf(i int) *Region {
	k := sort.Search(len(g.Regions), func(k int) bool { return g.Regions[k].End > i })
	if k < len(g.Regions) && g.Regions[k].First <= i {
		return g.Regions[k]
	}
	return nil
}

// regionHeader is Format's line opening region r.
func (g *Graph) regionHeader(r *Region) string {
	return fmt.Sprintf("region over %s: %s … %s\n", r.Units, g.Nodes[r.First].Name, g.Nodes[r.End-1].Name)
}

// regionSlices is Format's note on node t of a region: the slice it writes
// and those it reads.
func regionSlices(r *Region, t *Tensor) string {
	d, ok := r.Dst[t]
	if !ok {
		return ""
	}
	srcs := make([]string, len(r.Src[t]))
	for k, s := range r.Src[t] {
		srcs[k] = s.String()
	}
	return fmt.Sprintf(" part %s←%s", d, strings.Join(srcs, ","))
}

// verifyRegions checks that regions lie in order inside single splits, and
// that every slice cuts an axis that is Per·Units long.
func (g *Graph) verifyRegions(bad func(string, ...any)) {
	next := 0
	for k, r := range g.Regions {
		if r.First < next || r.End <= r.First || r.End > len(g.Nodes) || r.Units == nil {
			bad("region %d covers nodes [%d, %d), want a non-empty range from %d", k, r.First, r.End, next)
			continue
		}
		next = r.End
		in := false
		for _, s := range g.Splits {
			in = in || (s.First <= r.First && r.End <= s.End)
		}
		if !in {
			bad("region %d [%d, %d) is not inside one split", k, r.First, r.End)
		}
		check := func(t *Tensor, s Slice, what string) {
			if s.IsWhole() {
				return
			}
			if s.Axis > 3 || s.Per < 1 || !Equal(t.Ne[s.Axis], Mul(Const(s.Per), r.Units)) {
				bad("region %d: %s %s sliced as %s, but its ne%d is %s, not a multiple of %s", k, what, t.Name, s, s.Axis, t.Ne[min(max(s.Axis, 0), 3)], r.Units)
			}
		}
		for _, t := range g.Nodes[r.First:r.End] {
			d, ok := r.Dst[t]
			if t.Op.IsView() {
				if ok {
					bad("region %d: view %s has a slice of its own", k, t.Name)
				}
				continue
			}
			if !ok || d.IsWhole() {
				bad("region %d: node %s has no slice", k, t.Name)
				continue
			}
			check(t, d, "node")
			if len(r.Src[t]) != len(t.Src) {
				bad("region %d: node %s has %d source slices, want %d", k, t.Name, len(r.Src[t]), len(t.Src))
				continue
			}
			for i, s := range r.Src[t] {
				check(t.Src[i], s, "source")
			}
		}
	}
}
