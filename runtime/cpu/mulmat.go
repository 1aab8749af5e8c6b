package cpu

import (
	"unsafe"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/tensor"
)

// MulMat is ggml_mul_mat: dst[i0,i1,i2,i3] = Σk a[k,i0,j2,j3]·x[k,i1,i2,i3]
// with j2 = i2/(x.Ne[2]/a.Ne[2]), j3 = i3/(x.Ne[3]/a.Ne[3]) (a broadcast over
// dims 2 and 3), so dst.Ne = [a.Ne[1], x.Ne[1], x.Ne[2], x.Ne[3]].
//
// a is f32 or f16, x f32 or f16, dst f32; any strides; dst must not overlap
// a or x. With an f16 a, x is rounded to f16 first (ggml converts src1 to
// vec_dot_type) and the f16 products accumulate in float32, whatever
// p.Prec asks (ggml's CPU backend ignores it too).
func (b *Backend) MulMat(dst, a, x *tensor.Tensor, _ ops.MulMatParams) {
	if isBlockType(a.Type) {
		if p := b.packedFor(a); p != nil {
			if !b.mulMatsPacked(x, []engine.Product{{Dst: dst, W: a}}) {
				b.mulMatPacked(dst, p, x)
			}
			return
		}
		b.mulMatBlocks(dst, a, x)
		return
	}
	t := &b.mm
	t.b = b
	t.d.set("MulMat", "dst", dst)
	t.a.set("MulMat", "a", a)
	t.x.set("MulMat", "x", x)
	d, av, xv := &t.d, &t.a, &t.x
	if !isFloat(av.typ) || !isFloat(xv.typ) || !d.isF32() {
		bug("MulMat: types dst %v, a %v, x %v", d.typ, av.typ, xv.typ)
	}
	if av.ne[0] != xv.ne[0] || av.ne[2] == 0 || av.ne[3] == 0 || xv.ne[2]%av.ne[2] != 0 || xv.ne[3]%av.ne[3] != 0 ||
		d.ne != [4]int{av.ne[1], xv.ne[1], xv.ne[2], xv.ne[3]} {
		bug("MulMat: shapes dst %v, a %v, x %v", d.ne, av.ne, xv.ne)
	}
	t.K, t.M, t.N = av.ne[0], av.ne[1], xv.ne[1]
	t.ne2, t.r2, t.r3 = xv.ne[2], xv.ne[2]/av.ne[2], xv.ne[3]/av.ne[3]
	nbatch := xv.ne[2] * xv.ne[3]
	if d.nelem() == 0 || t.K == 0 {
		if t.K == 0 { // empty sums
			for r := 0; r < d.nrows(); r++ {
				d.store(d.rowOff(r), d.st[0], zeros(d.ne[0]))
			}
		}
		b.mmClear()
		return
	}

	// Large products: the packed GEMM, batch by batch.
	if usePacked(t.M, t.N, t.K) {
		for batch := 0; batch < nbatch; batch++ {
			b.gemm(t, batch%t.ne2, batch/t.ne2)
		}
		b.mmClear()
		return
	}

	// x as the vec_dot_type: float32 columns of K, rounded to f16 for an f16 a.
	t.xp = nil
	if av.typ == tensor.F16 || !xv.isF32() || !xv.dense() {
		n := t.K * t.N * nbatch
		if cap(b.xpack) < n {
			b.xpack = make([]float32, n)
		}
		t.xp = b.xpack[:n]
		p := &b.pack
		*p = packTask{x: *xv, dst: t.xp, K: t.K, round: av.typ == tensor.F16 && xv.typ == tensor.F32}
		b.parallel(p, 3*n, t.N*nbatch)
		*p = packTask{}
	}

	// One column per batch, batches in fours sharing a (grouped-query
	// attention while generating: four query heads per K/V head): the four
	// batches' columns, adjacent in xp, run as one 4-column product, each
	// row of a read once instead of four times.
	if t.N == 1 && t.xp != nil && t.r2%4 == 0 && t.ne2%4 == 0 && d.st[0] == 1 &&
		av.typ == tensor.F16 && av.st[0] == 1 && level >= isaAVX2 {
		// Work: the flops, or the cache lines of a if more (a K/V cache
		// read once per token comes from memory, a miss per line).
		lines := t.M * (nbatch / t.r2) * ceilDiv(2*t.K, 64)
		_, nth := b.chunksFor(max(2*t.M*t.K*nbatch/mmFlopsPerNs[level], lines*missNs), 1<<30)
		t.rc = mmRows
		for nth > 1 && t.rc > mmMinRows && nbatch/4*ceilDiv(t.M, t.rc) < chunksPerThread*nth {
			t.rc /= 2
		}
		t.nrc, t.ncc = ceilDiv(t.M, t.rc), 1
		t.batches4 = true
		b.pool.run(t, nbatch/4*t.nrc, nth)
		b.mmClear()
		return
	}

	// Chunks: up to mmRows rows of a × mmCols columns of x within one batch,
	// claimed dynamically; rows shrink until every thread gets several (one
	// thread, a lane of a parallel region, takes whole panels).
	_, nth := b.chunksFor(2*t.M*t.N*t.K*nbatch/mmFlopsPerNs[level], 1<<30)
	t.cc = min(t.N, mmCols)
	t.rc = mmRows
	for nth > 1 && t.rc > mmMinRows && nbatch*ceilDiv(t.M, t.rc)*ceilDiv(t.N, t.cc) < chunksPerThread*nth {
		t.rc /= 2
	}
	for nbatch*ceilDiv(t.M, t.rc)*ceilDiv(t.N, t.cc) > maxChunks {
		t.rc *= 2
	}
	t.nrc, t.ncc = ceilDiv(t.M, t.rc), ceilDiv(t.N, t.cc)
	t.nchunks = nbatch * t.nrc * t.ncc
	t.aDirect = av.isF32() && av.dense()
	t.aF16Direct = av.typ == tensor.F16 && av.dense() && t.cc < mmConvertCols
	t.aF16Rows = av.typ == tensor.F16 && av.st[0] == 1 && !t.aF16Direct && level == isaAVX512
	if !t.aDirect && !t.aF16Direct {
		b.growScratch(b.pool.n, 4*t.K)
	}
	b.pool.run(t, t.nchunks, nth)
	b.mmClear()
}

// mmFlopsPerNs is roughly what the dot kernels of each level reach on small
// products, to size MulMat's work in the units of chunksFor.
var mmFlopsPerNs = [...]int{isaGo: 3, isaAVX2: 40, isaAVX512: 60}

const (
	mmMinRows = 16 // least rows per chunk: a cache line of f32 dst, so threads do not share lines
	mmRows    = 64 // rows of a per chunk (a multiple of 4)
	mmCols    = 64 // columns of x per chunk
	// An f16 a is converted to float32 four rows at a time when a chunk has
	// at least this many columns to reuse them for; below, the f16 kernels
	// convert while they multiply.
	mmConvertCols = 3
)

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func zeros(n int) []float32 { return make([]float32, n) }

// mmClear drops the task's references to the caller's memory.
func (b *Backend) mmClear() { b.mm = mulMatTask{} }

type mulMatTask struct {
	b           *Backend
	d, a, x     tview
	xp          []float32 // packed x columns (K each, batch-major), or nil to read x
	K, M, N     int
	ne2, r2, r3 int
	rc, cc      int // rows and columns per chunk
	nrc, ncc    int // chunks along rows and columns
	nchunks     int
	aDirect     bool // a is dense f32: use its rows in place
	aF16Direct  bool // a is dense f16 and chunks are narrow: f16 kernels
	aF16Rows    bool // a's f16 rows are dense: blocks of four columns convert them as they load
	batches4    bool // one column per batch, four batches per chunk (runBatches4)
}

func (t *mulMatTask) run(ch, _, tid int) {
	if t.batches4 {
		t.runBatches4(ch)
		return
	}
	d, a, x := &t.d, &t.a, &t.x
	K := t.K
	cci := ch % t.ncc
	ch /= t.ncc
	rci := ch % t.nrc
	batch := ch / t.nrc
	i12, i13 := batch%t.ne2, batch/t.ne2
	abase := (i12/t.r2)*a.st[2] + (i13/t.r3)*a.st[3]
	r0, r1 := rci*t.rc, min(rci*t.rc+t.rc, t.M)
	c0, c1 := cci*t.cc, min(cci*t.cc+t.cc, t.N)
	nc := c1 - c0

	// column j of the chunk: x at xsrc[xo0+j·xst:][:K], dst row 0 at dc0+j·dst1
	var xsrc []float32
	var xo0, xst int
	if t.xp != nil {
		xsrc, xo0, xst = t.xp, (batch*t.N+c0)*K, K
	} else {
		xsrc, xo0, xst = x.f32, x.off(c0, i12, i13), x.st[1]
	}
	dc0, dst1 := d.off(c0, i12, i13), d.st[1]
	xcol := func(j int) []float32 { o := xo0 + j*xst; return xsrc[o : o+K] }
	out := d.f32
	ds := d.st[0]

	var scratch []float32
	if !t.aDirect && !t.aF16Direct {
		scratch = t.b.scratch[tid][:4*K]
	}
	// rowF32 returns row r of a as float32 in slot i of the scratch.
	rowF32 := func(r, i int) []float32 {
		o := abase + r*a.st[1]
		if t.aDirect {
			return a.f32[o : o+K]
		}
		return a.load(o, K, a.st[0], scratch[i*K:(i+1)*K])
	}

	r := r0
	if t.aDirect && ds == 1 {
		// dense rows and dst columns: whole panels of rows per call
		if m4 := (r1 - r0) &^ 3; m4 > 0 {
			o, lda := abase+r0*a.st[1], a.st[1]
			rows := a.f32[o : o+(m4-1)*lda+K]
			j := 0
			for ; j+4 <= nc; j += 4 {
				xo, p := xo0+j*xst, dc0+j*dst1+r0
				dotPanelF32(m4, rows, lda, xsrc[xo:xo+3*xst+K], xst, K, out[p:p+3*dst1+m4], dst1)
			}
			for ; j < nc; j++ {
				for i := 0; i < m4; i += 4 {
					c := dot4x1F32(rows[i*lda:], lda, xcol(j))
					p := dc0 + j*dst1 + r0 + i
					out[p], out[p+1], out[p+2], out[p+3] = c[0], c[1], c[2], c[3]
				}
			}
			r = r0 + m4
		}
	}
	for ; r+4 <= r1; r += 4 {
		var rw rows4
		switch {
		case t.aF16Rows || t.aF16Direct:
			o, s := abase+r*a.st[1], a.st[1]
			rw.f16, rw.ld = a.f16[o:o+3*s+K], s
		case t.aDirect:
			o, s := abase+r*a.st[1], a.st[1]
			rw.f32, rw.ld = a.f32[o:o+3*s+K], s
		default:
			for i := 0; i < 4; i++ {
				rowF32(r+i, i)
			}
			rw.f32, rw.ld = scratch[:4*K], K
		}
		j := 0
		for ; j+4 <= nc && !t.aF16Direct; j += 4 {
			xo := xo0 + j*xst
			xs := xsrc[xo : xo+3*xst+K]
			if ds == 1 {
				p := dc0 + j*dst1 + r
				rw.dot4x4(xs, xst, K, out[p:p+3*dst1+4], dst1)
				continue
			}
			var blk [16]float32
			rw.dot4x4(xs, xst, K, blk[:], 4)
			for jj := 0; jj < 4; jj++ {
				p := dc0 + (j+jj)*dst1 + r*ds
				out[p], out[p+ds], out[p+2*ds], out[p+3*ds] = blk[4*jj], blk[4*jj+1], blk[4*jj+2], blk[4*jj+3]
			}
		}
		for ; j < nc; j++ {
			c := rw.dot4x1(xcol(j))
			p := dc0 + j*dst1 + r*ds
			out[p], out[p+ds], out[p+2*ds], out[p+3*ds] = c[0], c[1], c[2], c[3]
		}
	}
	for ; r < r1; r++ {
		if t.aF16Direct {
			o := abase + r*a.st[1]
			ar := a.f16[o : o+K]
			for j := 0; j < nc; j++ {
				out[dc0+j*dst1+r*ds] = dotF16(ar, xcol(j))
			}
			continue
		}
		ar := rowF32(r, 0)
		for j := 0; j < nc; j++ {
			out[dc0+j*dst1+r*ds] = dotF32(ar, xcol(j))
		}
	}
}

// runBatches4 computes chunk ch of a product whose four batches b0..b0+3
// read the same dense-row f16 matrix of a and one column each of xp: rows
// r0..r1 of a against the four columns, into the batches' dst columns.
func (t *mulMatTask) runBatches4(ch int) {
	d, a := &t.d, &t.a
	K := t.K
	rci, b0 := ch%t.nrc, ch/t.nrc*4
	i12, i13 := b0%t.ne2, b0/t.ne2
	abase := (i12/t.r2)*a.st[2] + (i13/t.r3)*a.st[3]
	r0, r1 := rci*t.rc, min(rci*t.rc+t.rc, t.M)
	xs := t.xp[b0*K : (b0+4)*K]
	dc0, ldc := d.off(0, i12, i13), d.st[2]
	out := d.f32
	// The rows were last read a token ago and come from memory: ask for
	// them ahead rows (about batches4Ahead lines) before the kernel reads
	// them, which would otherwise wait for them a few lines at a time.
	ahead := max(4, batches4Ahead/ceilDiv(2*K, 64)) &^ 3
	prefetch := func(r, n int) {
		if n = min(n, r1-r); n > 0 && K > 0 {
			prefetchRows(unsafe.Pointer(&a.f16[abase+r*a.st[1]]), n, 2*a.st[1], 2*K)
		}
	}
	prefetch(r0, ahead)
	r := r0
	for ; r+4 <= r1; r += 4 {
		prefetch(r+ahead, 4)
		o, s := abase+r*a.st[1], a.st[1]
		p := dc0 + r
		dot4x4F16(a.f16[o:o+3*s+K], s, xs, K, K, out[p:p+3*ldc+4], ldc)
	}
	for ; r < r1; r++ {
		o := abase + r*a.st[1]
		for j := 0; j < 4; j++ {
			out[dc0+j*ldc+r] = dotF16(a.f16[o:o+K], xs[j*K:(j+1)*K])
		}
	}
}

// batches4Ahead is how many cache lines of a runBatches4 asks for ahead.
const batches4Ahead = 64

// rows4 is four rows of a, ld elements apart: f16 (dense rows), or
// float32 in place or converted.
type rows4 struct {
	f16 []uint16
	f32 []float32
	ld  int
}

// dot4x4 is dot4x4F32 of the four rows (f16 rows convert as they load).
func (rw *rows4) dot4x4(x []float32, ldx, k int, c []float32, ldc int) {
	if rw.f16 != nil {
		dot4x4F16AVX512(rw.f16, rw.ld, x, ldx, k, c, ldc)
		return
	}
	dot4x4F32(rw.f32, rw.ld, x, ldx, k, c, ldc)
}

// dot4x1 is the dots of the four rows with column x.
func (rw *rows4) dot4x1(x []float32) [4]float32 {
	if rw.f16 != nil {
		return dot4x1F16(rw.f16, rw.ld, x)
	}
	return dot4x1F32(rw.f32, rw.ld, x)
}

// packTask converts x's columns into dense float32 columns, rounding them to
// f16 when a is f16 (ggml's from_float to vec_dot_type).
type packTask struct {
	x     tview
	dst   []float32
	K     int
	round bool
}

func (t *packTask) run(chunk, nchunks, _ int) {
	x, K := &t.x, t.K
	lo, hi := split(x.nrows(), chunk, nchunks)
	for c := lo; c < hi; c++ {
		out := t.dst[c*K : (c+1)*K]
		src := x.load(x.rowOff(c), K, x.st[0], out)
		if t.round {
			roundF16Row(out, src)
		} else if len(src) > 0 && &src[0] != &out[0] {
			copy(out, src)
		}
	}
}
