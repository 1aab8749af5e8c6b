package passes

import (
	"fmt"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
)

// planRegions groups the nodes of every split whose backend runs parts
// (Backend.Parts, the CPU) into parallel regions (ir.Region): maximal runs
// of nodes that can all be cut along one count of units — the tokens of a
// batch — so that each thread runs every node of the run on its own units
// with no barrier in between. A node joins the current region when some
// slice of its result needs, from each source, either exactly the slice
// the same part wrote earlier in the region or a tensor complete before
// the region that nothing in the region writes; a read of memory the
// region writes through another tensor (the attention product reading the
// KV cache the region's copies fill) starts a new region. Large nodes, and
// nodes every part would have to read a large source for, stay out of
// regions (maxNodeBytes, maxShared): regions are for the many small nodes
// of small batches.
// Regions with fewer than two computed nodes are not worth their barrier
// and are dropped.
//
// ggml has no such pass: ggml_graph_compute (ggml-cpu.c,
// ggml_graph_compute_thread) splits every node over all threads and meets
// at a barrier after each; a thousand small nodes make a thousand
// barriers. The plan proves once which barriers are unnecessary.
//
// Off unless Options.Regions (its row in the pass table): the regions change how long tensors live
// (plan_memory keeps every tensor a region touches alive through the whole
// region), so the memory plan no longer matches ggml-alloc's.
//
// See testdata/plan_regions/.
func planRegions(g *ir.Graph, pc *Context) error {
	g.Regions = nil
	for _, s := range g.Splits {
		if !pc.Backends[s.Backend].Parts {
			continue
		}
		f := regionFinder{g: g}
		for i := s.First; i < s.End; i++ {
			f.node(i)
		}
		f.close()
	}
	for _, r := range g.Regions {
		pc.Notef(g.Nodes[r.First].Pos, "region over %s: %s … %s, %d nodes without a barrier",
			r.Units, g.Nodes[r.First].Name, g.Nodes[r.End-1].Name, len(r.Dst))
	}
	return nil
}

// regionFinder grows one region at a time over a split's nodes.
type regionFinder struct {
	g           *ir.Graph
	cur         *ir.Region
	first, last int      // indexes of cur's first and last computed nodes
	prev        *ir.Expr // the units of the last region kept, preferred for the next
	parts       map[*ir.Tensor]partOf
	// written maps the memory roots cur writes to the node writing them;
	// read holds the roots cur reads as complete tensors.
	written map[*ir.Tensor]*ir.Tensor
	read    map[*ir.Tensor]bool
}

// partOf is how a tensor computed (or viewed) in the current region is
// spread over the parts; a view no slice describes is unusable.
type partOf struct {
	slice    ir.Slice
	unusable bool
}

func (f *regionFinder) node(i int) {
	t := f.g.Nodes[i]
	if t.Op.IsView() {
		if f.cur != nil {
			if p, ok := f.parts[t.Src[0]]; ok {
				s, ok := viewSlice(t, p, f.cur.Units)
				f.parts[t] = partOf{slice: s, unusable: !ok}
			}
		}
		return
	}
	if f.cur != nil {
		if d, srcs, ok := f.fit(t, f.cur.Units); ok {
			f.add(i, t, d, srcs)
			return
		}
		f.close()
	}
	for _, u := range f.unitChoices(t) {
		f.open(u)
		if d, srcs, ok := f.fit(t, u); ok {
			f.add(i, t, d, srcs)
			return
		}
	}
	f.cur = nil
}

func (f *regionFinder) open(units *ir.Expr) {
	f.cur = &ir.Region{Units: units, Dst: map[*ir.Tensor]ir.Slice{}, Src: map[*ir.Tensor][]ir.Slice{}}
	f.parts = map[*ir.Tensor]partOf{}
	f.written = map[*ir.Tensor]*ir.Tensor{}
	f.read = map[*ir.Tensor]bool{}
}

// close ends the current region, keeping it if it has two computed nodes.
func (f *regionFinder) close() {
	r := f.cur
	f.cur = nil
	if r == nil || len(r.Dst) < 2 {
		return
	}
	r.First, r.End = f.first, f.last+1
	f.g.Regions = append(f.g.Regions, r)
	f.prev = r.Units
}

// unitChoices are the counts a region starting at t may cut: the previous
// region's, then t's dims from the outermost, each at least 2 at the
// bounds (fewer is no parallelism).
func (f *regionFinder) unitChoices(t *ir.Tensor) []*ir.Expr {
	var out []*ir.Expr
	seen := func(e *ir.Expr) bool {
		for _, o := range out {
			if ir.Equal(o, e) {
				return true
			}
		}
		return false
	}
	if f.prev != nil {
		out = append(out, f.prev)
	}
	for k := 3; k >= 0; k-- {
		if e := t.Ne[k]; e.AtBounds() >= 2 && !seen(e) {
			out = append(out, e)
		}
	}
	return out
}

func (f *regionFinder) add(i int, t *ir.Tensor, d ir.Slice, srcs []ir.Slice) {
	r := f.cur
	if len(r.Dst) == 0 {
		f.first = i
	}
	r.Dst[t], r.Src[t] = d, srcs
	f.parts[t] = partOf{slice: d}
	f.written[t.Root()] = t
	for k, s := range t.Src {
		if _, ok := f.parts[s]; !ok && !isCpyDest(t, k) {
			f.read[s.Root()] = true
		}
	}
	f.last = i
}

// fit finds the slice of t's result, and the slices of its sources, that
// let t join the current region cutting units; ok is false when none does.
func (f *regionFinder) fit(t *ir.Tensor, units *ir.Expr) (d ir.Slice, srcs []ir.Slice, ok bool) {
	for axis := 3; axis >= 0; axis-- {
		per, ok := perUnit(t.Ne[axis], units)
		if !ok {
			continue
		}
		d := ir.Slice{Axis: axis, Per: per}
		srcs, ok := regionRule(t, d, units)
		if ok && t.MaxBytes() <= maxNodeBytes && sharedSmall(t, srcs) && f.compatible(t, srcs) {
			return d, srcs, true
		}
	}
	return ir.Slice{}, nil, false
}

// compatible reports whether t may read its sources as srcs and write its
// result inside the current region without a barrier.
func (f *regionFinder) compatible(t *ir.Tensor, srcs []ir.Slice) bool {
	for k, s := range t.Src {
		if isCpyDest(t, k) {
			continue
		}
		if p, ok := f.parts[s]; ok {
			if p.unusable || p.slice != srcs[k] {
				return false // another part wrote some of what this part would read
			}
			continue
		}
		if _, ok := f.written[s.Root()]; ok {
			return false // complete only after the region
		}
	}
	root := t.Root()
	if f.read[root] {
		return false // an earlier node of the region reads what t overwrites
	}
	if w, ok := f.written[root]; ok && w != t {
		return false
	}
	return true
}

// maxShared is the most bytes a source every part reads whole may have:
// each part reads it (a weight matrix, from L2 or L3, once per part), so a
// large one would multiply the memory traffic by the parts. Above it the
// node stays out of regions and splits its rows over the threads instead,
// each reading its share once (a 4096×1024 f32 product on a batch of 16
// took 11% longer as a region; the 64×64 ones of the tiny llama fit in L2).
const maxShared = 1 << 20

// maxNodeBytes is the largest result (at the dims' bounds) a node of a
// region may have. A larger node takes long enough that the barrier after
// it is noise, while a region would keep its memory alive through the whole
// region (plan_memory): such a node is computed alone, split over the
// threads.
const maxNodeBytes = 1 << 20

// sharedSmall reports whether every source t reads whole is small enough to
// be read by every part (maxShared).
func sharedSmall(t *ir.Tensor, srcs []ir.Slice) bool {
	for k, s := range srcs {
		if s.IsWhole() && !isCpyDest(t, k) && t.Src[k].MaxBytes() > maxShared {
			return false
		}
	}
	return true
}

// isCpyDest reports whether source k of t is a cpy's destination, which
// t writes and does not read.
func isCpyDest(t *ir.Tensor, k int) bool { return t.Op == ops.Cpy && k == 1 }

// perUnit returns n / units when n is that constant multiple of units.
func perUnit(n, units *ir.Expr) (int64, bool) {
	nb, ub := n.AtBounds(), units.AtBounds()
	if ub <= 0 || nb < ub || nb%ub != 0 {
		return 0, false
	}
	per := nb / ub
	return per, ir.Equal(n, ir.Mul(ir.Const(per), units))
}

// regionRule gives, for node t writing slice d of its result, the slices
// of its sources each part reads; ok is false when t cannot be cut that
// way. The rules follow each kernel's indexing (runtime/cpu).
func regionRule(t *ir.Tensor, d ir.Slice, units *ir.Expr) (srcs []ir.Slice, ok bool) {
	k := d.Axis
	// bcast is a source repeated to t's shape: cut like t, or read whole
	// where it has a single element along the axis.
	bcast := func(s *ir.Tensor) (ir.Slice, bool) {
		if ir.Equal(s.Ne[k], t.Ne[k]) {
			return d, true
		}
		if c, ok := s.Ne[k].Constant(); ok && c == 1 {
			return ir.Whole, true
		}
		return ir.Slice{}, false
	}
	all := func(fns ...func() (ir.Slice, bool)) ([]ir.Slice, bool) {
		out := make([]ir.Slice, len(fns))
		for i, fn := range fns {
			s, ok := fn()
			if !ok {
				return nil, false
			}
			out[i] = s
		}
		return out, true
	}
	src := func(i int) func() (ir.Slice, bool) { return func() (ir.Slice, bool) { return bcast(t.Src[i]) } }
	fixed := func(s ir.Slice) func() (ir.Slice, bool) { return func() (ir.Slice, bool) { return s, true } }
	if t.Op.Info().Flags&ops.FlagElementwise != 0 {
		// Every kernel of an elementwise op indexes its sources as its
		// result, repeating a smaller one.
		fns := make([]func() (ir.Slice, bool), len(t.Src))
		for i := range t.Src {
			fns[i] = src(i)
		}
		return all(fns...)
	}
	switch t.Op {
	case ops.RMSNorm, ops.Norm:
		if k == 0 {
			return nil, false
		}
		return all(src(0))
	case ops.FlashAttnExt:
		// Its kernel splits the heads and tokens, or the keys, itself.
		return nil, false
	case ops.MulMatID:
		// Its kernel groups the tokens by expert and splits each expert's
		// product itself.
		return nil, false
	case ops.ArgSort, ops.TopK, ops.SumRows:
		if k == 0 {
			return nil, false
		}
		return all(src(0))
	case ops.SoftMax:
		// ALiBi slopes depend on the head index, which a cut along dim 2
		// would renumber.
		if k == 0 || (k == 2 && t.Params.(ops.SoftMaxParams).MaxBias != 0) {
			return nil, false
		}
		if len(t.Src) == 1 {
			return all(src(0))
		}
		return all(src(0), src(1))
	case ops.Rope:
		if m := t.Params.(ops.RopeParams).Mode; k == 0 || (m != 0 && m != ops.RopeNeox) {
			return nil, false
		}
		pos := fixed(ir.Whole)
		if k == 2 {
			if !ir.Equal(t.Src[1].Ne[0], t.Ne[2]) {
				return nil, false
			}
			pos = fixed(ir.Slice{Axis: 0, Per: d.Per})
		}
		return all(src(0), pos)
	case ops.GetRows:
		table, idx := t.Src[0], t.Src[1]
		if k != 1 || !isOne(table.Ne[2]) || !isOne(table.Ne[3]) || !ir.Equal(idx.Ne[0], t.Ne[1]) {
			return nil, false
		}
		return all(fixed(ir.Whole), fixed(ir.Slice{Axis: 0, Per: d.Per}))
	case ops.MulMat:
		a, x := t.Src[0], t.Src[1]
		switch k {
		case 1:
			return all(fixed(ir.Whole), fixed(d))
		case 2, 3:
			if isOne(a.Ne[k]) {
				return all(fixed(ir.Whole), fixed(d))
			}
			if ir.Equal(a.Ne[k], x.Ne[k]) {
				return all(fixed(d), fixed(d))
			}
		}
		return nil, false
	case ops.Cont, ops.Cpy:
		var s ir.Slice
		if sameShape(t.Src[0], t) {
			s = d
		} else if s, ok = flatSlice(t, d, t.Src[0], units); !ok {
			return nil, false
		}
		if t.Op == ops.Cpy {
			return []ir.Slice{s, d}, true
		}
		return []ir.Slice{s}, true
	}
	panic(fmt.Sprintf("BUG: op %s has no region rule in regionRule (passes/plan_regions.go)", t.Op))
}

// viewSlice maps the slice p of a view's source to the view: which
// elements of the view each part holds.
func viewSlice(v *ir.Tensor, p partOf, units *ir.Expr) (ir.Slice, bool) {
	if p.unusable {
		return ir.Slice{}, false
	}
	s := p.slice
	switch v.Op {
	case ops.Permute:
		return ir.Slice{Axis: v.Params.(ops.PermuteParams).Axes[s.Axis], Per: s.Per}, true
	case ops.Transpose:
		if s.Axis < 2 {
			s.Axis = 1 - s.Axis
		}
		return s, true
	case ops.Reshape:
		return flatSlice(v.Src[0], s, v, units)
	case ops.View:
		return ir.Slice{}, false // arbitrary offset and strides: no slice maps in general
	}
	panic(fmt.Sprintf("BUG: view op %s has no rule in viewSlice (passes/plan_regions.go)", v.Op))
}

// flatSlice maps slice s of a to b, a tensor holding the same elements in
// the same order with another shape (a reshape, or a copy between shapes):
// possible when both are cut along their outermost dim longer than one,
// into equal runs of elements.
func flatSlice(a *ir.Tensor, s ir.Slice, b *ir.Tensor, units *ir.Expr) (ir.Slice, bool) {
	run, ok := innerElems(a, s.Axis)
	if !ok || outermost(a) != s.Axis {
		return ir.Slice{}, false
	}
	run *= s.Per
	axis := outermost(b)
	inner, ok := innerElems(b, axis)
	if !ok || inner == 0 || run%inner != 0 {
		return ir.Slice{}, false
	}
	per := run / inner
	if !ir.Equal(b.Ne[axis], ir.Mul(ir.Const(per), units)) {
		return ir.Slice{}, false
	}
	return ir.Slice{Axis: axis, Per: per}, true
}

// outermost is t's last dim not constantly 1 (0 for a single element).
func outermost(t *ir.Tensor) int {
	for k := 3; k > 0; k-- {
		if !isOne(t.Ne[k]) {
			return k
		}
	}
	return 0
}

// innerElems is the constant number of elements below dim axis.
func innerElems(t *ir.Tensor, axis int) (int64, bool) {
	n := int64(1)
	for k := 0; k < axis; k++ {
		c, ok := t.Ne[k].Constant()
		if !ok {
			return 0, false
		}
		n *= c
	}
	return n, true
}

func isOne(e *ir.Expr) bool { c, ok := e.Constant(); return ok && c == 1 }

func sameShape(a, b *ir.Tensor) bool {
	for k := range a.Ne {
		if !ir.Equal(a.Ne[k], b.Ne[k]) {
			return false
		}
	}
	return true
}
