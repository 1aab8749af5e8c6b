package cpu

import (
	"slices"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// TopK is ggml_top_k: each row of dst (i32, [k, ne1, ne2, ne3]) holds the
// indices of the k largest values of a's row. ggml leaves their order
// unspecified; ggml-cpu gives them descending with the first two swapped
// (std::partial_sort, then a swap "to emphasize that the order is not
// important"), and so does this kernel, so that a sum over the chosen
// entries adds in ggml's order. Equal values keep their index order.
//
// It selects rather than sorts: the k best seen, which a value enters only
// if it beats their worst, so a row costs about n comparisons plus the
// few entries (kept sorted by insertion for a small k, in a heap for a
// large one).
func (b *Backend) TopK(dst, a *tensor.Tensor, p ops.TopKParams) {
	t := &b.moe.topK
	*t = topKTask{b: b}
	t.d.set("TopK", "dst", dst)
	t.a.set("TopK", "a", a)
	k := p.K
	if t.d.typ != tensor.I32 || !isFloat(t.a.typ) || k < 1 || k > t.a.ne[0] ||
		t.d.ne != [4]int{k, t.a.ne[1], t.a.ne[2], t.a.ne[3]} {
		bug("TopK: dst %v%v, a %v%v, k %d", t.d.typ, t.d.ne, t.a.typ, t.a.ne, k)
	}
	s := &b.moe
	for len(s.order) < b.pool.n {
		s.order = append(s.order, nil)
	}
	for i := range b.pool.n {
		s.order[i] = slices.Grow(s.order[i][:0], k)[:k]
	}
	b.growScratch(b.pool.n, t.a.ne[0]+k)
	b.parallel(t, t.a.nrows()*(t.a.ne[0]+k*bitsLen(k)), t.a.nrows())
	*t = topKTask{}
}

type topKTask struct {
	b    *Backend
	d, a tview
}

func (t *topKTask) run(chunk, nchunks, tid int) {
	d, a := &t.d, &t.a
	n, k := a.ne[0], d.ne[0]
	heap := t.b.moe.order[tid][:k]
	buf, vals := t.b.scratch[tid][:n], t.b.scratch[tid][n:n+k]
	lo, hi := split(a.nrows(), chunk, nchunks)
	for r := lo; r < hi; r++ {
		v := a.loadRow(a.rowOff(r), buf)
		topKRow(heap, vals, v)
		if k > 1 {
			heap[0], heap[1] = heap[1], heap[0]
		}
		o := d.rowOff(r)
		for i, x := range heap {
			d.i32[o+i*d.st[0]] = x
		}
	}
}

// topKInsertMax is the largest k topKRow keeps sorted by insertion,
// which moves up to k entries per value entering.
const topKInsertMax = 32

// topKRow sets top to the indices of v's len(top) largest values,
// descending, equal values by index; vals (as long as top) is scratch.
func topKRow(top []int32, vals, v []float32) {
	k := len(top)
	if k <= topKInsertMax {
		topKInsert(top, vals[:k], v)
		return
	}
	// better: index i ranks before j.
	better := func(i, j int32) bool { return v[i] > v[j] || v[i] == v[j] && i < j }
	// top is a heap with its worst at the root.
	down := func(i int) {
		for {
			w := i
			if l := 2*i + 1; l < k && better(top[w], top[l]) {
				w = l
			}
			if r := 2*i + 2; r < k && better(top[w], top[r]) {
				w = r
			}
			if w == i {
				return
			}
			top[i], top[w] = top[w], top[i]
			i = w
		}
	}
	for i := range top {
		top[i] = int32(i)
	}
	for i := k/2 - 1; i >= 0; i-- {
		down(i)
	}
	worst := v[top[0]]
	for j := k; j < len(v); j++ {
		// An index after the heap's wins only by a larger value.
		if x := v[j]; x > worst {
			top[0] = int32(j)
			down(0)
			worst = v[top[0]]
		}
	}
	slices.SortFunc(top, func(i, j int32) int {
		switch {
		case i == j:
			return 0
		case better(i, j):
			return -1
		}
		return 1
	})
}

// topKInsert is topKRow keeping the best seen sorted, their values in
// vals: an entry moves the worse ones down one place, the worst out.
func topKInsert(top []int32, vals, v []float32) {
	k := len(top)
	insert := func(m int, x float32, j int32) {
		// With k kept, the worst makes room. An index after all kept ones
		// ranks below equal values.
		p := min(m, k-1)
		for p > 0 && vals[p-1] < x {
			vals[p], top[p] = vals[p-1], top[p-1]
			p--
		}
		vals[p], top[p] = x, j
	}
	for j := range k {
		insert(j, v[j], int32(j))
	}
	worst := vals[k-1]
	for j := k; j < len(v); j++ {
		if x := v[j]; x > worst {
			insert(k, x, int32(j))
			worst = vals[k-1]
		}
	}
}
