package cpu

import (
	"encoding/binary"
	"math"

	"github.com/graphc/graphc/tensor"
)

// faAccum flag bits: rescale the sums before each key's product, and
// round them to f16 after each step (ggml's f16 accumulator).
const (
	faMul   = 1
	faRound = 2
)

// faAccum adds four rows of weights times nk rows of v (ldv apart) to
// four rows of sums acc (lda apart), dv columns, key by key: wm holds,
// for each key j, the rows' weights wm[8j+r] and (with faMul) their
// multipliers wm[8j+4+r]; for each row r and key j
//
//	acc_r = round(acc_r · wm[8j+4+r])   (faMul)
//	acc_r = round(acc_r + wm[8j+r]·v_j)
//
// round being f16 rounding with faRound, the identity without: ggml's
// ggml_vec_scale_f16 and ggml_vec_mad_f16 on an f16 sum, or f32 ones.
// The kernels keep the strips' sums in registers across the keys.
func faAccum(acc []float32, lda int, v []float32, ldv int, wm []float32, nk, dv, flags int) {
	if nk == 0 || dv == 0 {
		return
	}
	_, _, _ = acc[3*lda+dv-1], v[(nk-1)*ldv+dv-1], wm[8*nk-1]
	c := 0
	switch level {
	case isaAVX512:
		if c = dv &^ 31; c > 0 {
			faAccumAVX512(&acc[0], lda, &v[0], ldv, &wm[0], nk, c, flags)
		}
	case isaAVX2:
		if c = dv &^ 15; c > 0 {
			faAccumAVX2(&acc[0], lda, &v[0], ldv, &wm[0], nk, c, flags)
		}
	}
	if c < dv {
		faAccumGo(acc, lda, v, ldv, wm, nk, c, dv, flags)
	}
}

// faAccumGo is faAccum's loop over columns [c0, c1).
func faAccumGo(acc []float32, lda int, v []float32, ldv int, wm []float32, nk, c0, c1, flags int) {
	for r := range 4 {
		a := acc[r*lda+c0 : r*lda+c1]
		for j := range nk {
			if flags&faMul != 0 {
				m := wm[8*j+4+r]
				for i := range a {
					a[i] *= m
				}
				if flags&faRound != 0 {
					roundF16Go(a, a)
				}
			}
			w := wm[8*j+r]
			vr := v[j*ldv+c0 : j*ldv+c1]
			for i, x := range vr {
				a[i] += w * x
			}
			if flags&faRound != 0 {
				roundF16Go(a, a)
			}
		}
	}
}

// faDecodeRows sets dst to rows rows of n values of x starting at x's row
// off (x.off's offset), consecutive in dst, with one faDecode where x
// holds them back to back.
func faDecodeRows(dst []float32, x *tview, off, rows, n int) {
	rowLen := n
	if x.raw != nil {
		rowLen = x.typ.RowSize(n)
	}
	if x.st[1] == rowLen {
		faDecode(dst, x, off, rows*n)
		return
	}
	for r := range rows {
		faDecode(dst[r*n:], x, off+r*x.st[1], n)
	}
}

// faDecode sets dst to the n values of x's rows at off (x.off's: elements,
// or bytes for a block type) as float32: ggml's to_float, with q8_0's
// vectorized.
func faDecode(dst []float32, x *tview, off, n int) {
	dst = dst[:n]
	switch {
	case x.typ == tensor.F32:
		copy(dst, x.f32[off:off+n])
	case x.typ == tensor.F16:
		f16ToF32Row(dst, x.f16[off:off+n])
	case x.typ == tensor.Q8_0 && n%32 == 0:
		decodeQ8_0(dst, x.raw[off:off+n/32*34])
	default:
		tensor.Dequantize(dst[:0], x.typ, x.raw[off:], n)
	}
}

// decodeQ8_0 decodes the whole q8_0 blocks of src into dst.
func decodeQ8_0(dst []float32, src []byte) {
	nb := len(src) / 34
	if nb == 0 {
		return
	}
	_ = dst[32*nb-1]
	switch level {
	case isaAVX512:
		decodeQ8_0AVX512(&dst[0], &src[0], nb)
	case isaAVX2:
		decodeQ8_0AVX2(&dst[0], &src[0], nb)
	default:
		decodeQ8_0Go(dst, src)
	}
}

// decodeQ8_0Go is tensor's q8_0 decoder: d·q per element, in float32.
func decodeQ8_0Go(dst []float32, src []byte) {
	for b := 0; b+34 <= len(src); b += 34 {
		d := f16Table[binary.LittleEndian.Uint16(src[b:])]
		out := dst[b/34*32 : b/34*32+32]
		for i, q := range src[b+2 : b+34] {
			out[i] = float32(int8(q)) * d
		}
	}
}

// faAccumRows is a small GEMM: four rows of sums acc (lda apart), cols
// columns, plus (or, with zero, set to) four rows of weights w (ldw apart)
// times nk rows of v (ldv apart):
//
//	acc[r·lda + c] (+)= Σ_j w[r·ldw + j]·v[j·ldv + c]
//
// in float32, key by key (the products fused in the kernels, which keep
// strips of the sums in registers). It is O += P·V, and S = Q·Kᵀ over a
// transposed K.
func faAccumRows(acc []float32, lda int, v []float32, ldv int, w []float32, ldw, nk, cols int, zero bool) {
	if cols == 0 {
		return
	}
	if nk == 0 {
		if zero {
			for r := range 4 {
				clear(acc[r*lda : r*lda+cols])
			}
		}
		return
	}
	_, _, _ = acc[3*lda+cols-1], v[(nk-1)*ldv+cols-1], w[3*ldw+nk-1]
	z := 0
	if zero {
		z = 1
	}
	c := 0
	switch level {
	case isaAVX512:
		if c = cols &^ 31; c > 0 {
			faAccumRowsAVX512(&acc[0], lda, &v[0], ldv, &w[0], ldw, nk, c, z)
		}
	case isaAVX2:
		if c = cols &^ 15; c > 0 {
			faAccumRowsAVX2(&acc[0], lda, &v[0], ldv, &w[0], ldw, nk, c, z)
		}
	}
	if c < cols {
		faAccumRowsGo(acc, lda, v, ldv, w, ldw, nk, c, cols, zero)
	}
}

// faAccumRowsGo is faAccumRows's loop over columns [c0, c1).
func faAccumRowsGo(acc []float32, lda int, v []float32, ldv int, w []float32, ldw, nk, c0, c1 int, zero bool) {
	for r := range 4 {
		a := acc[r*lda+c0 : r*lda+c1]
		if zero {
			clear(a)
		}
		for j, x := range w[r*ldw : r*ldw+nk] {
			for i, y := range v[j*ldv+c0 : j*ldv+c1] {
				a[i] += x * y
			}
		}
	}
}

// faExpConsts are faExp's constants, at the offsets faExpAVX2 reads: a
// float32 exponential as Cephes' expf computes it (e^x = 2^n·e^r, n =
// round(x·log2 e), r = x - n·ln2 in two parts, e^r ≈ 1 + r + r²·p(r)).
type faExpConsts struct {
	log2e, ln2hi, ln2lo float32
	p                   [6]float32
	one, lo, hi         float32
	bias                int32
}

var faExpC = faExpConsts{
	log2e: 1.44269504088896341, ln2hi: 0.693359375, ln2lo: -2.12194440e-4,
	p:   [6]float32{1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1},
	one: 1, lo: -87.33654, hi: 88.37626, bias: 127,
}

// faExp sets y[i] = e^(x[i] - m) in float32 (within two ulps; 0 below
// e^-87.3, where a normal float32 ends) and returns their sum: the
// softmax weights of a block of scores. y may be x.
func faExp(y, x []float32, m float32) float32 {
	x = x[:len(y)]
	var s float32
	n := 0
	if level >= isaAVX2 {
		if n = len(y) &^ 7; n > 0 {
			s = faExpAVX2(&y[0], &x[0], n, m, &faExpC)
		}
	}
	return s + faExpGo(y[n:], x[n:], m)
}

// faExpGo is faExp's loop.
func faExpGo(y, x []float32, m float32) float32 {
	c := &faExpC
	var s float32
	for i, xi := range x[:len(y)] {
		v := xi - m
		if !(v >= c.lo) { // -Inf, NaN and underflow
			y[i] = 0
			continue
		}
		v = min(v, c.hi)
		n := float32(math.RoundToEven(float64(v * c.log2e)))
		r := v - n*c.ln2hi
		r -= n * c.ln2lo
		p := c.p[0]
		for _, k := range c.p[1:] {
			p = p*r + k
		}
		e := (p*(r*r) + r + c.one) * math.Float32frombits(uint32(int32(n)+c.bias)<<23)
		y[i] = e
		s += e
	}
	return s
}

// faScores sets s[i] = s[i]·scale + slope·m[i] (m nil: no mask) and
// returns the largest (-Inf for none): a row of scores scaled and masked
// in one pass.
func faScores(s, m []float32, scale, slope float32) float32 {
	if m != nil {
		m = m[:len(s)]
	}
	mx := float32(math.Inf(-1))
	n := 0
	if level >= isaAVX2 {
		if n = len(s) &^ 7; n > 0 {
			var mp *float32
			if m != nil {
				mp = &m[0]
			}
			mx = faScoresAVX2(&s[0], mp, n, scale, slope)
		}
	}
	var mt []float32
	if m != nil {
		mt = m[n:]
	}
	return max(mx, faScoresGo(s[n:], mt, scale, slope))
}

// faScoresGo is faScores's loop.
func faScoresGo(s, m []float32, scale, slope float32) float32 {
	mx := float32(math.Inf(-1))
	for i, x := range s {
		x *= scale
		if m != nil {
			x += slope * m[i]
		}
		s[i] = x
		mx = max(mx, x)
	}
	return mx
}
