package cpu

import (
	"github.com/graphc/graphc/tensor"
)

// Cpy is ggml_cpy (and, into a contiguous dst, ggml_cont): element k of src
// in logical order (Ne[0] fastest) goes to element k of dst in logical order,
// whatever either shape and strides; only the element counts must agree.
// f32↔f16 convert (f32→f16 rounds to nearest even); f32, f16 and i32 copy as
// they are; into a block-quantized or bf16 dst (a KV cache) see cpyToBlocks.
func (b *Backend) Cpy(dst, src *tensor.Tensor) {
	if isBlockType(dst.Type) {
		b.cpyToBlocks(dst, src)
		return
	}
	t := &b.cpy
	*t = cpyTask{b: b}
	t.d.set("Cpy", "dst", dst)
	t.s.set("Cpy", "src", src)
	d, s := &t.d, &t.s
	if d.nelem() != s.nelem() {
		bug("Cpy: dst %v has %d elements, src %v has %d", d.ne, d.nelem(), s.ne, s.nelem())
	}
	if (d.typ == tensor.I32) != (s.typ == tensor.I32) {
		bug("Cpy: %v to %v", s.typ, d.typ)
	}
	if d.nelem() == 0 {
		*t = cpyTask{}
		return
	}
	scratch := min(s.ne[0], d.ne[0]) // convertRow's f16→f32 buffer
	units, work := d.nelem(), d.nelem()/2
	switch {
	case d.contiguous() && s.contiguous():
		t.mode = cpyFlat
	case d.ne[0] == s.ne[0] && s.st[0] != 1 && d.st[0] == 1 && s.ne[1] > 1 && s.st[1] == 1 &&
		d.ne[2] == 1 && d.ne[3] == 1 && s.ne[2] == 1 && s.ne[3] == 1:
		// a transposed matrix (V into the KV cache): copy the source's
		// contiguous columns, in pieces, into strided rows of dst; every
		// row of dst is a cache line or more, from memory when the cache
		// is written once per token
		t.mode = cpyTransposed
		t.pieces = ceilDiv(s.ne[1], cpyPiece)
		units = s.ne[0] * t.pieces
		scratch = cpyPiece
		work = max(work, d.ne[1]*ceilDiv(d.ne[0]*d.typ.Size(), 64)*missNs)
	case d.ne[0] == s.ne[0]:
		units = s.nrows()
	}
	b.growScratch(b.pool.n, scratch)
	b.parallel(t, work, units)
	*t = cpyTask{}
}

const (
	cpyRows       = iota // row by row, or run by run when rows differ
	cpyFlat              // both contiguous: one run
	cpyTransposed        // 2-D, src contiguous along dim 1, dst along dim 0
)

type cpyTask struct {
	b      *Backend
	d, s   tview
	mode   int
	pieces int // cpyTransposed: pieces of cpyPiece elements per source column
}

// cpyPiece is the elements of a transposed copy's unit.
const cpyPiece = 64

// contiguous reports whether v's elements are adjacent in logical order.
func (v *tview) contiguous() bool {
	want := 1
	for i := 0; i < 4; i++ {
		if v.ne[i] != 1 && v.st[i] != want {
			return false
		}
		want *= v.ne[i]
	}
	return true
}

// coords returns the 4-D index of flat element k of shape ne.
func coords(k int, ne *[4]int) [4]int {
	var c [4]int
	for i := 0; i < 3; i++ {
		c[i] = k % ne[i]
		k /= ne[i]
	}
	c[3] = k
	return c
}

func (t *cpyTask) run(chunk, nchunks, tid int) {
	d, s := &t.d, &t.s
	buf := t.b.scratch[tid]
	switch t.mode {
	case cpyFlat:
		// in pieces: Go's memmove streams past the cache (non-temporal
		// stores) above a size, which is slower for data that stays in L2/L3
		const piece = 1 << 14
		lo, hi := split(s.nelem(), chunk, nchunks)
		for k := lo; k < hi; k += piece {
			convertRow(d, k, 1, s, k, 1, min(piece, hi-k), buf)
		}
		return
	case cpyTransposed:
		lo, hi := split(s.ne[0]*t.pieces, chunk, nchunks)
		for u := lo; u < hi; u++ {
			i0, p := u/t.pieces, u%t.pieces*cpyPiece
			convertRow(d, i0+p*d.st[1], d.st[1], s, i0*s.st[0]+p, 1, min(cpyPiece, s.ne[1]-p), buf)
		}
		return
	}
	if d.ne[0] == s.ne[0] {
		// rows line up: row r of src is row r of dst
		lo, hi := split(s.nrows(), chunk, nchunks)
		for r := lo; r < hi; r++ {
			convertRow(d, d.rowOff(r), d.st[0], s, s.rowOff(r), s.st[0], s.ne[0], buf)
		}
		return
	}
	// Rows differ: walk both shapes from flat element lo, one run (the rest
	// of the shorter current row) at a time.
	lo, hi := split(s.nelem(), chunk, nchunks)
	sc, dc := coords(lo, &s.ne), coords(lo, &d.ne)
	for k := lo; k < hi; {
		n := min(s.ne[0]-sc[0], d.ne[0]-dc[0], hi-k)
		so := sc[0]*s.st[0] + s.off(sc[1], sc[2], sc[3])
		do := dc[0]*d.st[0] + d.off(dc[1], dc[2], dc[3])
		convertRow(d, do, d.st[0], s, so, s.st[0], n, buf)
		k += n
		advance(&sc, &s.ne, n)
		advance(&dc, &d.ne, n)
	}
}

// advance moves c forward by n ≤ the rest of its row.
func advance(c, ne *[4]int, n int) {
	c[0] += n
	for i := 0; i < 3 && c[i] == ne[i]; i++ {
		c[i] = 0
		c[i+1]++
	}
}

// convertRow copies n elements from src (offset so, stride ss) to dst
// (offset do, stride ds), converting between f32 and f16. buf holds at least
// n floats.
func convertRow(dst *tview, do, ds int, src *tview, so, ss, n int, buf []float32) {
	if n <= 0 {
		return
	}
	switch {
	case dst.typ == src.typ && (ds == 1 || n == 1) && (ss == 1 || n == 1):
		switch dst.typ {
		case tensor.F32:
			copy(dst.f32[do:do+n], src.f32[so:so+n])
		case tensor.F16:
			copy(dst.f16[do:do+n], src.f16[so:so+n])
		case tensor.I32:
			copy(dst.i32[do:do+n], src.i32[so:so+n])
		}
	case dst.typ == src.typ:
		switch dst.typ {
		case tensor.F32:
			for i := 0; i < n; i++ {
				dst.f32[do+i*ds] = src.f32[so+i*ss]
			}
		case tensor.F16:
			for i := 0; i < n; i++ {
				dst.f16[do+i*ds] = src.f16[so+i*ss]
			}
		case tensor.I32:
			for i := 0; i < n; i++ {
				dst.i32[do+i*ds] = src.i32[so+i*ss]
			}
		}
	case dst.typ == tensor.F16 && src.typ == tensor.F32:
		if ds == 1 && ss == 1 {
			f32ToF16Row(dst.f16[do:do+n], src.f32[so:so+n])
			return
		}
		// strided: gather, convert with the vector kernel, scatter
		var t32 [64]float32
		var t16 [64]uint16
		for k := 0; k < n; k += len(t32) {
			m := min(n-k, len(t32))
			s32 := t32[:m]
			if ss == 1 {
				s32 = src.f32[so+k : so+k+m]
			} else {
				for i := range s32 {
					s32[i] = src.f32[so+(k+i)*ss]
				}
			}
			if ds == 1 {
				f32ToF16Row(dst.f16[do+k:do+k+m], s32)
				continue
			}
			f32ToF16Row(t16[:m], s32)
			for i, h := range t16[:m] {
				dst.f16[do+(k+i)*ds] = h
			}
		}
	default: // f16 → f32
		if ds == 1 && ss == 1 {
			f16ToF32Row(dst.f32[do:do+n], src.f16[so:so+n])
			return
		}
		dst.store(do, ds, src.load(so, n, ss, buf[:n]))
	}
}
