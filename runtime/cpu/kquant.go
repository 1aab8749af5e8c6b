package cpu

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/graphc/graphc/tensor"
)

// The activation quantizers q8_1 and q8_K and the dot products of the
// weight types whose vec_dot_type they are (and of q5_0 and iq4_nl, which
// take q8_0), as ggml's CPU backend computes them: per block, the exact
// integer sums of the quants' products (with the block's sub-scales and
// mins applied in integers, as ggml does), then the float scales. The Go
// loops here are the reference; the assembly (kdot_amd64.s, kdot2_amd64.s,
// qdot2_amd64.s) computes each block's integer sums identically and, for
// q5_K, its float products too, adding the blocks in the same order (the
// same bits); for the others it adds the scaled sums in float32 lanes
// (the same value to float32 rounding: the summation order).
//
// Each block's float value is rounded as written (explicit conversions),
// so that no compiler fuses a multiply and an add into an FMA: ggml's
// kernels keep some sums in SIMD lanes or use FMA, which changes the
// result by float32 rounding of the row's sum only.
//
// Block layouts (ggml-common.h), byte offsets:
//
//	q8_1   36: d f16 @0, s f16 @2 (d·Σqs), qs int8[32] @4
//	q8_K  292: d f32 @0, qs int8[256] @4, bsums int16[16] @260 (Σ of each 16 qs)
//	q4_1   20: d @0, m @2, qs[16] @4
//	q5_0   22: d @0, qh[4] @2, qs[16] @6
//	q5_1   24: d @0, m @2, qh[4] @4, qs[16] @8
//	iq4_nl 18: d @0, qs[16] @2
//	q2_K   84: scales[16] @0 (scale | min<<4), qs[64] @16, d @80, dmin @82
//	q3_K  110: hmask[32] @0, qs[64] @32, scales[12] @96 (6-bit), d @108
//	q4_K  144: d @0, dmin @2, scales[12] @4 (6-bit scales and mins), qs[128] @16
//	q5_K  176: d @0, dmin @2, scales[12] @4, qh[32] @16, qs[128] @48
//	q6_K  210: ql[128] @0, qh[64] @128, scales int8[16] @192, d @208
//	iq4_xs 136: d @0, scales_h u16 @2, scales_l[4] @4, qs[128] @8

// Block sizes in bytes.
const (
	q8_1Size   = 36
	q8_KSize   = 292
	q4_1Size   = 20
	q5_0Size   = 22
	q5_1Size   = 24
	iq4nlSize  = 18
	q2_KSize   = 84
	q3_KSize   = 110
	q4_KSize   = 144
	q5_KSize   = 176
	q6_KSize   = 210
	iq4xsSize  = 136
	q8_KBsums  = 260 // offset of q8_K's bsums
	qkK        = 256 // elements per K-quant block
	q8_KQuants = 4   // offset of q8_K's qs
)

// kvaluesIQ4NL is ggml's kvalues_iq4nl, the values of iq4_nl's and
// iq4_xs's nibbles.
var kvaluesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

func f16At(b []byte, o int) float32 { return tensor.F16ToF32(binary.LittleEndian.Uint16(b[o:])) }

// quantizeQ8_1Go appends row as q8_1 as ggml-cpu's x86 quantize_row_q8_1
// does: quantizeQ8_0Go's d and quants (rounded half to even), and
// s = f16(d·Σqs) with d the float32 scale before its f16 rounding.
func quantizeQ8_1Go(dst []byte, row []float32) []byte {
	for b := 0; b < len(row); b += 32 {
		x := row[b : b+32]
		amax := absMax(x)
		d := amax / 127
		id := float32(0)
		if amax != 0 {
			id = 127 / amax
		}
		dst = binary.LittleEndian.AppendUint16(dst, tensor.F32ToF16(d))
		o := len(dst)
		dst = append(dst, 0, 0)
		var sum int32
		for _, v := range x {
			q := int32(math.RoundToEven(float64(v * id)))
			sum += q
			dst = append(dst, byte(int8(q)))
		}
		binary.LittleEndian.PutUint16(dst[o:], tensor.F32ToF16(d*float32(sum)))
	}
	return dst
}

// nearestInt is ggml's nearest_int: v rounded half to even through the
// float32 addition of 1.5·2²³ (|v| ≤ 2²²). float32(v) keeps a caller's
// product rounded, not fused into the addition (GOAMD64=v3 would).
func nearestInt(v float32) int32 {
	f := float32(v) + 12582912
	return int32(math.Float32bits(f)&0x007fffff) - 0x00400000
}

// quantizeQ8_KGo appends row as q8_K as ggml's quantize_row_q8_K_ref
// (what its x86 CPU backend's from_float runs): per block of 256, the
// value of largest magnitude (the first such) max, iscale = -127/max,
// quants nearest_int(iscale·v) capped at 127, d = 1/iscale, and the sums
// of each 16 quants. An all-zero block is all zeros (ggml leaves its
// bsums as they were; nothing reads them, every product is 0).
func quantizeQ8_KGo(dst []byte, row []float32) []byte {
	for b := 0; b < len(row); b += qkK {
		x := row[b : b+qkK : b+qkK]
		var amax, mx float32
		for _, v := range x {
			if a := math.Float32frombits(math.Float32bits(v) &^ (1 << 31)); a > amax {
				amax, mx = a, v
			}
		}
		o := len(dst)
		dst = append(dst, make([]byte, q8_KSize)...)
		blk := dst[o : o+q8_KSize]
		if amax == 0 {
			continue
		}
		iscale := -127 / mx
		qs := blk[q8_KQuants : q8_KQuants+qkK]
		for j := 0; j < 16; j++ {
			q, xs := qs[16*j:16*j+16], x[16*j:16*j+16]
			var s int32
			for i, v := range xs {
				n := min(127, nearestInt(iscale*v))
				q[i] = byte(int8(n))
				s += n
			}
			binary.LittleEndian.PutUint16(blk[q8_KBsums+2*j:], uint16(s))
		}
		binary.LittleEndian.PutUint32(blk, math.Float32bits(1/iscale))
	}
	return dst
}

// quantizeQ8_K is quantizeQ8_KGo at the current level: MulMat quantizes
// every activation row with it. The AVX2 kernel, which writes the same
// bytes, runs at the avx512 level too: once vectorized the quantizer is
// too small a share of a model's time for a second kernel.
func quantizeQ8_K(dst []byte, row []float32) []byte {
	if level < isaAVX2 {
		return quantizeQ8_KGo(dst, row)
	}
	if len(row)%qkK != 0 {
		bug("quantizeQ8_K: a row of %d values, not whole blocks of %d", len(row), qkK)
	}
	o, n := len(dst), len(row)/qkK*q8_KSize
	dst = slices.Grow(dst, n)[:o+n]
	quantizeQ8_KAVX2(dst[o:], row)
	return dst
}

// q8KScale is a q8_K block's d.
func q8KScale(x []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(x)) }

// q8KBsum is a q8_K block's sum of quants j·16 to j·16+15.
func q8KBsum(x []byte, j int) int32 {
	return int32(int16(binary.LittleEndian.Uint16(x[q8_KBsums+2*j:])))
}

// --- q4_1, q5_0, q5_1, iq4_nl: blocks of 32 ---

// dotQ4_1Go is ggml_vec_dot_q4_1_q8_1: per block, da·dx·Σ nibble·x + ma·sx.
func dotQ4_1Go(a, x []byte, nb int) float32 {
	var sum float32
	for b := 0; b < nb; b++ {
		ab, xb := a[b*q4_1Size:(b+1)*q4_1Size], x[b*q8_1Size:(b+1)*q8_1Size]
		var s int32
		for j := 0; j < 16; j++ {
			s += int32(ab[4+j]&15)*int32(int8(xb[4+j])) + int32(ab[4+j]>>4)*int32(int8(xb[4+16+j]))
		}
		d := f16At(ab, 0) * f16At(xb, 0)
		sum += float32(d*float32(s)) + float32(f16At(ab, 2)*f16At(xb, 2))
	}
	return sum
}

// dotQ5_0Go is ggml_vec_dot_q5_0_q8_0: 5-bit quants (nibble | qh bit << 4)
// less 16.
func dotQ5_0Go(a, x []byte, nb int) float32 {
	var sum float32
	for b := 0; b < nb; b++ {
		ab, xb := a[b*q5_0Size:(b+1)*q5_0Size], x[b*34:(b+1)*34]
		qh := binary.LittleEndian.Uint32(ab[2:])
		var s int32
		for j := 0; j < 16; j++ {
			v0 := int32(ab[6+j]&15|byte(qh>>j&1)<<4) - 16
			v1 := int32(ab[6+j]>>4|byte(qh>>(j+16)&1)<<4) - 16
			s += v0*int32(int8(xb[2+j])) + v1*int32(int8(xb[2+16+j]))
		}
		sum += float32(s) * (f16At(ab, 0) * f16At(xb, 0))
	}
	return sum
}

// dotQ5_1Go is ggml_vec_dot_q5_1_q8_1: unsigned 5-bit quants, plus m·s.
func dotQ5_1Go(a, x []byte, nb int) float32 {
	var sum float32
	for b := 0; b < nb; b++ {
		ab, xb := a[b*q5_1Size:(b+1)*q5_1Size], x[b*q8_1Size:(b+1)*q8_1Size]
		qh := binary.LittleEndian.Uint32(ab[4:])
		var s int32
		for j := 0; j < 16; j++ {
			v0 := int32(ab[8+j]&15 | byte(qh>>j&1)<<4)
			v1 := int32(ab[8+j]>>4 | byte(qh>>(j+16)&1)<<4)
			s += v0*int32(int8(xb[4+j])) + v1*int32(int8(xb[4+16+j]))
		}
		d := f16At(ab, 0) * f16At(xb, 0)
		sum += float32(d*float32(s)) + float32(f16At(ab, 2)*f16At(xb, 2))
	}
	return sum
}

// dotIQ4_NLGo is ggml_vec_dot_iq4_nl_q8_0: nibbles looked up in
// kvalues_iq4nl.
func dotIQ4_NLGo(a, x []byte, nb int) float32 {
	var sum float32
	for b := 0; b < nb; b++ {
		ab, xb := a[b*iq4nlSize:(b+1)*iq4nlSize], x[b*34:(b+1)*34]
		var s int32
		for j := 0; j < 16; j++ {
			s += int32(kvaluesIQ4NL[ab[2+j]&15])*int32(int8(xb[2+j])) + int32(kvaluesIQ4NL[ab[2+j]>>4])*int32(int8(xb[2+16+j]))
		}
		sum += float32(s) * (f16At(xb, 0) * f16At(ab, 0))
	}
	return sum
}

// --- K-quants: super-blocks of 256 against q8_K ---

// kScaleMin decodes q4_K's and q5_K's 12 bytes of 6-bit scales and mins
// (get_scale_min_k4) into 8 scales and 8 mins.
func kScaleMin(s []byte) (sc, mn [8]int32) {
	_ = s[11]
	for j := 0; j < 4; j++ {
		sc[j] = int32(s[j] & 63)
		mn[j] = int32(s[j+4] & 63)
		sc[j+4] = int32(s[j+8]&15 | s[j]>>6<<4)
		mn[j+4] = int32(s[j+8]>>4 | s[j+4]>>6<<4)
	}
	return
}

// dotQ4_KGo is ggml_vec_dot_q4_K_q8_K over nb blocks: per block,
// d·Σ_j scale_j·(Σ nibble·x) − dmin·Σ_j min_j·(x's sum over sub-block j),
// d = f16(d)·dx and dmin = f16(dmin)·dx. Sub-block 2i is the low nibbles
// of qs[32i:32i+32], 2i+1 their high nibbles.
func dotQ4_KGo(a, x []byte, nb int) float32 {
	var sum float32
	for b := 0; b < nb; b++ {
		ab, xb := a[b*q4_KSize:(b+1)*q4_KSize], x[b*q8_KSize:(b+1)*q8_KSize]
		sc, mn := kScaleMin(ab[4:16])
		qs, q8 := ab[16:16+128], xb[q8_KQuants:q8_KQuants+qkK]
		var isum, msum int32
		for i := 0; i < 4; i++ {
			var lo, hi int32
			for l := 0; l < 32; l++ {
				q := qs[32*i+l]
				lo += int32(q&15) * int32(int8(q8[64*i+l]))
				hi += int32(q>>4) * int32(int8(q8[64*i+32+l]))
			}
			isum += sc[2*i]*lo + sc[2*i+1]*hi
		}
		for j := 0; j < 16; j++ {
			msum += q8KBsum(xb, j) * mn[j/2]
		}
		dx := q8KScale(xb)
		sum += float32(f16At(ab, 0)*dx*float32(isum)) - float32(f16At(ab, 2)*dx*float32(msum))
	}
	return sum
}

// dotQ5_KGo is ggml_vec_dot_q5_K_q8_K over nb blocks: dotQ4_KGo's with a
// fifth bit, qh[l] bit j of sub-block j's element l, worth 16.
func dotQ5_KGo(a, x []byte, nb int) float32 {
	var sum float32
	for b := 0; b < nb; b++ {
		ab, xb := a[b*q5_KSize:(b+1)*q5_KSize], x[b*q8_KSize:(b+1)*q8_KSize]
		sc, mn := kScaleMin(ab[4:16])
		qh, qs, q8 := ab[16:48], ab[48:48+128], xb[q8_KQuants:q8_KQuants+qkK]
		var isum, msum int32
		for i := 0; i < 4; i++ {
			var lo, hi int32
			for l := 0; l < 32; l++ {
				q := qs[32*i+l]
				lo += int32(q&15|(qh[l]>>(2*i)&1)<<4) * int32(int8(q8[64*i+l]))
				hi += int32(q>>4|(qh[l]>>(2*i+1)&1)<<4) * int32(int8(q8[64*i+32+l]))
			}
			isum += sc[2*i]*lo + sc[2*i+1]*hi
		}
		for j := 0; j < 16; j++ {
			msum += q8KBsum(xb, j) * mn[j/2]
		}
		dx := q8KScale(xb)
		sum += float32(f16At(ab, 0)*dx*float32(isum)) - float32(f16At(ab, 2)*dx*float32(msum))
	}
	return sum
}

// dotQ6_KGo is ggml_vec_dot_q6_K_q8_K over nb blocks: per block,
// d·Σ_g scale_g·Σ (q−32)·x over the 16 groups of 16, with d = f16(d)·dx.
// The quants of half h (elements 128h to 128h+127, ql[64h:], qh[32h:]):
// element 32s+l is ql[l + 32(s&1)] nibble s>>1 | (qh[l] >> 2s & 3) << 4.
// Computed as Σ_g scale_g·Σ q·x − 32·Σ_g scale_g·bsum_g.
func dotQ6_KGo(a, x []byte, nb int) float32 {
	var sum float32
	for b := 0; b < nb; b++ {
		ab, xb := a[b*q6_KSize:(b+1)*q6_KSize], x[b*q8_KSize:(b+1)*q8_KSize]
		q8 := xb[q8_KQuants : q8_KQuants+qkK]
		sc := ab[192:208]
		var isum int32
		for h := 0; h < 2; h++ {
			ql, qh := ab[64*h:64*h+64], ab[128+32*h:128+32*h+32]
			for s := 0; s < 4; s++ {
				var g0, g1 int32 // the groups of elements 32s..32s+15, 32s+16..32s+31
				for l := 0; l < 32; l++ {
					q := ql[l+32*(s&1)]>>(4*(s>>1))&15 | (qh[l]>>(2*s)&3)<<4
					p := int32(q) * int32(int8(q8[128*h+32*s+l]))
					if l < 16 {
						g0 += p
					} else {
						g1 += p
					}
				}
				g := 8*h + 2*s
				isum += int32(int8(sc[g]))*g0 + int32(int8(sc[g+1]))*g1
			}
		}
		var msum int32
		for g := 0; g < 16; g++ {
			msum += int32(int8(sc[g])) * q8KBsum(xb, g)
		}
		isum -= 32 * msum
		sum += float32(f16At(ab, 208) * q8KScale(xb) * float32(isum))
	}
	return sum
}

// dotQ3_KGo is ggml_vec_dot_q3_K_q8_K over nb blocks: 3-bit quants, the
// 2 low bits in qs and the high bit in hmask (clear: less 4), 16 6-bit
// scales less 32, one per 16 elements.
func dotQ3_KGo(a, x []byte, nb int) float32 {
	var sum float32
	for b := 0; b < nb; b++ {
		ab, xb := a[b*q3_KSize:(b+1)*q3_KSize], x[b*q8_KSize:(b+1)*q8_KSize]
		hm, qs, q8 := ab[0:32], ab[32:96], xb[q8_KQuants:q8_KQuants+qkK]
		s := ab[96:108]
		a0, a1, tmp := binary.LittleEndian.Uint32(s), binary.LittleEndian.Uint32(s[4:]), binary.LittleEndian.Uint32(s[8:])
		const m1, m2 = 0x03030303, 0x0f0f0f0f
		var aux [4]uint32
		aux[0] = a0&m2 | (tmp>>0&m1)<<4
		aux[1] = a1&m2 | (tmp>>2&m1)<<4
		aux[2] = a0>>4&m2 | (tmp>>4&m1)<<4
		aux[3] = a1>>4&m2 | (tmp>>6&m1)<<4
		var isum int32
		for h := 0; h < 2; h++ {
			q3 := qs[32*h : 32*h+32]
			for sh := 0; sh < 4; sh++ {
				m := byte(1) << (4*h + sh)
				var g0, g1 int32
				for l := 0; l < 32; l++ {
					v := int32(q3[l] >> (2 * sh) & 3)
					if hm[l]&m == 0 {
						v -= 4
					}
					p := v * int32(int8(q8[128*h+32*sh+l]))
					if l < 16 {
						g0 += p
					} else {
						g1 += p
					}
				}
				g := 8*h + 2*sh
				sc0 := int32(byte(aux[g/4]>>(8*(g%4)))) - 32
				sc1 := int32(byte(aux[(g+1)/4]>>(8*((g+1)%4)))) - 32
				isum += sc0*g0 + sc1*g1
			}
		}
		sum += float32(f16At(ab, 108) * q8KScale(xb) * float32(isum))
	}
	return sum
}

// dotQ2_KGo is ggml_vec_dot_q2_K_q8_K over nb blocks: 2-bit quants, per
// group of 16 a 4-bit scale and a 4-bit min (scales[g] & 15, >> 4):
// dall·Σ_g scale_g·Σ q·x − dmin·Σ_g min_g·bsum_g.
func dotQ2_KGo(a, x []byte, nb int) float32 {
	var sum float32
	for b := 0; b < nb; b++ {
		ab, xb := a[b*q2_KSize:(b+1)*q2_KSize], x[b*q8_KSize:(b+1)*q8_KSize]
		sc, qs, q8 := ab[0:16], ab[16:80], xb[q8_KQuants:q8_KQuants+qkK]
		var isum, msum int32
		for h := 0; h < 2; h++ {
			q2 := qs[32*h : 32*h+32]
			for sh := 0; sh < 4; sh++ {
				var g0, g1 int32
				for l := 0; l < 32; l++ {
					p := int32(q2[l]>>(2*sh)&3) * int32(int8(q8[128*h+32*sh+l]))
					if l < 16 {
						g0 += p
					} else {
						g1 += p
					}
				}
				g := 8*h + 2*sh
				isum += int32(sc[g]&15)*g0 + int32(sc[g+1]&15)*g1
			}
		}
		for g := 0; g < 16; g++ {
			msum += q8KBsum(xb, g) * int32(sc[g]>>4)
		}
		dx := q8KScale(xb)
		sum += float32(dx*f16At(ab, 80)*float32(isum)) - float32(dx*f16At(ab, 82)*float32(msum))
	}
	return sum
}

// dotIQ4_XSGo is ggml_vec_dot_iq4_xs_q8_K over nb blocks: per sub-block
// of 32 a 6-bit scale less 32 (low 4 bits in scales_l, high 2 in
// scales_h), the nibbles looked up in kvalues_iq4nl:
// f16(d)·dx·Σ_j (ls_j−32)·Σ v·x.
func dotIQ4_XSGo(a, x []byte, nb int) float32 {
	var sum float32
	for b := 0; b < nb; b++ {
		ab, xb := a[b*iq4xsSize:(b+1)*iq4xsSize], x[b*q8_KSize:(b+1)*q8_KSize]
		h := uint32(binary.LittleEndian.Uint16(ab[2:]))
		qs, q8 := ab[8:136], xb[q8_KQuants:q8_KQuants+qkK]
		var isum int32
		for j := 0; j < 8; j++ {
			ls := int32(ab[4+j/2]>>(4*(j%2))&15|byte(h>>(2*j)&3)<<4) - 32
			var s int32
			for l := 0; l < 16; l++ {
				q := qs[16*j+l]
				s += int32(kvaluesIQ4NL[q&15])*int32(int8(q8[32*j+l])) + int32(kvaluesIQ4NL[q>>4])*int32(int8(q8[32*j+16+l]))
			}
			isum += ls * s
		}
		sum += float32(f16At(ab, 0) * q8KScale(xb) * float32(isum))
	}
	return sum
}

// The K-quants' dot products for MulMat: the assembly at the current
// level where there is one, else the Go loop (q2_K, q3_K and iq4_xs:
// kdot2.go).

func dotQ4_K(a, x []byte, _ []float32, _ []int32, k int) float32 {
	var d [1]float32
	dotQ4_KRows(a, 0, x, k/qkK, d[:], 0, 1)
	return d[0]
}

// dotQ4_KRows is q4_K's rows kernel (quantKernel.rows): for r < rows,
// dst[r·ldd] = the dot product of a's row at r·lda with x over nb
// blocks.
func dotQ4_KRows(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int) {
	if rows == 0 {
		return
	}
	// The assembly reads and writes these, unchecked.
	_, _, _ = a[:(rows-1)*lda+nb*q4_KSize], x[:nb*q8_KSize], dst[(rows-1)*ldd]
	switch {
	case level == isaAVX512 && hasVNNI:
		dotQ4_KRowsVNNI(a, lda, x, nb, dst, ldd, rows)
	case level >= isaAVX2:
		dotQ4_KRowsAVX2(a, lda, x, nb, dst, ldd, rows)
	default:
		dotQ4_KRowsGo(a, lda, x, nb, dst, ldd, rows)
	}
}

func dotQ4_KRowsGo(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int) {
	for r := 0; r < rows; r++ {
		dst[r*ldd] = dotQ4_KGo(a[r*lda:], x, nb)
	}
}

func dotQ5_K(a, x []byte, _ []float32, _ []int32, k int) float32 {
	nb := k / qkK
	a, x = a[:nb*q5_KSize], x[:nb*q8_KSize]
	switch {
	case level == isaAVX512 && hasVNNI:
		return dotQ5_KVNNI(a, x, nb)
	case level >= isaAVX2:
		return dotQ5_KAVX2(a, x, nb)
	}
	return dotQ5_KGo(a, x, nb)
}

func dotQ6_K(a, x []byte, _ []float32, _ []int32, k int) float32 {
	var d [1]float32
	dotQ6_KRows(a, 0, x, k/qkK, d[:], 0, 1)
	return d[0]
}

// dotQ6_KRows is q6_K's rows kernel, as dotQ4_KRows.
func dotQ6_KRows(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int) {
	if rows == 0 {
		return
	}
	_, _, _ = a[:(rows-1)*lda+nb*q6_KSize], x[:nb*q8_KSize], dst[(rows-1)*ldd]
	switch {
	case level == isaAVX512 && hasVNNI:
		dotQ6_KRowsVNNI(a, lda, x, nb, dst, ldd, rows)
	case level >= isaAVX2:
		dotQ6_KRowsAVX2(a, lda, x, nb, dst, ldd, rows)
	default:
		dotQ6_KRowsGo(a, lda, x, nb, dst, ldd, rows)
	}
}

func dotQ6_KRowsGo(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int) {
	for r := 0; r < rows; r++ {
		dst[r*ldd] = dotQ6_KGo(a[r*lda:], x, nb)
	}
}
