package cpu

import (
	"fmt"
	"slices"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/tensor"
)

// The kernels of a mixture of experts (llama.cpp's build_moe_ffn):
// mul_mat_id, argsort, top_k and sum_rows.

// moeState is MulMatID's, ArgSort's and TopK's scratch, grown to the largest call
// and kept, so that a call allocates nothing once it has.
type moeState struct {
	count []int     // per expert, the (slot, token) pairs that chose it
	pairs [][2]int  // the pairs, grouped by expert in ids' order
	x, d  []byte    // one expert's gathered columns of x and its product
	order [][]int32 // per thread, ArgSort's row of indices (TopK's heap)
	sort  argSortTask
	topK  topKTask
	sum   sumRowsTask
	pe    packedWeight // one expert's matrix of a packed weight (expertOf)
}

// expertOf points s.pe at matrix e of the packed copy p of a mul_mat_id
// weight: a packed weight's matrices lie one after the other, so an
// expert's is a packed [k, m] weight of its own.
func (s *moeState) expertOf(p *packedWeight, e int) *packedWeight {
	s.pe = packedWeight{typ: p.typ, ne: [4]int{p.ne[0], p.ne[1], 1, 1}, nb: p.nb, groups: p.groups,
		data: p.data[e*p.matSize : (e+1)*p.matSize], matSize: p.matSize}
	return &s.pe
}

// MulMatID is ggml_mul_mat_id: with as [K, M, n_expert] (any weight type
// MulMat takes), x f32 [K, ne11, n_tokens] and ids i32 [n_used, n_tokens],
// dst[:, e, t] = as[:, :, ids[e, t]] · x[:, e % ne11, t], f32 [M, n_used,
// n_tokens].
//
// As ggml-cpu does, the (slot, token) pairs are grouped by the expert they
// chose and each used expert's product runs once over all its columns,
// so its rows stream from memory once per call and an expert no token
// chose is not read at all. The product is MulMat's on the expert's
// matrix (its threads, its quantized dot products and activation
// quantization: q8_0 for q8_0 and q4_0 experts, q8_K for the k-quants, f16
// rounding for f16), so the numbers are those of mul_mat with the same
// weights; the gathered columns and the results are copied in and out.
// A weight packed for its mul_mat_ids (Pack, as ggml's CPU_REPACK takes
// MUL_MAT_ID) is read from its copy, an expert's matrix at a time.
func (b *Backend) MulMatID(dst, as, x, ids *tensor.Tensor) {
	k, m, nExp := as.Ne[0], as.Ne[1], as.Ne[2]
	nUsed, nTok := ids.Ne[0], ids.Ne[1]
	ne11 := x.Ne[1]
	if dst.Type != tensor.F32 || x.Type != tensor.F32 || ids.Type != tensor.I32 || as.Ne[3] != 1 ||
		x.Ne[0] != k || x.Ne[3] != 1 || ids.Ne[2] != 1 || ids.Ne[3] != 1 || x.Ne[2] != nTok ||
		ne11 == 0 || nUsed%ne11 != 0 || dst.Ne != [4]int{m, nUsed, nTok, 1} ||
		dst.Nb[0] != 4 || x.Nb[0] != 4 || ids.Nb[0]%4 != 0 || ids.Nb[1]%4 != 0 {
		bug("MulMatID: dst %v%v nb %v, as %v%v, x %v%v nb %v, ids %v%v nb %v",
			dst.Type, dst.Ne, dst.Nb, as.Type, as.Ne, x.Type, x.Ne, x.Nb, ids.Type, ids.Ne, ids.Nb)
	}
	if dst.NElem() == 0 {
		return
	}
	s := &b.moe
	s.count = slices.Grow(s.count[:0], nExp)[:nExp]
	clear(s.count)
	idv := ids.I32s()
	expertOf := func(slot, tok int) int {
		e := int(idv[(slot*ids.Nb[0]+tok*ids.Nb[1])/4])
		if e < 0 || e >= nExp {
			panic(&engine.KernelError{Op: "mul_mat_id", Msg: fmt.Sprintf("expert id %d is not one of the %d experts", e, nExp)})
		}
		return e
	}
	for t := range nTok {
		for e := range nUsed {
			s.count[expertOf(e, t)]++
		}
	}
	// Each expert's pairs start where the ones before it end.
	n := nUsed * nTok
	s.pairs = slices.Grow(s.pairs[:0], n)[:n]
	off := 0
	for e := range nExp {
		c := s.count[e]
		s.count[e] = off
		off += c
	}
	for t := range nTok {
		for e := range nUsed {
			ex := expertOf(e, t)
			s.pairs[s.count[ex]] = [2]int{e, t}
			s.count[ex]++
		}
	}
	// count[e] is now where expert e's pairs end.
	xs, ds := x.F32s(), dst.F32s()
	var packed *packedWeight
	if isBlockType(as.Type) {
		packed = b.packedFor(as)
	}
	lo := 0
	for e := range nExp {
		hi := s.count[e]
		pairs := s.pairs[lo:hi]
		lo = hi
		if len(pairs) == 0 {
			continue
		}
		cols := len(pairs)
		if need := 4 * k * cols; cap(s.x) < need {
			s.x = tensor.NewBuffer(need)
		}
		if need := 4 * m * cols; cap(s.d) < need {
			s.d = tensor.NewBuffer(need)
		}
		xe := tensor.Tensor{Type: tensor.F32, Ne: [4]int{k, cols, 1, 1}, Data: s.x[:4*k*cols]}
		xe.Nb = tensor.ContiguousStrides(tensor.F32, xe.Ne)
		de := tensor.Tensor{Type: tensor.F32, Ne: [4]int{m, cols, 1, 1}, Data: s.d[:4*m*cols]}
		de.Nb = tensor.ContiguousStrides(tensor.F32, de.Ne)
		xv := xe.F32s()
		for j, p := range pairs {
			o := ((p[0]%ne11)*x.Nb[1] + p[1]*x.Nb[2]) / 4
			copy(xv[j*k:(j+1)*k], xs[o:o+k])
		}
		if packed != nil {
			b.mulMatPacked(&de, s.expertOf(packed, e), &xe)
		} else {
			ae := tensor.Tensor{Type: as.Type, Ne: [4]int{k, m, 1, 1}, Nb: [4]int{as.Nb[0], as.Nb[1], as.Nb[1] * m, as.Nb[1] * m}}
			ae.Data = as.Data[e*as.Nb[2]:]
			ae.Data = ae.Data[:ae.Span()]
			b.MulMat(&de, &ae, &xe, ops.MulMatParams{})
		}
		dv := de.F32s()
		for j, p := range pairs {
			o := (p[0]*dst.Nb[1] + p[1]*dst.Nb[2]) / 4
			copy(ds[o:o+m], dv[j*m:(j+1)*m])
		}
	}
}

// ArgSort is ggml_argsort: each row of dst (i32) holds the indices of a's
// row (f32) in the order of their values, ascending (p.Order 0) or
// descending (1). ggml sorts with std::sort, which leaves equal values in
// no particular order; here they keep their index order.
func (b *Backend) ArgSort(dst, a *tensor.Tensor, p ops.ArgSortParams) {
	t := &b.moe.sort
	*t = argSortTask{b: b, desc: p.Order == 1}
	t.d.set("ArgSort", "dst", dst)
	t.a.set("ArgSort", "a", a)
	if t.d.typ != tensor.I32 || !isFloat(t.a.typ) || !sameShape(&t.d, &t.a) || (p.Order != 0 && p.Order != 1) {
		bug("ArgSort: dst %v%v, a %v%v, order %d", t.d.typ, t.d.ne, t.a.typ, t.a.ne, p.Order)
	}
	n := t.a.ne[0]
	s := &b.moe
	for len(s.order) < b.pool.n {
		s.order = append(s.order, nil)
	}
	for i := range b.pool.n {
		s.order[i] = slices.Grow(s.order[i][:0], n)[:n]
	}
	b.growScratch(b.pool.n, n)
	// std::sort's n·log n comparisons per row.
	b.parallel(t, t.a.nrows()*n*max(1, bitsLen(n)), t.a.nrows())
	*t = argSortTask{}
}

func bitsLen(n int) int {
	l := 0
	for ; n > 0; n >>= 1 {
		l++
	}
	return l
}

type argSortTask struct {
	b    *Backend
	d, a tview
	desc bool
}

func (t *argSortTask) run(chunk, nchunks, tid int) {
	d, a := &t.d, &t.a
	n := a.ne[0]
	order := t.b.moe.order[tid][:n]
	buf := t.b.scratch[tid][:n]
	lo, hi := split(a.nrows(), chunk, nchunks)
	for r := lo; r < hi; r++ {
		v := a.loadRow(a.rowOff(r), buf)
		for i := range order {
			order[i] = int32(i)
		}
		if t.desc {
			slices.SortStableFunc(order, func(i, j int32) int { return cmpF32(v[j], v[i]) })
		} else {
			slices.SortStableFunc(order, func(i, j int32) int { return cmpF32(v[i], v[j]) })
		}
		o := d.rowOff(r)
		for i, x := range order {
			d.i32[o+i*d.st[0]] = x
		}
	}
}

// cmpF32 orders as std::sort's < does for the values ggml sorts (NaN
// neither before nor after anything).
func cmpF32(x, y float32) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// SumRows is ggml_sum_rows: dst[0, i1, i2, i3] = Σ a[:, i1, i2, i3], the
// sum taken in float64 and rounded once (ggml_vec_sum_f32).
func (b *Backend) SumRows(dst, a *tensor.Tensor) {
	t := &b.moe.sum
	*t = sumRowsTask{b: b}
	t.d.set("SumRows", "dst", dst)
	t.a.set("SumRows", "a", a)
	if t.d.typ != tensor.F32 || !isFloat(t.a.typ) || t.d.ne != [4]int{1, t.a.ne[1], t.a.ne[2], t.a.ne[3]} {
		bug("SumRows: dst %v%v, a %v%v", t.d.typ, t.d.ne, t.a.typ, t.a.ne)
	}
	b.growScratch(b.pool.n, t.a.ne[0])
	b.parallel(t, t.a.nelem(), t.a.nrows())
	*t = sumRowsTask{}
}

type sumRowsTask struct {
	b    *Backend
	d, a tview
}

func (t *sumRowsTask) run(chunk, nchunks, tid int) {
	d, a := &t.d, &t.a
	lo, hi := split(a.nrows(), chunk, nchunks)
	for r := lo; r < hi; r++ {
		var s float64
		for _, v := range a.loadRow(a.rowOff(r), t.b.scratch[tid][:a.ne[0]]) {
			s += float64(v)
		}
		d.f32[d.rowOff(r)] = float32(s)
	}
}
