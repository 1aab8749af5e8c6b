package cpu

import (
	"encoding/binary"
	"math"

	"github.com/graphc/graphc/tensor"
)

// Block-quantized and bf16 weights, computed as ggml's CPU backend does:
// MulMat converts each row of x to the weight type's vec_dot_type first —
// q8_0 for q8_0 and q4_0 weights, bf16 for bf16 — and then takes per-block
// integer dot products scaled by both blocks' f16 scales (bf16: float
// products of the rounded values). GetRows dequantizes the rows it picks.

// isBlockType reports whether MulMat and GetRows take t through this file.
func isBlockType(t tensor.DType) bool { return t.Quantized() || t == tensor.BF16 }

// A quantKernel is how MulMat computes with one weight type: a row of
// quantKernels, ggml's type_traits_cpu entry for the type. Adding a weight
// type is a row here plus its dot product.
type quantKernel struct {
	vecDot tensor.DType // x's rows are converted to this type (vec_dot_type)
	// fromFloat appends a row of x in vecDot as ggml's from_float for
	// vecDot does (the activation quantizer).
	fromFloat func(dst []byte, row []float32) []byte
	// dot is the weight row a against the converted row x, k elements
	// (ggml's vec_dot); xd and xs are x's side arrays, when the row asks
	// for them.
	dot func(a, x []byte, xd []float32, xs []int32, k int) float32
	// scales: dot takes x's q8_0 block scales as float32 (xScales), k/32
	// a row; sums: their quant sums (xSums).
	scales, sums bool
	// rows, where there is one, is dot over many rows of a (lda bytes
	// apart) in one call, into dst (ldd apart), k/256 blocks: for the
	// kernels whose per-call setup and reduction are a large share of a
	// short row's time.
	rows func(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)
}

// quantKernels has a row for each weight type MulMat takes through this
// file (isBlockType, and a type whose kernels exist: q4_K and the others
// are not yet Supported, but MulMat computes with them).
var quantKernels = map[tensor.DType]*quantKernel{
	tensor.BF16:   {vecDot: tensor.BF16, fromFloat: encodeBF16, dot: dotBF16},
	tensor.Q8_0:   {vecDot: tensor.Q8_0, fromFloat: quantizeQ8_0Go, dot: dotQ8_0, scales: true},
	tensor.Q4_0:   {vecDot: tensor.Q8_0, fromFloat: quantizeQ8_0Go, dot: dotQ4_0, scales: true, sums: true},
	tensor.Q4_1:   {vecDot: tensor.Q8_1, fromFloat: quantizeQ8_1Go, dot: dotQ4_1},
	tensor.Q5_0:   {vecDot: tensor.Q8_0, fromFloat: quantizeQ8_0Go, dot: dotQ5_0, scales: true, sums: true},
	tensor.Q5_1:   {vecDot: tensor.Q8_1, fromFloat: quantizeQ8_1Go, dot: dotQ5_1},
	tensor.IQ4_NL: {vecDot: tensor.Q8_0, fromFloat: quantizeQ8_0Go, dot: dotIQ4_NL, scales: true},
	tensor.Q2_K:   {vecDot: tensor.Q8_K, fromFloat: quantizeQ8_K, dot: dotQ2_K, rows: dotQ2_KRows},
	tensor.Q3_K:   {vecDot: tensor.Q8_K, fromFloat: quantizeQ8_K, dot: dotQ3_K, rows: dotQ3_KRows},
	tensor.Q4_K:   {vecDot: tensor.Q8_K, fromFloat: quantizeQ8_K, dot: dotQ4_K, rows: dotQ4_KRows},
	tensor.Q5_K:   {vecDot: tensor.Q8_K, fromFloat: quantizeQ8_K, dot: dotQ5_K},
	tensor.Q6_K:   {vecDot: tensor.Q8_K, fromFloat: quantizeQ8_K, dot: dotQ6_K, rows: dotQ6_KRows},
	tensor.IQ4_XS: {vecDot: tensor.Q8_K, fromFloat: quantizeQ8_K, dot: dotIQ4_XS, rows: dotIQ4_XSRows},
	// Activation types only, as in ggml: their from_float, no vec_dot.
	tensor.Q8_1: {vecDot: tensor.Q8_1, fromFloat: quantizeQ8_1Go},
	tensor.Q8_K: {vecDot: tensor.Q8_K, fromFloat: quantizeQ8_K},
}

// vecDotType is ggml's type_traits_cpu[t].vec_dot_type.
func vecDotType(t tensor.DType) tensor.DType {
	if q := quantKernels[t]; q != nil {
		return q.vecDot
	}
	return tensor.Q8_0
}

// encodeBF16 appends row in bf16 (ggml_cpu_fp32_to_bf16: round to nearest
// even, as tensor's encoder).
func encodeBF16(dst []byte, row []float32) []byte { return tensor.Quantize(dst, tensor.BF16, row) }

type blockMulMat struct {
	dst, a      tensor.Tensor // copies, so that the caller's tensors stay on its stack
	xq          []byte        // x's rows in the vec_dot_type, row after row (Backend.qx)
	xRow        int           // bytes per row of xq
	aRow        int           // bytes per row of a
	xd          []float32     // q8_0 xq's block scales as float32 (Backend.qxd), k/32 per row
	xs          []int32       // for q4_0 a, q8_0 xq's block quant sums (Backend.qxs), k/32 per row
	dot         func(a, x []byte, xd []float32, xs []int32, k int) float32
	rows        func(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)
	k, m, n     int
	ne2, r2, r3 int
}

// mulMatBlocks is MulMat with a block-quantized or bf16 a. a's rows must be
// dense (weights are); x and dst may be strided.
func (b *Backend) mulMatBlocks(dst, a, x *tensor.Tensor) {
	k, m, n := a.Ne[0], a.Ne[1], x.Ne[1]
	if x.Type != tensor.F32 || dst.Type != tensor.F32 || x.Ne[0] != k || dst.Ne != [4]int{m, n, x.Ne[2], x.Ne[3]} ||
		a.Ne[2] == 0 || a.Ne[3] == 0 || x.Ne[2]%a.Ne[2] != 0 || x.Ne[3]%a.Ne[3] != 0 ||
		k%a.Type.BlockSize() != 0 || a.Nb[0] != a.Type.Size() || a.Nb[1] < a.Type.RowSize(k) {
		bug("MulMat: dst %v%v, a %v%v nb %v, x %v%v", dst.Type, dst.Ne, a.Type, a.Ne, a.Nb, x.Type, x.Ne)
	}
	q := quantKernels[a.Type]
	if q == nil || q.dot == nil {
		bug("MulMat: no dot product for %v", a.Type)
	}
	vt := q.vecDot
	t := &b.qmm
	*t = blockMulMat{dst: *dst, a: *a, xRow: vt.RowSize(k), aRow: a.Type.RowSize(k), k: k, m: m, n: n, ne2: x.Ne[2], r2: x.Ne[2] / a.Ne[2], r3: x.Ne[3] / a.Ne[3]}
	t.dot, t.rows = q.dot, q.rows
	// x's rows in the vec_dot_type, into the backend's scratch: a MulMat
	// allocates nothing once the scratch has grown to its largest x.
	rows := x.Ne[1] * x.Ne[2] * x.Ne[3]
	if cap(b.qx) < rows*t.xRow {
		b.qx = make([]byte, 0, rows*t.xRow)
	}
	if x.Nb[0] != 4 && cap(b.qrow) < k {
		b.qrow = make([]float32, k)
	}
	xq := b.qx[:0]
	xs := x.F32s()
	for i3 := 0; i3 < x.Ne[3]; i3++ {
		for i2 := 0; i2 < x.Ne[2]; i2++ {
			for i1 := 0; i1 < x.Ne[1]; i1++ {
				base := i1*x.Nb[1] + i2*x.Nb[2] + i3*x.Nb[3]
				var row []float32
				if x.Nb[0] == 4 {
					row = xs[base/4 : base/4+k]
				} else {
					row = b.qrow[:k]
					for i0 := range row {
						row[i0] = xs[(base+i0*x.Nb[0])/4]
					}
				}
				xq = q.fromFloat(xq, row)
			}
		}
	}
	t.xq = xq
	if q.scales {
		t.xd = xScales(b.qxd[:0], xq)
		b.qxd = t.xd
	}
	if q.sums {
		t.xs = xSums(b.qxs[:0], xq)
		b.qxs = t.xs
	}
	b.parallel(t, m*rows*k, m)
	*t = blockMulMat{} // drop the references to the caller's tensors
}

// run computes rows [lo, hi) of a against every row of x: each row of a
// against all of x's rows in turn, so that it is read from memory once
// and from the L1 cache for the other rows of x.
func (t *blockMulMat) run(chunk, nchunks, _ int) {
	lo, hi := split(t.m, chunk, nchunks)
	if t.rows != nil {
		t.runRows(lo, hi)
		return
	}
	d := t.dst.F32s()
	for i3 := 0; i3 < t.dst.Ne[3]; i3++ {
		for i2 := 0; i2 < t.dst.Ne[2]; i2++ {
			abase := (i2/t.r2)*t.a.Nb[2] + (i3/t.r3)*t.a.Nb[3]
			xbase := (i3*t.ne2 + i2) * t.n * t.xRow
			dbase := i2*t.dst.Nb[2] + i3*t.dst.Nb[3]
			for i := lo; i < hi; i++ {
				ar := abase + i*t.a.Nb[1]
				arow := t.a.Data[ar : ar+t.aRow]
				for j := 0; j < t.n; j++ {
					xr := xbase + j*t.xRow
					var xd []float32
					var xs []int32
					r := xr / t.xRow * (t.k / 32)
					if t.xd != nil {
						xd = t.xd[r : r+t.k/32]
					}
					if t.xs != nil {
						xs = t.xs[r : r+t.k/32]
					}
					d[(dbase+j*t.dst.Nb[1]+i*t.dst.Nb[0])/4] = t.dot(arow, t.xq[xr:xr+t.xRow], xd, xs, t.k)
				}
			}
		}
	}
}

// rowsTileBytes bounds the rows of a that runRows takes against each row
// of x in turn: they stay in the L1 and L2 caches meanwhile.
const rowsTileBytes = 32 << 10

// runRows is run with a rows kernel: tiles of a's rows, each against
// every row of x, one call per tile and row of x.
func (t *blockMulMat) runRows(lo, hi int) {
	d := t.dst.F32s()
	tile := max(1, rowsTileBytes/t.aRow)
	ldd := t.dst.Nb[0] / 4
	for i3 := 0; i3 < t.dst.Ne[3]; i3++ {
		for i2 := 0; i2 < t.dst.Ne[2]; i2++ {
			abase := (i2/t.r2)*t.a.Nb[2] + (i3/t.r3)*t.a.Nb[3]
			xbase := (i3*t.ne2 + i2) * t.n * t.xRow
			dbase := i2*t.dst.Nb[2] + i3*t.dst.Nb[3]
			for i0 := lo; i0 < hi; i0 += tile {
				rows := min(tile, hi-i0)
				a := t.a.Data[abase+i0*t.a.Nb[1]:]
				for j := 0; j < t.n; j++ {
					xr := xbase + j*t.xRow
					t.rows(a, t.a.Nb[1], t.xq[xr:xr+t.xRow], t.k/qkK, d[(dbase+j*t.dst.Nb[1]+i0*t.dst.Nb[0])/4:], ldd, rows)
				}
			}
		}
	}
}

// quantizeActivations appends row in type vt as ggml's from_float does for
// activations (quantKernels[vt].fromFloat): q8_0 and q8_1 like the
// reference quantizers but rounding half to even (the AVX path's
// _mm256_round_ps with _MM_ROUND_NEAREST), q8_K as the reference.
func quantizeActivations(dst []byte, vt tensor.DType, row []float32) []byte {
	return quantKernels[vt].fromFloat(dst, row)
}

// absMax is the largest |v| of x, a block's amax.
func absMax(x []float32) float32 {
	amax := float32(0)
	for _, v := range x {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	return amax
}

// quantizeQ8_0Go is quantizeActivations' q8_0 loop: per block of 32, the
// scale d = amax/127 and the values v·(127/amax) rounded half to even (so
// never -128).
func quantizeQ8_0Go(dst []byte, row []float32) []byte {
	for b := 0; b < len(row); b += 32 {
		x := row[b : b+32]
		amax := absMax(x)
		d := amax / 127
		id := float32(0)
		if d != 0 {
			id = 127 / amax
		}
		dst = binary.LittleEndian.AppendUint16(dst, tensor.F32ToF16(d))
		for _, v := range x {
			dst = append(dst, byte(int8(math.RoundToEven(float64(v*id)))))
		}
	}
	return dst
}

// dotBF16 is ggml_vec_dot_bf16: float products of the bf16 values, summed
// in float32 (in SIMD lanes, as ggml's AVX2 and AVX-512 loops do).
func dotBF16(a, x []byte, _ []float32, _ []int32, k int) float32 {
	a, x = a[:2*k], x[:2*k]
	n := 0
	var sum float32
	switch level {
	case isaAVX512:
		if n = k &^ 31; n > 0 {
			sum = dotBF16AVX512(a[:2*n], x[:2*n])
		}
	case isaAVX2:
		if n = k &^ 15; n > 0 {
			sum = dotBF16AVX2(a[:2*n], x[:2*n])
		}
	}
	return sum + dotBF16Go(a[2*n:], x[2*n:], k-n)
}

// dotBF16Go is dotBF16's loop.
func dotBF16Go(a, x []byte, k int) float32 {
	var sum float32
	for i := 0; i < k; i++ {
		sum += tensor.BF16ToF32(binary.LittleEndian.Uint16(a[2*i:])) * tensor.BF16ToF32(binary.LittleEndian.Uint16(x[2*i:]))
	}
	return sum
}

// getRowsBlocks is GetRows from a block-quantized or bf16 table into f32.
func (b *Backend) getRowsBlocks(dst, table, idx *tensor.Tensor) {
	if dst.Type != tensor.F32 || idx.Type != tensor.I32 || table.Nb[0] != table.Type.Size() ||
		dst.Ne != [4]int{table.Ne[0], idx.Ne[0], idx.Ne[1], idx.Ne[2]} || table.Ne[2] != idx.Ne[1] || table.Ne[3] != idx.Ne[2] {
		bug("GetRows: dst %v%v, table %v%v, idx %v%v", dst.Type, dst.Ne, table.Type, table.Ne, idx.Type, idx.Ne)
	}
	n, rowBytes := table.Ne[0], table.Type.RowSize(table.Ne[0])
	ids, d := idx.I32s(), dst.F32s()
	b.growScratch(1, n) // the caller's: nothing is dispatched
	row := b.scratch[0][:0]
	// A packed table's rows come from its copy: Pack may have released
	// the weight's pages (a tied embedding), which every read would fault
	// back from the file.
	p := b.packedFor(table)
	if p != nil && cap(b.unpacked) < rowBytes {
		b.unpacked = make([]byte, rowBytes)
	}
	for i2 := 0; i2 < idx.Ne[2]; i2++ {
		for i1 := 0; i1 < idx.Ne[1]; i1++ {
			for i0 := 0; i0 < idx.Ne[0]; i0++ {
				r := int(ids[(i0*idx.Nb[0]+i1*idx.Nb[1]+i2*idx.Nb[2])/4])
				if r < 0 || r >= table.Ne[1] {
					rowOutOfRange(r, table.Ne[1])
				}
				var src []byte
				if p != nil {
					src = p.unpackRow(b.unpacked, i1+i2*table.Ne[2], r)
				} else {
					off := r*table.Nb[1] + i1*table.Nb[2] + i2*table.Nb[3]
					src = table.Data[off : off+rowBytes]
				}
				row = tensor.Dequantize(row[:0], table.Type, src, n)
				base := i0*dst.Nb[1] + i1*dst.Nb[2] + i2*dst.Nb[3]
				for j, v := range row {
					d[(base+j*dst.Nb[0])/4] = v
				}
			}
		}
	}
}
