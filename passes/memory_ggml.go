package passes

import (
	"math"

	"github.com/graphc/graphc/ir"
)

// The "ggml" strategy: ggml-alloc's decisions, offset for offset, on the
// graph copy ggml_backend_sched hands it (ggml-org/ggml src/ggml-alloc.c,
// ggml_gallocr_alloc_graph_impl; src/ggml-backend.cpp, the end of
// ggml_backend_sched_split_graph). It walks the nodes in order, allocating
// each from a best-fit free list and freeing each parent after its last
// consumer, so the planned size depends on node order and on the history of
// the free list. The conformance traces' offsets are its oracle.
//
// Deliberate differences, none of which the traces exercise:
//   - a root whose view is an output is never freed nor reused in place
//     (ggml checks only the root's own output flag: once the output
//     view's consumers are done it frees the root or lets a node
//     overwrite it);
//   - a split input's copy is allocated before its original may be freed
//     (see forEachNode);
//   - zero-byte tensors take no part in allocation (offset 0);
//   - no limit of 256 free blocks per chunk (ggml aborts past it).

const (
	ggmlMaxChunks = 16      // GGML_VBUFFER_MAX_CHUNKS
	ggmlUnlimited = 1 << 62 // stands for SIZE_MAX/2: larger than any plan
)

// freeBlock is a free range of a chunk.
type freeBlock struct{ off, size int64 }

// ggmlChunk is one chunk of ggml_dyn_tallocr: its free blocks by address,
// and all but the last by size, so that the best fit is a tree lookup
// instead of ggml's scan (same answer, O(log n)).
type ggmlChunk struct {
	byAddr  *orderedSet[freeBlock]
	bySize  *orderedSet[freeBlock] // size ascending, then address descending
	last    freeBlock              // highest-address block, which ggml treats apart
	hasLast bool
	maxSize int64 // high-water mark: the chunk's allocated size
}

func newGGMLChunk(size int64) *ggmlChunk {
	c := &ggmlChunk{
		byAddr: newOrderedSet(func(a, b freeBlock) bool { return a.off < b.off }),
		bySize: newOrderedSet(func(a, b freeBlock) bool {
			return a.size < b.size || (a.size == b.size && a.off > b.off)
		}),
	}
	c.insert(freeBlock{0, size})
	return c
}

func (c *ggmlChunk) insert(b freeBlock) {
	c.byAddr.Insert(b)
	switch {
	case !c.hasLast:
		c.last, c.hasLast = b, true
	case b.off > c.last.off:
		c.bySize.Insert(c.last)
		c.last = b
	default:
		c.bySize.Insert(b)
	}
}

func (c *ggmlChunk) remove(b freeBlock) {
	c.byAddr.Delete(b)
	if c.hasLast && b.off == c.last.off {
		c.last, c.hasLast = c.byAddr.Max()
		if c.hasLast {
			c.bySize.Delete(c.last)
		}
		return
	}
	c.bySize.Delete(b)
}

// bestFit is ggml's choice among a chunk's blocks but the last: the
// smallest that fits, the highest address among equals (its scan keeps the
// last block with size <= the best so far).
func (c *ggmlChunk) bestFit(size int64) (freeBlock, bool) {
	return c.bySize.Ceil(freeBlock{off: math.MaxInt64, size: size})
}

// ggmlDynAlloc mirrors ggml_dyn_tallocr: one per buffer type.
type ggmlDynAlloc struct {
	align    int64
	maxChunk int64
	chunks   []*ggmlChunk
}

func newGGMLDynAlloc(b memBuffer) *ggmlDynAlloc {
	mc := int64(ggmlUnlimited)
	if b.maxSize > 0 && b.maxSize < mc {
		mc = b.maxSize
	}
	return &ggmlDynAlloc{align: b.align, maxChunk: mc}
}

// alloc mirrors ggml_dyn_tallocr_alloc.
func (a *ggmlDynAlloc) alloc(size int64) (int32, int64) {
	size = alignUp(size, a.align)
	best := -1
	var block freeBlock
	// The best fit among every chunk's blocks but its last; a later chunk
	// with any fitting block wins (ggml resets best_fit_size per chunk).
	for c, ch := range a.chunks {
		if b, ok := ch.bestFit(size); ok {
			best, block = c, b
		}
	}
	if best < 0 {
		// The last blocks, which may grow their chunk: prefer one that
		// needs no growth and wastes least, else the least growth.
		bestReuse := int64(math.MinInt64)
		for c, ch := range a.chunks {
			if !ch.hasLast {
				continue
			}
			b := ch.last
			reuse := ch.maxSize - b.off - size
			betterReuse := bestReuse < 0 && reuse > bestReuse
			betterFit := reuse >= 0 && reuse < bestReuse
			if b.size >= size && (betterReuse || betterFit) {
				best, block, bestReuse = c, b, reuse
			}
		}
	}
	if best < 0 {
		if len(a.chunks) >= ggmlMaxChunks {
			panic("BUG: ggml allocator: out of chunks")
		}
		n := max(size, a.maxChunk)
		if len(a.chunks) == ggmlMaxChunks-1 {
			n = ggmlUnlimited
		}
		a.chunks = append(a.chunks, newGGMLChunk(n))
		best = len(a.chunks) - 1
		block = a.chunks[best].last
	}
	ch := a.chunks[best]
	ch.remove(block)
	if block.size > size {
		ch.insert(freeBlock{block.off + size, block.size - size})
	}
	ch.maxSize = max(ch.maxSize, block.off+size)
	return int32(best), block.off
}

// free mirrors ggml_dyn_tallocr_free_bytes: merge with the block ending
// where the range starts (and then the next), or the block starting where
// it ends, or insert a new block.
func (a *ggmlDynAlloc) free(chunk int32, off, size int64) {
	size = alignUp(size, a.align)
	ch := a.chunks[chunk]
	if prev, ok := ch.byAddr.Floor(freeBlock{off: off}); ok && prev.off+prev.size == off {
		ch.remove(prev)
		merged := freeBlock{prev.off, prev.size + size}
		if next, ok := ch.byAddr.Higher(freeBlock{off: off}); ok && merged.off+merged.size == next.off {
			ch.remove(next)
			merged.size += next.size
		}
		ch.insert(merged)
		return
	}
	if next, ok := ch.byAddr.Higher(freeBlock{off: off}); ok && off+size == next.off {
		ch.remove(next)
		ch.insert(freeBlock{off, next.size + size})
		return
	}
	ch.insert(freeBlock{off, size})
}

// ggmlAlloc mirrors ggml_gallocr over the problem's steps.
type ggmlAlloc struct {
	p         *allocationProblem
	allocs    []*ggmlDynAlloc // by buffer
	nChildren []int32         // by tensor id
	nViews    []int32
	allocated []bool
	out       *memAssign
}

// planGGML runs ggml-alloc's algorithm.
func (p *allocationProblem) planGGML() *memAssign {
	n := len(p.mem)
	a := &ggmlAlloc{p: p, nChildren: make([]int32, n), nViews: make([]int32, n), allocated: make([]bool, n),
		out: newMemAssign("ggml", p)}
	for _, b := range p.bufs {
		a.allocs = append(a.allocs, newGGMLDynAlloc(b))
	}

	// Leafs first: inputs (and pipeline copies) are never overwritten
	// before they are read.
	for _, t := range p.leafOrder {
		if i := p.memOf(t); i >= 0 {
			a.allocate(t, int(p.tensors[i].buf))
		}
	}

	// Count children and views; allocate explicit inputs.
	a.forEachNode(func(t *ir.Tensor, srcs []*ir.Tensor, buf int, dep bool) {
		if t != nil && t.ViewSrc != nil && !dep {
			a.nViews[p.ids.id(t.ViewSrc)]++
		}
		if t != nil && a.isInput(t) {
			a.allocate(t, buf)
		}
		for _, s := range srcs {
			a.nChildren[p.ids.id(s)]++
			if a.isInput(s) {
				a.allocate(s, buf)
			}
		}
	})

	// Allocate in order, freeing parents after their last consumer.
	a.forEachNode(func(t *ir.Tensor, srcs []*ir.Tensor, buf int, dep bool) {
		for _, s := range srcs {
			a.allocate(s, buf)
		}
		if !dep {
			a.allocate(t, buf)
		}
		for _, s := range srcs {
			sid := p.ids.id(s)
			a.nChildren[sid]--
			if a.nChildren[sid] != 0 || a.nViews[sid] != 0 {
				continue
			}
			if s.ViewSrc != nil {
				vid := p.ids.id(s.ViewSrc)
				a.nViews[vid]--
				if a.nViews[vid] == 0 && a.nChildren[vid] == 0 && a.allocated[vid] {
					a.free(s.ViewSrc)
				}
			} else if a.allocated[sid] {
				a.free(s)
			}
		}
	})

	for b, al := range a.allocs {
		for _, ch := range al.chunks {
			a.out.chunks[b] = append(a.out.chunks[b], ch.maxSize)
		}
	}
	return a.out
}

// forEachNode walks ggml_backend_sched's graph copy: for each split, each
// input's copy and its "input_dep" view (dep: it reads the original,
// keeping it alive until the copy), then the split's nodes. ggml puts the
// dep first, so the original may be freed before the copy is allocated;
// graphc allocates the copy first. The two orders place everything the
// same unless the original lives in the copy's buffer (only after an
// in-place reuse across buffers), where ggml's order could put the copy
// on top of the original it is copied from.
func (a *ggmlAlloc) forEachNode(f func(t *ir.Tensor, srcs []*ir.Tensor, buf int, dep bool)) {
	for _, st := range a.p.steps {
		switch st.kind {
		case stepCopy:
			f(st.t, nil, st.buf, false)
			f(nil, []*ir.Tensor{st.src}, st.srcBuf, true)
		case stepNode:
			f(st.t, st.reads, st.buf, false)
		}
	}
}

func (a *ggmlAlloc) isInput(t *ir.Tensor) bool {
	i := a.p.memOf(t)
	return i >= 0 && a.p.tensors[i].ggmlIn
}

// allocate mirrors ggml_gallocr_allocate_node.
func (a *ggmlAlloc) allocate(t *ir.Tensor, buf int) {
	p := a.p
	i := p.memOf(t)
	id := p.ids.id(t)
	if i < 0 || a.allocated[id] {
		return // a view, a weight or state, or already placed
	}
	m := &p.tensors[i]
	a.allocated[id] = true
	if m.raw == 0 {
		a.out.buf[i], a.out.chunk[i], a.out.off[i] = int32(buf), 0, 0
		return
	}
	if t.Op.CanInPlace() {
		for _, s := range a.inPlaceSources(t) {
			sid := p.ids.id(s)
			// Only memory ggml-alloc owns and still holds: never views
			// (so its view-parent branch never fires), weights, state
			// or freed tensors.
			if !a.allocated[sid] || p.mem[sid] < 0 {
				continue
			}
			pi := p.mem[sid]
			if p.tensors[pi].pinned || !sameLayout(t, s) {
				continue
			}
			if a.nChildren[sid] == 1 && a.nViews[sid] == 0 {
				a.out.buf[i], a.out.chunk[i], a.out.off[i] = a.out.buf[pi], a.out.chunk[pi], a.out.off[pi]
				a.allocated[sid] = false
				a.freeExtra(i, pi)
				return
			}
		}
	}
	a.out.buf[i] = int32(buf)
	a.out.chunk[i], a.out.off[i] = a.allocs[buf].alloc(m.raw)
}

// inPlaceSources are the node's sources as its step reads them.
func (a *ggmlAlloc) inPlaceSources(t *ir.Tensor) []*ir.Tensor {
	return a.p.steps[a.p.tensors[a.p.memOf(t)].write].reads
}

// freeExtra mirrors ggml_gallocr_free_extra_space: a node smaller than the
// parent it reuses gives back the parent's tail.
func (a *ggmlAlloc) freeExtra(i, pi int32) {
	b := a.out.buf[pi]
	al := a.allocs[b]
	ps := alignUp(a.p.tensors[pi].raw, al.align)
	ns := alignUp(a.p.tensors[i].raw, al.align)
	if ps > ns {
		al.free(a.out.chunk[pi], a.out.off[pi]+ns, ps-ns)
	}
}

// free mirrors ggml_gallocr_free_node; outputs are never freed.
func (a *ggmlAlloc) free(t *ir.Tensor) {
	p := a.p
	i := p.memOf(t)
	if p.tensors[i].pinned {
		return
	}
	a.allocated[p.ids.id(t)] = false
	if p.tensors[i].raw == 0 {
		return
	}
	b := a.out.buf[i]
	a.allocs[b].free(a.out.chunk[i], a.out.off[i], p.tensors[i].raw)
}
