package cpu

import (
	"encoding/binary"
	"math"

	"github.com/graphc/graphc/tensor"
)

// KDot is MulMat's dot product for weight type t at the current level
// (quantKernels[t].dot), k elements; nil for a type without one.
func KDot(t tensor.DType) func(a, x []byte, xd []float32, xs []int32, k int) float32 {
	if q := quantKernels[t]; q != nil {
		return q.dot
	}
	return nil
}

// VecDotType is ggml's vec_dot_type of weight type t.
func VecDotType(t tensor.DType) tensor.DType { return vecDotType(t) }

// QuantizeActivations appends row in type vt as MulMat quantizes x.
func QuantizeActivations(dst []byte, vt tensor.DType, row []float32) []byte {
	return quantizeActivations(dst, vt, row)
}

// A KKernels holds a K-quant's dot product over nb blocks: the Go loop
// and the AVX2 and AVX-512 VNNI assembly (the Go loop again in a build
// without assembly), to be called only where the machine has them.
type KKernels struct {
	Go, AVX2, VNNI func(a, x []byte, nb int) float32
}

// KQuantKernels are the K-quants with assembly.
var KQuantKernels = map[tensor.DType]KKernels{
	tensor.Q4_K:   {dotQ4_KGo, oneRow(dotQ4_KRowsAVX2), oneRow(dotQ4_KRowsVNNI)},
	tensor.Q5_K:   {dotQ5_KGo, dotQ5_KAVX2, dotQ5_KVNNI},
	tensor.Q6_K:   {dotQ6_KGo, oneRow(dotQ6_KRowsAVX2), oneRow(dotQ6_KRowsVNNI)},
	tensor.Q2_K:   {dotQ2_KGo, oneRow(dotQ2_KRowsAVX2), oneRow(dotQ2_KRowsVNNI)},
	tensor.Q3_K:   {dotQ3_KGo, oneRow(dotQ3_KRowsAVX2), oneRow(dotQ3_KRowsVNNI)},
	tensor.IQ4_XS: {dotIQ4_XSGo, oneRow(dotIQ4_XSRowsAVX2), oneRow(dotIQ4_XSRowsVNNI)},
}

// KSummedInLanes are the K-quants whose assembly adds the blocks' scaled
// sums in float32 lanes: it agrees with the Go loop to float32 rounding
// (KMagnitude), not bit for bit.
var KSummedInLanes = map[tensor.DType]bool{tensor.Q4_K: true, tensor.Q6_K: true,
	tensor.Q2_K: true, tensor.Q3_K: true, tensor.IQ4_XS: true,
	tensor.Q5_0: true, tensor.IQ4_NL: true, tensor.Q4_1: true, tensor.Q5_1: true}

// KMagnitude is what the float32 rounding of a q4_K or q6_K dot product
// over nb blocks is relative to: for q4_K, Σ over blocks of
// |f16(d)·dx|·Σ_j scale_j·Σ|q·x| + |f16(dmin)·dx|·Σ_j min_j·|x's sum over
// sub-block j|; for q6_K, Σ |f16(d)·dx|·Σ_g |scale_g|·Σ (q+32)·|x| (its
// lanes hold Σ q·x and 32·Σ x apart): a bound on every partial sum's
// magnitude, in lanes or in block order. For the types of 32-element
// blocks it is QMagnitude over the nb·8 blocks; for q2_K, q3_K and
// iq4_xs, kMagnitude2's.
func KMagnitude(dt tensor.DType, a, x []byte, nb int) float64 {
	if _, ok := Q32Kernels[dt]; ok {
		return QMagnitude(dt, a, x, nb*qkK/32)
	}
	if f := kMagnitude2[dt]; f != nil {
		var mag float64
		for b := 0; b < nb; b++ {
			mag += f(a[b*dt.Size():(b+1)*dt.Size()], x[b*q8_KSize:(b+1)*q8_KSize])
		}
		return mag
	}
	var mag float64
	if dt == tensor.Q6_K {
		for b := 0; b < nb; b++ {
			ab, xb := a[b*q6_KSize:(b+1)*q6_KSize], x[b*q8_KSize:(b+1)*q8_KSize]
			var isum int64
			for h := 0; h < 2; h++ {
				ql, qh := ab[64*h:], ab[128+32*h:]
				for s := 0; s < 4; s++ {
					for l := 0; l < 32; l++ {
						q := int64(ql[l+32*(s&1)]>>(4*(s>>1))&15 | (qh[l]>>(2*s)&3)<<4)
						g := 8*h + 2*s + l/16
						isum += abs64(int64(int8(ab[192+g]))) * (q + 32) * abs64(int64(int8(xb[q8_KQuants+128*h+32*s+l])))
					}
				}
			}
			mag += math.Abs(float64(f16At(ab, 208))*float64(q8KScale(xb))) * float64(isum)
		}
		return mag
	}
	for b := 0; b < nb; b++ {
		ab, xb := a[b*q4_KSize:(b+1)*q4_KSize], x[b*q8_KSize:(b+1)*q8_KSize]
		sc, mn := kScaleMin(ab[4:16])
		var isum, msum int64
		for j := 0; j < 8; j++ {
			var s, bs int64
			for l := 0; l < 32; l++ {
				q := ab[16+32*(j/2)+l] >> (4 * (j % 2)) & 15
				s += int64(q) * abs64(int64(int8(xb[q8_KQuants+32*j+l])))
			}
			bs = abs64(int64(q8KBsum(xb, 2*j) + q8KBsum(xb, 2*j+1)))
			isum += int64(sc[j]) * s
			msum += int64(mn[j]) * bs
		}
		dx := math.Abs(float64(q8KScale(xb)))
		mag += math.Abs(float64(f16At(ab, 0)))*dx*float64(isum) + math.Abs(float64(f16At(ab, 2)))*dx*float64(msum)
	}
	return mag
}

func abs64(v int64) int64 { return max(v, -v) }

// oneRow is a rows kernel on one row.
func oneRow(f func(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)) func(a, x []byte, nb int) float32 {
	return func(a, x []byte, nb int) float32 {
		var d [1]float32
		f(a, 0, x, nb, d[:], 0, 1)
		return d[0]
	}
}

// KRows is type t's rows kernel at the current level, nil without one.
func KRows(t tensor.DType) func(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int) {
	if q := quantKernels[t]; q != nil {
		return q.rows
	}
	return nil
}

// kMagnitude2 is KMagnitude of one block of q2_K (|f16(d)·dx|·Σ_g
// scale_g·Σ q·|x| + |f16(dmin)·dx|·Σ_g min_g·|bsum_g|), q3_K (|f16(d)·dx|·
// Σ_g |scale_g|·(Σ q'·|x| + 4·|bsum_g|), q' the quant plus 4: its lanes
// hold both) and iq4_xs (|f16(d)·dx|·Σ_j |ls_j|·Σ |v·x|).
var kMagnitude2 = map[tensor.DType]func(a, x []byte) float64{
	tensor.Q2_K: func(a, x []byte) float64 {
		var isum, msum int64
		for g := 0; g < 16; g++ {
			for l := 0; l < 16; l++ {
				e := 16*g + l
				q := a[16+32*(e/128)+e%32] >> (2 * (e % 128 / 32)) & 3
				isum += int64(a[g]&15) * int64(q) * abs64(int64(int8(x[q8_KQuants+e])))
			}
			msum += int64(a[g]>>4) * abs64(int64(q8KBsum(x, g)))
		}
		dx := math.Abs(float64(q8KScale(x)))
		return math.Abs(float64(f16At(a, 80)))*dx*float64(isum) + math.Abs(float64(f16At(a, 82)))*dx*float64(msum)
	},
	tensor.Q3_K: func(a, x []byte) float64 {
		var isum int64
		for g := 0; g < 16; g++ {
			var s int64
			for l := 0; l < 16; l++ {
				e := 16*g + l
				h, sh := e/128, e%128/32
				q := int64(a[32+32*h+e%32]>>(2*sh)&3) + 4*int64(a[e%32]>>(4*h+sh)&1)
				s += q * abs64(int64(int8(x[q8_KQuants+e])))
			}
			isum += abs64(int64(q3KScale(a, g))) * (s + 4*abs64(int64(q8KBsum(x, g))))
		}
		return math.Abs(float64(f16At(a, 108))*float64(q8KScale(x))) * float64(isum)
	},
	tensor.IQ4_XS: func(a, x []byte) float64 {
		h := uint32(binary.LittleEndian.Uint16(a[2:]))
		var isum int64
		for j := 0; j < 8; j++ {
			ls := int64(a[4+j/2]>>(4*(j%2))&15|byte(h>>(2*j)&3)<<4) - 32
			var s int64
			for l := 0; l < 16; l++ {
				q := a[8+16*j+l]
				s += abs64(int64(kvaluesIQ4NL[q&15])*int64(int8(x[q8_KQuants+32*j+l]))) +
					abs64(int64(kvaluesIQ4NL[q>>4])*int64(int8(x[q8_KQuants+32*j+16+l])))
			}
			isum += abs64(ls) * s
		}
		return math.Abs(float64(f16At(a, 0))*float64(q8KScale(x))) * float64(isum)
	},
}

// q3KScale is q3_K block a's scale g (6 bits less 32), as dotQ3_KGo
// decodes it.
func q3KScale(a []byte, g int) int32 {
	s := a[96:108]
	lo := s[g%8] >> (4 * (g / 8)) & 15
	hi := s[8+g%4] >> (2 * (g / 4)) & 3
	return int32(lo|hi<<4) - 32
}

// QuantizeQ8_KGo is the q8_K quantizer's Go loop, which the assembly
// matches byte for byte.
func QuantizeQ8_KGo(dst []byte, row []float32) []byte { return quantizeQ8_KGo(dst, row) }
