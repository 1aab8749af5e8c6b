package cpu

import (
	"encoding/binary"

	"github.com/graphc/graphc/tensor"
)

// MulMat with a packed weight (pack.go). x's columns are quantized to q8_0
// once per product, into panels of panelCols columns (one column for a
// matrix-vector product, two or smallPanelCols for a few): per block, the panel's columns' 32 quants one
// after the other, and beside them each column's block scale as float32
// (xd) and the offset's share of its block sum, negated (xc: −8·Σq for
// q4_0, −128·Σq for q8_0, see pack.go). A kernel computes one row group
// against one panel over the whole k: each block's integer sums, started
// from xc, converted and multiplied by the two scales' product, added up
// in float32 — ggml's terms, summed in another order.
//
// For q4_K the panels hold q8_K blocks of 256 (quantizeQ8_KGo's quants and
// d), and in xc each column's sums of its 8 sub-blocks of 32 as int16
// pairs, 4 int32s per block: what the rows' mins multiply. Its kernels
// scale each sub-block's integer sum by the row's scale in int32 lanes,
// take the mins' share from it and convert once per block.
//
// For q6_K the panels hold the same q8_K quants and d, and in xc each
// column's 16 sub-block sums of 16 times −32 (the quants' offset), then
// the same split in two int16 halves (q6OffsetPair), 32 int32s per
// block: its kernels start each sub-block's sum from its offset, scale it
// by the row's scale (the AVX2 kernels in int16 lanes, the others in
// int32) and convert once per block.
//
// Threads take row groups; for wide x, columns are cut into chunks whose
// quants fit the L2 cache, and a thread runs each of its row groups (in
// L1) against every panel of the chunk.

const (
	panelCols = 8 // columns of a panel, but for a single column
	// smallPanelCols are a panel's columns for three or four columns
	// (two take a panel of two): a few tokens, or a few sequences
	// decoded together, padded to eight would double the work of a
	// product the weights' streaming bounds.
	smallPanelCols = 4
	// xChunkBytes bounds the quants of one column chunk, so that they
	// stay in L2 while every row group runs against them.
	xChunkBytes = 512 << 10
)

// smallPairs is whether small panels run two row groups per kernel call
// (run); off, one each, as BenchmarkPackedColumns compares.
var smallPairs = true

type packedMulMat struct {
	dst     tensor.Tensor
	p       *packedWeight
	xq      []byte    // the panels' quants, batch after batch
	xd      []float32 // their scales
	xc      []int32   // their offset shares
	n, pc   int       // columns of x, columns per panel
	panels  int       // panels per batch
	chunk   int       // panels per column chunk
	nchunk  int       // column chunks per batch
	ne2     int       // x's batches along dim 2
	r2, r3  int       // broadcast ratios
	batches int
	threads int // that share the units (guidedSplit)
}

// mulMatPacked is MulMat with the packed copy p of a.
func (b *Backend) mulMatPacked(dst *tensor.Tensor, p *packedWeight, x *tensor.Tensor) {
	k, m, n := p.ne[0], p.ne[1], x.Ne[1]
	if x.Type != tensor.F32 || dst.Type != tensor.F32 || x.Ne[0] != k || dst.Ne != [4]int{m, n, x.Ne[2], x.Ne[3]} ||
		x.Ne[2]%p.ne[2] != 0 || x.Ne[3]%p.ne[3] != 0 {
		bug("MulMat: dst %v%v, packed a %v%v, x %v%v", dst.Type, dst.Ne, p.typ, p.ne, x.Type, x.Ne)
	}
	if dst.NElem() == 0 {
		return
	}
	t := &b.pmm
	*t = packedMulMat{dst: *dst, p: p, n: n, ne2: x.Ne[2], r2: x.Ne[2] / p.ne[2], r3: x.Ne[3] / p.ne[3], batches: x.Ne[2] * x.Ne[3]}
	t.pc = panelWidth(p.typ, n)
	t.panels = ceilDiv(n, t.pc)
	nb := p.nb
	be, cw := panelSizes(p.typ)
	t.chunk = max(1, min(t.panels, xChunkBytes/(t.pc*nb*be)))
	t.nchunk = ceilDiv(t.panels, t.chunk)

	// The panels, zeroed past the last column (zero quants and scales:
	// those columns' sums are 0 and are not stored).
	npanels := t.panels * t.batches
	t.xq, t.xd, t.xc = b.panelBuffers(npanels*nb*t.pc, be, cw)
	q := &b.pq
	*q = panelTask{t: t, x: *x, typ: p.typ}
	if x.Nb[0] != 4 {
		b.growScratch(b.pool.n, k)
		q.scratch = b.scratch
	}
	b.parallel(q, 8*k*n*t.batches, npanels)
	*q = panelTask{}

	units := t.batches * t.nchunk * p.groups
	nchunks, nth := b.guidedChunksFor(2*m*n*k*t.batches/4, units)
	t.threads = nth
	b.pool.run(t, nchunks, nth)
	*t = packedMulMat{}
}

// panelWidth is the columns of the panels a product of n columns through
// packed weights of type typ is cut into: those its kernels take.
func panelWidth(typ tensor.DType, n int) int {
	switch {
	case n == 1:
		return 1
	case n == 2 && (typ == tensor.Q4_0 || typ == tensor.Q8_0):
		return 2 // the K-quants' kernels have no panel of two
	case n <= smallPanelCols:
		return smallPanelCols
	}
	return panelCols
}

// run computes a range of (batch, column chunk, row group) units: row
// groups vary fastest, so a chunk's quants are read by consecutive units.
// (A 2-D product of one column runs as MulMats' task instead, two row
// groups per kernel call.)
func (t *packedMulMat) run(chunk, nchunks, _ int) {
	lo, hi := guidedSplit(t.batches*t.nchunk*t.p.groups, chunk, nchunks, t.threads)
	var tile [packRows * panelCols]float32
	if (t.pc == 2 || t.pc == smallPanelCols) && t.chunk == 1 && smallPairs {
		// Two row groups per kernel call, half the range apart: two
		// streams from memory, as for one column (packedGroup.run).
		half := (hi - lo) / 2
		for u := lo; u < lo+half; u++ {
			if !t.pair(u, u+half, tile[:]) {
				t.unit(u, tile[:])
				t.unit(u+half, tile[:])
			}
		}
		if (hi-lo)%2 == 1 {
			t.unit(hi-1, tile[:])
		}
		return
	}
	for u := lo; u < hi; u++ {
		t.unit(u, tile[:])
	}
}

// pair computes units u and v, of one panel, in one kernel call where
// the machine has one, and reports whether it did.
func (t *packedMulMat) pair(u, v int, tile []float32) bool {
	bu, c, gu := t.coords(u)
	bv, cv, gv := t.coords(v)
	if bu != bv || c != cv {
		return false
	}
	xq, xd, xc := t.panel(bu, c)
	n := packRows * t.pc
	if !packedSmall2Asm(t.p.typ, t.pc, t.group(bu, gu), t.group(bv, gv), xq, xd, xc, t.p.nb, tile[:2*n]) {
		return false
	}
	t.store(bu, gu, c, tile[:n])
	t.store(bv, gv, c, tile[n:2*n])
	return true
}

// coords are unit u's batch, column chunk and row group.
func (t *packedMulMat) coords(u int) (batch, c, g int) {
	g = u % t.p.groups
	c = u / t.p.groups % t.nchunk
	return u / t.p.groups / t.nchunk, c, g
}

// group is row group g of the weight matrix batch reads.
func (t *packedMulMat) group(batch, g int) []byte {
	i2, i3 := batch%t.ne2, batch/t.ne2
	return t.p.group((i3/t.r3)*t.p.ne[2]+i2/t.r2, g)
}

// panel is panel pn of batch: its quants, scales and offset shares.
func (t *packedMulMat) panel(batch, pn int) ([]byte, []float32, []int32) {
	nb := t.p.nb
	be, cw := panelSizes(t.p.typ)
	s := (batch*t.panels + pn) * nb * t.pc
	return t.xq[s*be : (s+nb*t.pc)*be], t.xd[s : s+nb*t.pc], t.xc[s*cw : (s+nb*t.pc)*cw]
}

// unit computes one unit: its row group against each panel of its chunk.
func (t *packedMulMat) unit(u int, tile []float32) {
	batch, c, g := t.coords(u)
	w := t.group(batch, g)
	for pn := c * t.chunk; pn < min(c*t.chunk+t.chunk, t.panels); pn++ {
		xq, xd, xc := t.panel(batch, pn)
		packedKernel(t.p.typ, t.pc, w, xq, xd, xc, t.p.nb, tile[:packRows*t.pc])
		t.store(batch, g, pn, tile)
	}
}

// store writes the tile of row group g against panel pn of batch into dst.
func (t *packedMulMat) store(batch, g, pn int, tile []float32) {
	i2, i3 := batch%t.ne2, batch/t.ne2
	rows := min(packRows, t.p.ne[1]-g*packRows)
	cols := min(t.pc, t.n-pn*t.pc)
	d := t.dst.F32s()
	for j := 0; j < cols; j++ {
		base := (pn*t.pc+j)*t.dst.Nb[1] + i2*t.dst.Nb[2] + i3*t.dst.Nb[3] + g*packRows*t.dst.Nb[0]
		if t.dst.Nb[0] == 4 {
			copy(d[base/4:base/4+rows], tile[j*packRows:j*packRows+rows])
			continue
		}
		for r := 0; r < rows; r++ {
			d[(base+r*t.dst.Nb[0])/4] = tile[j*packRows+r]
		}
	}
}

// panelTask quantizes x's columns into the panels, a chunk of panels per
// chunk.
type panelTask struct {
	t       *packedMulMat
	x       tensor.Tensor
	typ     tensor.DType
	scratch [][]float32 // per thread, for strided columns
}

func (q *panelTask) run(chunk, nchunks, tid int) {
	t, x := q.t, &q.x
	k, nb, pc := x.Ne[0], q.t.p.nb, t.pc
	shift := uint(3) // q4_0's offset 8
	if q.typ == tensor.Q8_0 {
		shift = 7 // q8_0's offset 128
	}
	be, cw := panelSizes(q.typ)
	lo, hi := split(t.panels*t.batches, chunk, nchunks)
	xs := x.F32s()
	for pi := lo; pi < hi; pi++ {
		batch, pn := pi/t.panels, pi%t.panels
		i2, i3 := batch%t.ne2, batch/t.ne2
		s := pi * nb * pc
		xq, xd, xc := t.xq[s*be:(s+nb*pc)*be], t.xd[s:s+nb*pc], t.xc[s*cw:(s+nb*pc)*cw]
		for j := 0; j < pc; j++ {
			col := pn*pc + j
			if col >= t.n {
				for b := 0; b < nb; b++ {
					clear(xq[(b*pc+j)*be:][:be])
					clear(xc[(b*pc+j)*cw:][:cw])
					xd[b*pc+j] = 0
				}
				continue
			}
			base := col*x.Nb[1] + i2*x.Nb[2] + i3*x.Nb[3]
			var row []float32
			if x.Nb[0] == 4 {
				row = xs[base/4 : base/4+k]
			} else {
				row = q.scratch[tid][:k]
				for i := range row {
					row[i] = xs[(base+i*x.Nb[0])/4]
				}
			}
			if q.typ == tensor.Q6_K {
				quantizeColumnQ6(row, nb, xq[j*qkK:], xd[j:], xc[j*cw:], pc)
				continue
			}
			if q.typ == tensor.Q4_K {
				quantizeColumnK(row, nb, xq[j*qkK:], xd[j:], xc[j*4:], pc)
				continue
			}
			quantizeColumn(row, nb, xq[j*32:], pc*32, xd[j:], xc[j:], pc, shift)
		}
	}
}

// quantizeColumn quantizes a column of x (nb blocks of row) into a panel:
// block b's quants to xq[b·qs:], as quantizeActivations writes them, its
// scale as float32 to xd[b·ss] and its quants' sum shifted left by shift,
// negated, to xc[b·ss].
func quantizeColumn(row []float32, nb int, xq []byte, qs int, xd []float32, xc []int32, ss int, shift uint) {
	if !quantizeColumnAsm(row, nb, xq, qs, xd, xc, ss, shift) {
		quantizeColumnGo(row, nb, xq, qs, xd, xc, ss, shift)
	}
}

// quantizeColumnGo is quantizeColumn's reference loop.
func quantizeColumnGo(row []float32, nb int, xq []byte, qs int, xd []float32, xc []int32, ss int, shift uint) {
	var blk [34]byte
	for b := 0; b < nb; b++ {
		quantizeQ8_0Go(blk[:0], row[b*32:b*32+32])
		var sum int32
		for _, v := range blk[2:] {
			sum += int32(int8(v))
		}
		copy(xq[b*qs:][:32], blk[2:])
		xd[b*ss] = tensor.F16ToF32(binary.LittleEndian.Uint16(blk[:]))
		xc[b*ss] = -(sum << shift)
	}
}

// panelSizes are a panel's quants per column block and int32s of xc per
// column block for weights of type typ.
func panelSizes(typ tensor.DType) (be, cw int) {
	switch typ {
	case tensor.Q4_K:
		return qkK, 4
	case tensor.Q6_K:
		return qkK, q6PanelInts
	}
	return 32, 1
}

// panelBuffers returns the backend's panel buffers sized for n column
// blocks of be quants and cw int32s of xc each.
func (b *Backend) panelBuffers(n, be, cw int) ([]byte, []float32, []int32) {
	if cap(b.qx) < n*be {
		b.qx = make([]byte, n*be)
	}
	if cap(b.qxd) < n {
		b.qxd = make([]float32, n)
	}
	if cap(b.qxs) < n*cw {
		b.qxs = make([]int32, n*cw)
	}
	return b.qx[:n*be], b.qxd[:n], b.qxs[:n*cw]
}

// quantizeColumnK quantizes a column of x (nb blocks of 256) into a q4_K
// panel of pc columns: block b's quants to xq[b·pc·256:], its d to
// xd[b·pc] and its sub-block sums to xc[b·pc·4:].
func quantizeColumnK(row []float32, nb int, xq []byte, xd []float32, xc []int32, pc int) {
	var blk [q8_KSize]byte
	for b := 0; b < nb; b++ {
		quantizeQ8_K(blk[:0], row[b*qkK:(b+1)*qkK])
		copy(xq[b*pc*qkK:][:qkK], blk[q8_KQuants:])
		xd[b*pc] = q8KScale(blk[:])
		for p := 0; p < 4; p++ {
			lo := q8KBsum(blk[:], 4*p) + q8KBsum(blk[:], 4*p+1)
			hi := q8KBsum(blk[:], 4*p+2) + q8KBsum(blk[:], 4*p+3)
			xc[b*pc*4+p] = int32(uint32(uint16(lo)) | uint32(hi)<<16)
		}
	}
}

// packedKernel computes one row group w (nb packed blocks) against one
// panel of pc columns: tile[j·16 + r] = row r · column j.
func packedKernel(typ tensor.DType, pc int, w, xq []byte, xd []float32, xc []int32, nb int, tile []float32) {
	if packedKernelAsm(typ, pc, w, xq, xd, xc, nb, tile) {
		return
	}
	packedKernelGo(typ, pc, w, xq, xd, xc, nb, tile)
}

// packedKernelGo is packedKernel's reference loop.
func packedKernelGo(typ tensor.DType, pc int, w, xq []byte, xd []float32, xc []int32, nb int, tile []float32) {
	switch typ {
	case tensor.Q4_K:
		packedKernelKGo(pc, w, xq, xd, xc, nb, tile)
		return
	case tensor.Q6_K:
		packedKernelQ6Go(pc, w, xq, xd, xc, nb, tile)
		return
	}
	pb := packBlockBytes(typ)
	clear(tile)
	for b := 0; b < nb; b++ {
		wb := w[b*pb : (b+1)*pb]
		for r := 0; r < packRows; r++ {
			da := tensor.F16ToF32(binary.LittleEndian.Uint16(wb[2*r:]))
			for j := 0; j < pc; j++ {
				x := xq[(b*pc+j)*32:][:32]
				var s int32
				if typ == tensor.Q4_0 {
					for c := 0; c < 4; c++ {
						for i := 0; i < 4; i++ {
							v := int32(wb[32+64*c+4*r+i])
							s += (v&15)*int32(int8(x[4*c+i])) + (v>>4)*int32(int8(x[16+4*c+i]))
						}
					}
				} else {
					for g := 0; g < 8; g++ {
						for i := 0; i < 4; i++ {
							s += int32(wb[32+64*g+4*r+i]) * int32(int8(x[4*g+i]))
						}
					}
				}
				s += xc[b*pc+j]
				tile[j*packRows+r] += float32(s) * (da * xd[b*pc+j])
			}
		}
	}
}

// packedKernelKGo is packedKernelGo for q4_K: per block, row r and
// column j, dx·(d·Σ_s scale_s·Σ nibble·x − dmin·Σ_s min_s·Σx), the
// integer sums dotQ4_KGo's.
func packedKernelKGo(pc int, w, xq []byte, xd []float32, xc []int32, nb int, tile []float32) {
	pb := packBlockBytes(tensor.Q4_K)
	clear(tile)
	for b := 0; b < nb; b++ {
		wb := w[b*pb : (b+1)*pb]
		for r := 0; r < packRows; r++ {
			d, dmin := f16At(wb, 2*r), f16At(wb, 32+2*r)
			for j := 0; j < pc; j++ {
				x, xs := xq[(b*pc+j)*qkK:][:qkK], xc[(b*pc+j)*4:][:4]
				var isum, msum int32
				for s := 0; s < 8; s++ {
					var q int32
					for c := 8 * (s / 2); c < 8*(s/2)+8; c++ {
						for i := 0; i < 4; i++ {
							v := int32(wb[320+64*c+4*r+i])
							l := 64*(s/2) + 4*(c%8) + i
							if s%2 == 0 {
								q += (v & 15) * int32(int8(x[l]))
							} else {
								q += (v >> 4) * int32(int8(x[l+32]))
							}
						}
					}
					isum += int32(wb[64+16*s+r]) * q
					msum += int32(wb[192+32*(s/2)+2*r+s%2]) * int32(int16(uint32(xs[s/2])>>(16*(s%2))))
				}
				dx := xd[b*pc+j]
				tile[j*packRows+r] += float32(d*dx*float32(isum)) - float32(dmin*dx*float32(msum))
			}
		}
	}
}
