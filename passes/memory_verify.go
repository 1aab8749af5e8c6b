package passes

import (
	"errors"
	"fmt"

	"github.com/graphc/graphc/ir"
)

// VerifyMemory checks a graph's memory plan, as plan_memory leaves it,
// independently of how it was made:
//
//   - every tensor of the plan has the Alloc its kind calls for, compute
//     tensors in their backend's buffer (or, reused in place, in their
//     source's), aligned, inside their chunk;
//   - every read of compute memory happens after the write that fills it;
//   - no two tensors whose lifetimes intersect overlap in memory, where a
//     tensor's life runs from its write (0 for graph inputs) to the last
//     step reading it or a view of it, to the end for outputs and, with
//     NCopies > 1, for inputs and copies;
//   - the only exception is in-place reuse where allowed: a node whose op
//     can run in place, writing at the address of a source it reads once,
//     with its layout, whose root dies at that node and is not pinned;
//   - buffers: one per buffer type, chunks summing to Size, LowerBound <=
//     Size <= NaiveSize, NaiveSize the sum of the aligned sizes.
//
// The steps are those of the evaluation: graph inputs at step 0, then per
// split one step per input copy and one per node (memory_problem.go).
func VerifyMemory(g *ir.Graph) error {
	v := &memVerifier{g: g, byID: make([]*verifyTensor, len(g.Tensors)), extra: map[*ir.Tensor]*verifyTensor{}}
	v.buffers()
	v.schedule()
	v.tensors()
	v.lifetimes()
	v.regions()
	v.overlaps()
	if v.dropped > 0 {
		v.errs = append(v.errs, fmt.Errorf("and %d more problems", v.dropped))
	}
	return errors.Join(v.errs...)
}

var allocKindNames = map[ir.AllocKind]string{ir.AllocNone: "none", ir.AllocView: "view", ir.AllocCompute: "compute",
	ir.AllocWeight: "weight", ir.AllocState: "state"}

type memVerifier struct {
	g       *ir.Graph
	errs    []error
	dropped int

	bufOfType map[string]int
	steps     []verifyStep
	byID      []*verifyTensor // compute tensors by ID (g.Tensors[ID] == t)
	extra     map[*ir.Tensor]*verifyTensor
	order     []*verifyTensor // compute tensors, in order of first sight
	copyBE    map[*ir.Tensor]int
	spans     [][2]int32 // steps of the parallel regions
}

// verifyStep is one point of the evaluation the verifier replays: a node's
// write, or a split input's copy.
type verifyStep struct {
	node  *ir.Tensor   // nil for the start and copies
	write *ir.Tensor   // the tensor whose memory the step writes, if any
	reads []*ir.Tensor // as read, copies substituted
}

// verifyTensor is what the verifier knows of one compute tensor.
type verifyTensor struct {
	t                 *ir.Tensor
	backend           int
	buf, chunk        int
	off, size         int64
	write, start, end int32
	written, pinned   bool
	inPlace           bool // placed over a dying source it may reuse
	misplaced         bool // its buffer or chunk does not exist
}

func (v *memVerifier) info(t *ir.Tensor) *verifyTensor {
	if t.ID >= 0 && t.ID < len(v.g.Tensors) && v.g.Tensors[t.ID] == t {
		return v.byID[t.ID]
	}
	return v.extra[t]
}

func (v *memVerifier) setInfo(t *ir.Tensor, vt *verifyTensor) {
	if t.ID >= 0 && t.ID < len(v.g.Tensors) && v.g.Tensors[t.ID] == t {
		v.byID[t.ID] = vt
	} else {
		v.extra[t] = vt
	}
}

func (v *memVerifier) bad(format string, a ...any) {
	if len(v.errs) >= 20 {
		v.dropped++
		return
	}
	v.errs = append(v.errs, fmt.Errorf(format, a...))
}

func (v *memVerifier) buffers() {
	g := v.g
	v.bufOfType = map[string]int{}
	for k, b := range g.Buffers {
		if _, dup := v.bufOfType[b.BufferType]; dup {
			v.bad("two buffers of type %s", b.BufferType)
		}
		v.bufOfType[b.BufferType] = k
		if b.Alignment <= 0 || b.Alignment&(b.Alignment-1) != 0 {
			v.bad("buffer %s: alignment %d, want a power of two", b.BufferType, b.Alignment)
		}
		var sum int64
		for _, c := range b.Chunks {
			if c < 0 {
				v.bad("buffer %s: chunk of %d bytes, want a size >= 0", b.BufferType, c)
				continue
			}
			sum = ir.SumBytes(sum, c)
		}
		if sum != b.Size {
			v.bad("buffer %s: chunks %v sum to %d, want Size %d", b.BufferType, b.Chunks, sum, b.Size)
		}
		if b.LowerBound > b.Size || b.Size > b.NaiveSize {
			v.bad("buffer %s: want lower bound %d <= size %d <= naive %d", b.BufferType, b.LowerBound, b.Size, b.NaiveSize)
		}
	}
	for _, be := range g.Backends {
		if _, ok := v.bufOfType[be.BufferType]; !ok {
			v.bad("no buffer for buffer type %s of backend %s", be.BufferType, be.Name)
		}
	}
}

// schedule lists the steps, substituting for each source read by a node the
// copy its split's backend received (the first split on a backend to need
// a tensor copies it; later ones reuse that copy).
func (v *memVerifier) schedule() {
	g := v.g
	splits := g.Splits
	if len(splits) == 0 && len(g.Nodes) > 0 {
		splits = []*ir.Split{{Backend: g.Nodes[0].Backend, First: 0, End: len(g.Nodes)}}
	}
	v.copyBE = map[*ir.Tensor]int{}
	redirect := map[copyKey]*ir.Tensor{}
	nSteps := 1 + len(g.Nodes)
	for _, s := range splits {
		nSteps += len(s.Inputs)
	}
	v.steps = make([]verifyStep, 1, nSteps)
	for k, s := range splits {
		for _, in := range s.Inputs {
			if len(in.Copies) == 0 {
				v.bad("split %d: input %s has no copy", k, in.Tensor.Name)
				continue
			}
			for _, c := range in.Copies {
				v.copyBE[c] = s.Backend
			}
			redirect[copyKey{in.Tensor, s.Backend}] = in.Copies[0]
			v.steps = append(v.steps, verifyStep{write: in.Copies[0], reads: []*ir.Tensor{in.Tensor}})
		}
		if s.First < 0 || s.First > s.End || s.End > len(g.Nodes) {
			v.bad("split %d covers nodes [%d, %d) of %d", k, s.First, s.End, len(g.Nodes))
			continue
		}
		for _, n := range g.Nodes[s.First:s.End] {
			st := verifyStep{node: n, reads: n.Src}
			if len(redirect) > 0 {
				st.reads = make([]*ir.Tensor, len(n.Src))
				for j, x := range n.Src {
					if c, ok := redirect[copyKey{x, s.Backend}]; ok {
						x = c
					}
					st.reads[j] = x
				}
			}
			if n.ViewSrc == nil {
				st.write = n
			}
			v.steps = append(v.steps, st)
		}
	}
	for _, in := range g.InputCopies {
		for _, c := range in.Copies {
			if c != in.Tensor {
				v.copyBE[c] = in.Tensor.Backend
			}
		}
	}
}

// tensors checks every tensor's Alloc and records the compute ones.
func (v *memVerifier) tensors() {
	g := v.g
	pipelined := g.NCopies > 1
	check := func(t *ir.Tensor, write int32, extra bool) {
		want := ir.AllocCompute
		switch {
		case t.ViewSrc != nil:
			want = ir.AllocView
		case t.Kind == ir.KindWeight:
			want = ir.AllocWeight
		case t.Kind == ir.KindState:
			want = ir.AllocState
		}
		if t.Alloc.Kind != want {
			v.bad("%s: alloc %s, want %s", t.Name, allocKindNames[t.Alloc.Kind], allocKindNames[want])
			return
		}
		if want != ir.AllocCompute {
			return
		}
		vt := v.info(t)
		if vt == nil {
			be := t.Backend
			if b, ok := v.copyBE[t]; ok {
				if be >= 0 && be != b {
					v.bad("copy %s is on backend %d, its split's is %d", t.Name, be, b)
				}
				be = b
			}
			if be < 0 || be >= len(g.Backends) {
				v.bad("%s has no backend", t.Name)
				return
			}
			a := t.Alloc
			vt = &verifyTensor{t: t, backend: be, buf: a.Buffer, chunk: a.Chunk, off: a.Offset, size: maxBytes(t), write: -1, start: -1}
			v.setInfo(t, vt)
			v.order = append(v.order, vt)
			if a.Buffer < 0 || a.Buffer >= len(g.Buffers) {
				v.bad("%s is in buffer %d of %d", t.Name, a.Buffer, len(g.Buffers))
				vt.misplaced = true
				return
			}
			b := g.Buffers[a.Buffer]
			if b.Alignment > 0 && a.Offset%b.Alignment != 0 {
				v.bad("%s at offset %d in %s, not a multiple of the alignment %d", t.Name, a.Offset, b.BufferType, b.Alignment)
			}
			if vt.size > 0 {
				if a.Chunk < 0 || a.Chunk >= len(b.Chunks) {
					v.bad("%s in chunk %d of %s's %d", t.Name, a.Chunk, b.BufferType, len(b.Chunks))
					vt.misplaced = true
				} else if a.Offset < 0 || a.Offset+vt.size > b.Chunks[a.Chunk] {
					v.bad("%s at [%d, %d) outside %s chunk %d of %d bytes", t.Name, a.Offset, a.Offset+vt.size, b.BufferType, a.Chunk, b.Chunks[a.Chunk])
				}
			}
			vt.pinned = t.Output || extra || (pipelined && (t.Kind == ir.KindInput || t.Kind == ir.KindCopy))
			if extra || (pipelined && (t.Kind == ir.KindInput || t.Kind == ir.KindCopy)) {
				vt.start = 0
			}
		}
		if write < 0 {
			return
		}
		if vt.written {
			v.bad("%s is written at steps %d and %d", t.Name, vt.write, write)
			return
		}
		vt.written, vt.write = true, write
		if vt.start < 0 {
			vt.start = write
		}
	}
	for _, t := range g.Leafs {
		check(t, 0, false) // written by the caller before the evaluation
	}
	for _, in := range g.InputCopies {
		for _, c := range in.Copies {
			if c != in.Tensor {
				check(c, 0, true)
			}
		}
	}
	for s, st := range v.steps {
		if st.write != nil {
			check(st.write, int32(s), false)
		} else if st.node != nil {
			check(st.node, -1, false)
		}
	}
	for _, s := range g.Splits {
		for _, in := range s.Inputs {
			for _, c := range in.Copies[min(1, len(in.Copies)):] {
				check(c, 0, true)
			}
		}
	}
	for _, vt := range v.order {
		if !vt.written {
			v.bad("%s needs compute memory but no step writes it", vt.t.Name)
		}
	}
	// NaiveSize is every tensor in its own aligned memory.
	naive := make([]int64, len(g.Buffers))
	for _, vt := range v.order {
		if vt.buf >= 0 && vt.buf < len(g.Buffers) {
			naive[vt.buf] += alignUp(vt.size, max(g.Buffers[vt.buf].Alignment, 1))
		}
	}
	for k, b := range g.Buffers {
		if naive[k] != b.NaiveSize {
			v.bad("buffer %s: naive size %d, want %d (the sum of its tensors' aligned sizes)", b.BufferType, b.NaiveSize, naive[k])
		}
	}
}

// lifetimes extends every tensor's life to its last read and checks that
// reads follow writes.
func (v *memVerifier) lifetimes() {
	last := int32(len(v.steps) - 1)
	for _, vt := range v.order {
		vt.end = vt.write
		if vt.pinned {
			vt.end = last
		}
	}
	for s, st := range v.steps {
		for _, x := range st.reads {
			r := v.info(x.Root())
			if r == nil {
				if needsCompute(x.Root()) {
					v.bad("step %d reads %s, which has no compute memory", s, x.Root().Name)
				}
				continue
			}
			if r.write >= int32(s) {
				v.bad("step %d reads %s before step %d writes it", s, r.t.Name, r.write)
			}
			r.end = max(r.end, int32(s))
		}
		if st.node != nil && st.node.ViewSrc != nil && st.node.Output {
			if r := v.info(st.node.ViewSrc); r != nil {
				r.pinned, r.end = true, last
			}
		}
	}
}

// regions stretches lifetimes over the parallel regions they touch: a
// region's parts run at their own pace, so nothing it frees is reusable
// before it ends.
func (v *memVerifier) regions() {
	if len(v.g.Regions) == 0 {
		return
	}
	stepOf := map[*ir.Tensor]int32{}
	for s, st := range v.steps {
		if st.node != nil {
			stepOf[st.node] = int32(s)
		}
	}
	v.spans = regionSpans(v.g, stepOf)
	for _, vt := range v.order {
		if vt.written {
			widenForRegions(&vt.start, &vt.end, v.spans)
		}
	}
}

type liveRange struct {
	buf, chunk int
	off        int64
	vt         *verifyTensor
}

// overlaps sweeps the steps, keeping the live tensors of every chunk in
// address order: a tensor coming to life must not overlap any of them, but
// for the source it reuses in place.
func (v *memVerifier) overlaps() {
	g := v.g
	n := len(v.steps)
	starts := make([][]*verifyTensor, n)
	ends := make([][]*verifyTensor, n)
	for _, vt := range v.order {
		if vt.size == 0 || vt.misplaced || !vt.written {
			continue
		}
		starts[vt.start] = append(starts[vt.start], vt)
		ends[vt.end] = append(ends[vt.end], vt)
	}
	live := newOrderedSet(func(a, b liveRange) bool {
		if a.buf != b.buf {
			return a.buf < b.buf
		}
		if a.chunk != b.chunk {
			return a.chunk < b.chunk
		}
		return a.off < b.off
	})
	key := func(vt *verifyTensor) liveRange { return liveRange{vt.buf, vt.chunk, vt.off, vt} }
	for s := 0; s < n; s++ {
		if s > 0 {
			for _, vt := range ends[s-1] {
				if cur, ok := live.Ceil(key(vt)); ok && cur.vt == vt {
					live.Delete(key(vt))
				}
			}
		}
		for _, vt := range starts[s] {
			var hits []*verifyTensor
			k := key(vt)
			if p, ok := live.Floor(k); ok && p.buf == vt.buf && p.chunk == vt.chunk && p.off+p.vt.size > vt.off {
				hits = append(hits, p.vt)
			}
			for q, ok := live.Higher(k); ok && q.buf == vt.buf && q.chunk == vt.chunk && q.off < vt.off+vt.size; q, ok = live.Higher(q) {
				hits = append(hits, q.vt)
			}
			for _, q := range hits {
				if v.inPlaceOK(vt, q, int32(s)) {
					vt.inPlace = true
					live.Delete(key(q))
					continue
				}
				v.bad("%s [%d, %d) and %s [%d, %d) overlap in %s chunk %d while both live (steps %d..%d and %d..%d)",
					vt.t.Name, vt.off, vt.off+vt.size, q.t.Name, q.off, q.off+q.size, g.Buffers[vt.buf].BufferType, vt.chunk,
					vt.start, vt.end, q.start, q.end)
			}
			live.Insert(k)
		}
	}
	for _, vt := range v.order {
		own, ok := v.bufOfType[g.Backends[vt.backend].BufferType]
		if ok && !vt.misplaced && own != vt.buf && !vt.inPlace {
			v.bad("%s is in buffer %s, but its backend %s uses %s and it reuses no source in place", vt.t.Name,
				g.Buffers[vt.buf].BufferType, g.Backends[vt.backend].Name, g.Backends[vt.backend].BufferType)
		}
	}
}

// inPlaceOK reports whether vt, written at step s, may take over q's memory:
// its op can run in place, it reads q exactly once through a source with its
// own layout that starts at q's first byte, at its own address, and q is
// neither pinned nor read after s.
func (v *memVerifier) inPlaceOK(vt, q *verifyTensor, s int32) bool {
	st := &v.steps[s]
	if q.end != s || q.pinned || st.node == nil || st.node != vt.t || !vt.t.Op.CanInPlace() || inSpans(s, v.spans) {
		return false
	}
	if vt.buf != q.buf || vt.chunk != q.chunk || vt.off != q.off || vt.size > q.size {
		return false
	}
	uses := 0
	var via *ir.Tensor
	for _, x := range st.reads {
		if x.Root() == q.t {
			uses++
			via = x
		}
	}
	return uses == 1 && startsAtRoot(via) && sameLayout(vt.t, via)
}
