package passes

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// The greedy strategies know every lifetime before placing anything, which
// ggml-alloc, walking the nodes once, does not. Both place one item at a
// time at the best-fitting gap left by the already placed items whose
// lifetimes intersect its own, or on top of them:
//
//   - "greedy_size" places the largest items first (TFLite's arena planner
//     "greedy by size", XLA's GlobalDecreasingSizeBestFitHeap);
//   - "greedy_breadth" visits the steps with the most live bytes first and
//     places the items live there, largest first (TFLite "greedy by
//     breadth").
//
// An item is an in-place chain: a node that takes over a dying source's
// memory (allocationProblem.inPlaceCandidates, which unlike ggml-alloc also sees
// through reshapes and other views that start at their root) shares that
// source's offset, so the chain is placed as one interval of the first
// tensor's size.

// memGroup is an in-place chain of tensors sharing one offset: first, then
// memGroups.next[first] and so on to last.
type memGroup struct {
	first, last int32 // memTensor indices
	size        int64
	start, end  int32
	buf         int32
}

// memGroups are the in-place chains of a problem.
type memGroups struct {
	gs   []memGroup
	next []int32 // by memTensor: the next member of its chain, -1 at the end
}

// groups chains every tensor onto the first in-place candidate in its own
// buffer whose chain it can extend.
func (p *allocationProblem) groups() *memGroups {
	mg := &memGroups{next: make([]int32, len(p.tensors))}
	groupOf := make([]int32, len(p.tensors))
	for i := range p.tensors {
		m := &p.tensors[i]
		mg.next[i] = -1
		joined := false
		for _, r := range m.inplace {
			g := &mg.gs[groupOf[r]]
			if p.tensors[r].buf != m.buf || g.last != r {
				continue
			}
			mg.next[r], g.last = int32(i), int32(i)
			g.end = max(g.end, m.end)
			groupOf[i] = groupOf[r]
			joined = true
			break
		}
		if !joined {
			groupOf[i] = int32(len(mg.gs))
			mg.gs = append(mg.gs, memGroup{first: int32(i), last: int32(i), size: m.size, start: m.start, end: m.end, buf: m.buf})
		}
	}
	return mg
}

// segTree holds one value per item (in start order) and finds, among a
// prefix, every item whose value is at least a bound: with value = end of
// life, the items alive at or after a step.
type segTree struct {
	n    int
	vals []int32 // -1: absent
}

func newSegTree(n int) *segTree {
	size := 1
	for size < n {
		size *= 2
	}
	t := &segTree{n: size, vals: make([]int32, 2*size)}
	for i := range t.vals {
		t.vals[i] = -1
	}
	return t
}

func (t *segTree) set(pos int, v int32) {
	i := pos + t.n
	t.vals[i] = v
	for i /= 2; i >= 1; i /= 2 {
		t.vals[i] = max(t.vals[2*i], t.vals[2*i+1])
	}
}

// collect appends the positions < hi whose value is >= min.
func (t *segTree) collect(hi int, min int32, out []int32) []int32 {
	var walk func(node, lo, width int)
	walk = func(node, lo, width int) {
		if lo >= hi || t.vals[node] < min {
			return
		}
		if width == 1 {
			out = append(out, int32(lo))
			return
		}
		walk(2*node, lo, width/2)
		walk(2*node+1, lo+width/2, width/2)
	}
	walk(1, 0, t.n)
	return out
}

// placer places the items of one buffer.
type placer struct {
	size       []int64
	start, end []int32
	byStart    []int32 // item indices in start order
	rank       []int32 // item → position in byStart
	starts     []int32 // starts in byStart order
	placedTree *segTree

	maxChunk  int64 // 0: unlimited
	chunk     []int32
	off       []int64
	chunkSize []int64

	scratch []int32
	top     []int64 // per chunk: the end of the overlapping items
}

func newPlacer(gs []memGroup, items []int32, maxChunk int64) *placer {
	n := len(items)
	pl := &placer{size: make([]int64, n), start: make([]int32, n), end: make([]int32, n),
		byStart: make([]int32, n), rank: make([]int32, n), starts: make([]int32, n),
		placedTree: newSegTree(n), maxChunk: maxChunk, chunk: make([]int32, n), off: make([]int64, n)}
	for k, gi := range items {
		g := &gs[gi]
		pl.size[k], pl.start[k], pl.end[k] = g.size, g.start, g.end
		pl.byStart[k] = int32(k)
	}
	slices.SortStableFunc(pl.byStart, func(a, b int32) int { return cmp.Compare(pl.start[a], pl.start[b]) })
	for r, k := range pl.byStart {
		pl.rank[k] = int32(r)
		pl.starts[r] = pl.start[k]
	}
	return pl
}

// alive returns the positions (in start order) of the items in tree alive
// at some step of [from, to].
func (pl *placer) alive(tree *segTree, from, to int32, out []int32) []int32 {
	hi := sort.Search(len(pl.starts), func(i int) bool { return pl.starts[i] > to })
	return tree.collect(hi, from, out)
}

// place puts item k in the best-fitting gap among the placed items whose
// lifetimes intersect its own, else on top of them in the chunk that grows
// least, else in a new chunk.
func (pl *placer) place(k int32) {
	size := pl.size[k]
	if size == 0 {
		return // no memory: chunk 0, offset 0
	}
	pl.scratch = pl.alive(pl.placedTree, pl.start[k], pl.end[k], pl.scratch[:0])
	ov := pl.scratch
	for i, r := range ov {
		ov[i] = pl.byStart[r]
	}
	slices.SortFunc(ov, func(x, y int32) int {
		if c := cmp.Compare(pl.chunk[x], pl.chunk[y]); c != 0 {
			return c
		}
		return cmp.Compare(pl.off[x], pl.off[y])
	})
	bestChunk, bestOff, bestGap := int32(-1), int64(0), int64(math.MaxInt64)
	top := pl.top[:0]
	for range pl.chunkSize {
		top = append(top, 0)
	}
	pl.top = top
	for i := 0; i < len(ov); {
		c := pl.chunk[ov[i]]
		var prev int64
		for ; i < len(ov) && pl.chunk[ov[i]] == c; i++ {
			q := ov[i]
			if gap := pl.off[q] - prev; gap >= size && gap < bestGap {
				bestChunk, bestOff, bestGap = c, prev, gap
			}
			prev = max(prev, pl.off[q]+pl.size[q])
		}
		top[c] = prev
	}
	if bestChunk < 0 {
		growth := int64(math.MaxInt64)
		for c := range pl.chunkSize {
			if pl.maxChunk > 0 && top[c]+size > pl.maxChunk {
				continue
			}
			if g := max(0, top[c]+size-pl.chunkSize[c]); g < growth {
				bestChunk, bestOff, growth = int32(c), top[c], g
			}
		}
	}
	if bestChunk < 0 {
		bestChunk, bestOff = int32(len(pl.chunkSize)), 0
		pl.chunkSize = append(pl.chunkSize, 0)
	}
	pl.chunk[k], pl.off[k] = bestChunk, bestOff
	pl.chunkSize[bestChunk] = max(pl.chunkSize[bestChunk], bestOff+size)
	pl.placedTree.set(int(pl.rank[k]), pl.end[k])
}

// bySize places the largest items first; among equals the longest lived,
// then the earliest.
func (pl *placer) bySize() {
	order := make([]int32, len(pl.size))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(x, y int32) int {
		if c := cmp.Compare(pl.size[y], pl.size[x]); c != 0 {
			return c
		}
		if c := cmp.Compare(pl.end[y]-pl.start[y], pl.end[x]-pl.start[x]); c != 0 {
			return c
		}
		if c := cmp.Compare(pl.start[x], pl.start[y]); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	for _, k := range order {
		pl.place(k)
	}
}

// byBreadth visits steps by decreasing live bytes and places the items
// live there that are not placed yet, largest first.
func (pl *placer) byBreadth(steps int) {
	live := make([]int64, steps+1)
	for k := range pl.size {
		live[pl.start[k]] += pl.size[k]
		live[pl.end[k]+1] -= pl.size[k]
	}
	var order []int32
	for s := 0; s < steps; s++ {
		if s > 0 {
			live[s] += live[s-1]
		}
		if live[s] > 0 {
			order = append(order, int32(s))
		}
	}
	slices.SortStableFunc(order, func(x, y int32) int { return cmp.Compare(live[y], live[x]) })
	unplaced := newSegTree(len(pl.size))
	for k := range pl.size {
		unplaced.set(int(pl.rank[k]), pl.end[k])
	}
	var here []int32
	for _, s := range order {
		here = pl.alive(unplaced, s, s, here[:0])
		for i, r := range here {
			here[i] = pl.byStart[r]
			unplaced.set(int(r), -1)
		}
		slices.SortFunc(here, func(x, y int32) int {
			if c := cmp.Compare(pl.size[y], pl.size[x]); c != 0 {
				return c
			}
			if c := cmp.Compare(pl.start[x], pl.start[y]); c != 0 {
				return c
			}
			return cmp.Compare(x, y)
		})
		for _, k := range here {
			pl.place(k)
		}
	}
	// Items of size 0 are never live in bytes; they need no placing.
}

// greedyWorkLimit bounds the overlap pairs an optional greedy strategy may
// examine in one buffer: past it (graphs where most tensors live at once)
// "best" keeps ggml's plan rather than spending quadratic time.
const greedyWorkLimit = 50_000_000

// planGreedy runs one greedy strategy on every buffer. With limit > 0, a
// buffer whose lifetimes overlap too much is skipped.
func (p *allocationProblem) planGreedy(name string, breadth bool, limit int64) *memAssign {
	a := newMemAssign(name, p)
	if p.groupCache == nil {
		p.groupCache = p.groups()
	}
	mg := p.groupCache
	gs := mg.gs
	byBuf := make([][]int32, len(p.bufs))
	for i := range gs {
		byBuf[gs[i].buf] = append(byBuf[gs[i].buf], int32(i))
	}
	for b, items := range byBuf {
		if len(items) == 0 {
			continue
		}
		pl := newPlacer(gs, items, p.bufs[b].maxSize)
		if limit > 0 && overlapPairs(pl.start, pl.end) > limit {
			a.skipped[b] = true
			continue
		}
		if breadth {
			pl.byBreadth(len(p.steps))
		} else {
			pl.bySize()
		}
		a.chunks[b] = pl.chunkSize
		for k, gi := range items {
			for i := gs[gi].first; i >= 0; i = mg.next[i] {
				a.chunk[i], a.off[i] = pl.chunk[k], pl.off[k]
			}
		}
	}
	return a
}
