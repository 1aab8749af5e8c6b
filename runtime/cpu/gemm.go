package cpu

import (
	"github.com/graphc/graphc/tensor"
)

// The packed, blocked GEMM behind MulMat's large products (the BLIS
// scheme): C[i + j·ldc] = Σ_p A[i][p]·B[j][p], A the rows of a and B the
// columns of x, both contiguous along K as ggml stores them.
//
//   - A and B are packed once per matrix, in parallel, before the
//     products: panels of mr rows of A and of nr columns of B, transposed so
//     that step p of a panel is mr (nr) adjacent values, cut into K blocks
//     of gemmKC steps (transpose8 moves eight rows at a time).
//   - The rows are cut into blocks of gemmMC; a thread claims a row block
//     (and, when there are few, a range of column panels) and runs the
//     microkernel over every (A panel, B panel) pair: an mr×nr block of C
//     held in registers for kc steps, added to C after the first K block.
//
// The A block (gemmMC×gemmKC) stays in L2, a B panel (gemmKC×nr) in L1.

// A gemmKernel is a microkernel and the block of C it computes.
type gemmKernel struct {
	mr, nr int
	fn     func(k int, a, b, c []float32, ldc int, acc bool)
}

// kernelFor is the microkernel of an instruction-set level.
func kernelFor(l isa) gemmKernel {
	switch l {
	case isaAVX512:
		return gemmKernel{32, 12, gemmKernel32x12}
	case isaAVX2:
		return gemmKernel{16, 6, gemmKernel16x6}
	}
	return gemmKernel{4, 4, gemmKernel4x4}
}

const (
	gemmKC = 256 // K steps per block
	gemmMC = 128 // rows of A per block (a multiple of every mr)
)

// gemmKernelRef is the microkernels' reference loop: an mr×k panel of A
// times a k×nr panel of B into an mr×nr block of C (column stride ldc),
// added to C when acc is set. The assembly kernels fuse each product.
func gemmKernelRef(mr, nr, k int, a, b, c []float32, ldc int, acc bool) {
	a, b = a[:mr*k], b[:nr*k]
	for j := 0; j < nr; j++ {
		for i := 0; i < mr; i++ {
			var s float32
			for p := 0; p < k; p++ {
				s += a[mr*p+i] * b[nr*p+j]
			}
			if acc {
				s = c[j*ldc+i] + s
			}
			c[j*ldc+i] = s
		}
	}
}

// gemmKernel4x4 is the Go microkernel (level isaGo): a 4×4 block of C in
// sixteen scalar accumulators.
func gemmKernel4x4(k int, a, b, c []float32, ldc int, acc bool) {
	a, b = a[:4*k], b[:4*k]
	var c00, c10, c20, c30, c01, c11, c21, c31, c02, c12, c22, c32, c03, c13, c23, c33 float32
	for p := 0; p+4 <= len(a); p += 4 {
		ap, bp := a[p:p+4:p+4], b[p:p+4:p+4]
		a0, a1, a2, a3 := ap[0], ap[1], ap[2], ap[3]
		b0 := bp[0]
		c00 += a0 * b0
		c10 += a1 * b0
		c20 += a2 * b0
		c30 += a3 * b0
		b1 := bp[1]
		c01 += a0 * b1
		c11 += a1 * b1
		c21 += a2 * b1
		c31 += a3 * b1
		b2 := bp[2]
		c02 += a0 * b2
		c12 += a1 * b2
		c22 += a2 * b2
		c32 += a3 * b2
		b3 := bp[3]
		c03 += a0 * b3
		c13 += a1 * b3
		c23 += a2 * b3
		c33 += a3 * b3
	}
	blk := [16]float32{c00, c10, c20, c30, c01, c11, c21, c31, c02, c12, c22, c32, c03, c13, c23, c33}
	for j := 0; j < 4; j++ {
		col := c[j*ldc : j*ldc+4]
		for i := range col {
			if acc {
				col[i] += blk[4*j+i]
			} else {
				col[i] = blk[4*j+i]
			}
		}
	}
}

// usePacked reports whether an M×N×K product (per batch) goes through the
// packed GEMM rather than the dot kernels: packing costs about (M+N)·K
// element moves, which pays once there are enough columns to reuse the
// packed rows of A.
func usePacked(M, N, K int) bool {
	return N >= 24 && M >= 32 && K >= 32 && M*N*K >= gemmMinWork
}

// gemmMinWork is the least M·N·K the packed GEMM takes; tests lower it.
var gemmMinWork = 1 << 18

// gemmTask is one batch of a packed GEMM, run in two phases: pack (A and B,
// each panel once, in parallel), then compute.
type gemmTask struct {
	b        *Backend
	kern     gemmKernel
	d, a, x  *tview
	round    bool // round x to f16 (an f16 a: ggml's vec_dot_type)
	K, M, N  int
	abase    int // offset of this batch's matrix in a
	xbase    int // offset of this batch's columns in x
	i12, i13 int // this batch's x and dst planes
	nkb      int // K blocks
	npa      int // A panels of mr rows
	npan     int // B panels of nr columns
	ap, bp   []float32
	packing  bool
	nmc, nnc int // chunks along rows (blocks of gemmMC) and column panels
}

// gemm runs the product of mulMatTask t's batch (i12, i13) through the packed
// GEMM.
func (b *Backend) gemm(t *mulMatTask, i12, i13 int) {
	g := &b.gemmT
	k := kernelFor(level)
	*g = gemmTask{b: b, kern: k, d: &t.d, a: &t.a, x: &t.x, K: t.K, M: t.M, N: t.N,
		round: t.a.typ == tensor.F16 && t.x.typ == tensor.F32,
		abase: (i12/t.r2)*t.a.st[2] + (i13/t.r3)*t.a.st[3], xbase: t.x.off(0, i12, i13), i12: i12, i13: i13}
	g.nkb = ceilDiv(g.K, gemmKC)
	g.npa = ceilDiv(g.M, k.mr)
	g.npan = ceilDiv(g.N, k.nr)
	na, nb := g.nkb*g.npa*gemmKC*k.mr, g.nkb*g.npan*gemmKC*k.nr
	if cap(b.gemmA) < na {
		b.gemmA = make([]float32, na)
	}
	if cap(b.gemmB) < nb {
		b.gemmB = make([]float32, nb)
	}
	g.ap, g.bp = b.gemmA[:na], b.gemmB[:nb]
	nth := b.pool.n
	b.growScratch(nth, max(g.K, k.mr*k.nr))

	g.packing = true
	b.pool.run(g, min(g.npa+g.npan, chunksPerThread*nth), nth)

	g.packing = false
	g.nmc = ceilDiv(g.M, gemmMC)
	g.nnc = 1
	if g.nmc < chunksPerThread*nth {
		g.nnc = min(g.npan, ceilDiv(chunksPerThread*nth, g.nmc))
	}
	b.pool.run(g, g.nmc*g.nnc, nth)
	*g = gemmTask{}
}

func (g *gemmTask) run(chunk, nchunks, tid int) {
	if !g.packing {
		g.compute(chunk, tid)
		return
	}
	buf := g.b.scratch[tid][:g.K]
	lo, hi := split(g.npa+g.npan, chunk, nchunks)
	for u := lo; u < hi; u++ {
		if u < g.npa {
			g.packPanel(g.ap, g.a, g.abase, g.M, g.npa, g.kern.mr, false, u, buf)
		} else {
			g.packPanel(g.bp, g.x, g.xbase, g.N, g.npan, g.kern.nr, g.round, u-g.npa, buf)
		}
	}
}

// packPanel packs panel q of w rows of v (row r at base + r·v.st[1], K
// elements v.st[0] apart; f16 converted, rounded to f16 with round): K
// block kb, step p, row j of the panel goes to
// dst[(kb·npanels+q)·gemmKC·w + p·w + j]; rows past nrows are 0. Eight rows
// of dense f32 at a time go through the transposing kernel.
func (g *gemmTask) packPanel(dst []float32, v *tview, base, nrows, npanels, w int, round bool, q int, buf []float32) {
	K := g.K
	fast := v.typ == tensor.F32 && v.st[0] == 1 && !round && level != isaGo
	for j0 := 0; j0 < w; j0 += 8 {
		if fast && j0+8 <= w && q*w+j0+8 <= nrows {
			for kb := 0; kb < g.nkb; kb++ {
				k0 := kb * gemmKC
				kcb := min(gemmKC, K-k0)
				out := dst[(kb*npanels+q)*gemmKC*w:][:kcb*w]
				o := base + (q*w+j0)*v.st[1] + k0
				k8 := kcb &^ 7
				if k8 > 0 {
					transpose8(out[j0:], w, v.f32[o:o+7*v.st[1]+k8], v.st[1], k8)
				}
				for j := 0; j < 8; j++ {
					row := v.f32[o+j*v.st[1]:]
					for p := k8; p < kcb; p++ {
						out[p*w+j0+j] = row[p]
					}
				}
			}
			continue
		}
		for j := j0; j < min(j0+8, w); j++ {
			r := q*w + j
			var row []float32
			if r < nrows {
				row = v.load(base+r*v.st[1], K, v.st[0], buf)
				if round {
					roundF16Row(buf, row)
					row = buf
				}
			}
			for kb := 0; kb < g.nkb; kb++ {
				k0 := kb * gemmKC
				kcb := min(gemmKC, K-k0)
				out := dst[(kb*npanels+q)*gemmKC*w:][:kcb*w]
				if row == nil {
					for p := 0; p < kcb; p++ {
						out[p*w+j] = 0
					}
					continue
				}
				for p, x := range row[k0 : k0+kcb] {
					out[p*w+j] = x
				}
			}
		}
	}
}

// transpose8 sets dst[p·ldd + i] = src[i·lds + p] for i < 8, p < k: eight
// rows into k steps of eight. k is a multiple of 8.
func transpose8(dst []float32, ldd int, src []float32, lds, k int) {
	_, _ = dst[(k-1)*ldd+7], src[7*lds+k-1]
	if level == isaGo {
		transpose8Go(dst, ldd, src, lds, k)
		return
	}
	transpose8AVX(dst, ldd, src, lds, k)
}

func transpose8Go(dst []float32, ldd int, src []float32, lds, k int) {
	for i := 0; i < 8; i++ {
		for p, v := range src[i*lds : i*lds+k] {
			dst[p*ldd+i] = v
		}
	}
}

// compute runs one chunk: a block of gemmMC rows times a range of B panels.
func (g *gemmTask) compute(chunk, tid int) {
	d := g.d
	mr, nr := g.kern.mr, g.kern.nr
	mi, ni := chunk%g.nmc, chunk/g.nmc
	r0, r1 := mi*gemmMC, min(mi*gemmMC+gemmMC, g.M)
	q0, q1 := split(g.npan, ni, g.nnc)
	tile := g.b.scratch[tid][:mr*nr]

	ds, ldc := d.st[0], d.st[1]
	dbase := d.off(0, g.i12, g.i13)
	direct := ds == 1 && ldc >= g.M
	out := d.f32
	for kb := 0; kb < g.nkb; kb++ {
		kcb := min(gemmKC, g.K-kb*gemmKC)
		acc := kb > 0
		for q := q0; q < q1; q++ {
			bpan := g.bp[(kb*g.npan+q)*gemmKC*nr:][:kcb*nr]
			c0 := q * nr
			ncols := min(nr, g.N-c0)
			for rr := r0; rr < r1; rr += mr {
				apan := g.ap[(kb*g.npa+rr/mr)*gemmKC*mr:][:kcb*mr]
				nrows := min(mr, r1-rr)
				if direct && nrows == mr && ncols == nr {
					o := dbase + c0*ldc + rr
					g.kern.fn(kcb, apan, bpan, out[o:o+(nr-1)*ldc+mr], ldc, acc)
					continue
				}
				g.kern.fn(kcb, apan, bpan, tile, mr, false)
				for j := 0; j < ncols; j++ {
					o := d.off(c0+j, g.i12, g.i13) + rr*ds
					src := tile[j*mr : j*mr+nrows]
					if acc {
						for ii, v := range src {
							out[o+ii*ds] += v
						}
					} else {
						for ii, v := range src {
							out[o+ii*ds] = v
						}
					}
				}
			}
		}
	}
}
