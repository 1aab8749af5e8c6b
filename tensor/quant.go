package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Block layouts of ggml's quantized types (ggml-common.h):
//
//	block_q8_0 { ggml_half d; int8_t qs[32]; }      x[j] = qs[j]·d
//	block_q4_0 { ggml_half d; uint8_t qs[16]; }     x[j] = (qs[j] & 15 − 8)·d, x[j+16] = (qs[j] >> 4 − 8)·d
//	block_q4_1 { ggml_half d, m; uint8_t qs[16]; }  x[j] = (qs[j] & 15)·d + m, x[j+16] = (qs[j] >> 4)·d + m
//	block_q5_0 { ggml_half d; uint8_t qh[4]; uint8_t qs[16]; }
//	                                                q[j] = qs[j] & 15 | (qh bit j) << 4, q[j+16] = qs[j] >> 4 | (qh bit j+16) << 4,
//	                                                x = (q − 16)·d (qh little-endian)
//	block_q5_1 { ggml_half d, m; uint8_t qh[4]; uint8_t qs[16]; }
//	                                                q as q5_0's, x = q·d + m
//
// The K-quants (256-value super-blocks) are in kquant.go, iq4_nl and
// iq4_xs in iquant.go.
const qk = 32

// Quantize converts float32 values to dt's layout with the type table's
// Encode (ggml's reference rounding), appending to dst. len(src) must be a
// multiple of dt's block size.
func Quantize(dst []byte, dt DType, src []float32) []byte {
	enc := dt.Traits().Encode
	if enc == nil || len(src)%dt.BlockSize() != 0 {
		panic(fmt.Sprintf("BUG: Quantize %d values to %s", len(src), dt))
	}
	return enc(dst, src)
}

// Dequantize converts n values of dt's layout in src to float32 with the
// type table's Decode, appending to dst.
func Dequantize(dst []float32, dt DType, src []byte, n int) []float32 {
	dec := dt.Traits().Decode
	if dec == nil {
		panic("BUG: Dequantize from " + dt.String())
	}
	return dec(dst, src, n)
}

func encodeF32(dst []byte, src []float32) []byte {
	for _, v := range src {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
	}
	return dst
}

func decodeF32(dst []float32, src []byte, n int) []float32 {
	for i := range n {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:])))
	}
	return dst
}

func encodeF16(dst []byte, src []float32) []byte {
	for _, v := range src {
		dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(v))
	}
	return dst
}

func decodeF16(dst []float32, src []byte, n int) []float32 {
	for i := range n {
		dst = append(dst, F16ToF32(binary.LittleEndian.Uint16(src[2*i:])))
	}
	return dst
}

func encodeBF16(dst []byte, src []float32) []byte {
	for _, v := range src {
		dst = binary.LittleEndian.AppendUint16(dst, F32ToBF16(v))
	}
	return dst
}

func decodeBF16(dst []float32, src []byte, n int) []float32 {
	for i := range n {
		dst = append(dst, BF16ToF32(binary.LittleEndian.Uint16(src[2*i:])))
	}
	return dst
}

// encodeQ8_0 is quantize_row_q8_0_ref: d = amax/127, qs = round(x/d).
func encodeQ8_0(dst []byte, src []float32) []byte {
	for b := 0; b < len(src); b += qk {
		x := src[b : b+qk]
		amax := float32(0)
		for _, v := range x {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		d := amax / 127
		id := float32(0)
		if d != 0 {
			id = 1 / d
		}
		dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(d))
		for _, v := range x {
			dst = append(dst, byte(int8(roundf(v*id))))
		}
	}
	return dst
}

func decodeQ8_0(dst []float32, src []byte, n int) []float32 {
	for b := 0; b < n/qk; b++ {
		blk := src[b*34 : b*34+34]
		d := F16ToF32(binary.LittleEndian.Uint16(blk))
		for j := 0; j < qk; j++ {
			dst = append(dst, float32(int8(blk[2+j]))*d)
		}
	}
	return dst
}

// encodeQ4_0 is quantize_row_q4_0_ref: d = the value of largest magnitude
// over -8, qs = x/d + 8.5 truncated, at most 15.
func encodeQ4_0(dst []byte, src []float32) []byte {
	for b := 0; b < len(src); b += qk {
		x := src[b : b+qk]
		amax, vmax := float32(0), float32(0)
		for _, v := range x {
			if a := float32(math.Abs(float64(v))); a > amax {
				amax, vmax = a, v
			}
		}
		d := vmax / -8
		id := float32(0)
		if d != 0 {
			id = 1 / d
		}
		dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(d))
		for j := 0; j < qk/2; j++ {
			x0 := min(15, int8(float32(x[j]*id)+8.5))
			x1 := min(15, int8(float32(x[j+qk/2]*id)+8.5))
			dst = append(dst, byte(x0)|byte(x1)<<4)
		}
	}
	return dst
}

func decodeQ4_0(dst []float32, src []byte, n int) []float32 {
	for b := 0; b < n/qk; b++ {
		blk := src[b*18 : b*18+18]
		d := F16ToF32(binary.LittleEndian.Uint16(blk))
		var hi [qk / 2]float32
		for j := 0; j < qk/2; j++ {
			dst = append(dst, float32(int(blk[2+j]&15)-8)*d)
			hi[j] = float32(int(blk[2+j]>>4)-8) * d
		}
		dst = append(dst, hi[:]...)
	}
	return dst
}

// encodeQ4_1 is quantize_row_q4_1_ref: d = (max − min)/15, m = min,
// qs = (x − min)/d + 0.5 truncated, at most 15.
func encodeQ4_1(dst []byte, src []float32) []byte {
	for b := 0; b < len(src); b += qk {
		x := src[b : b+qk]
		lo, d, id := minStep(x, 15)
		dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(d))
		dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(lo))
		for j := 0; j < qk/2; j++ {
			// float32(…) rounds the product before the add, as C does:
			// Go may otherwise fuse the two on some architectures.
			x0 := min(15, int8(float32((x[j]-lo)*id)+0.5))
			x1 := min(15, int8(float32((x[j+qk/2]-lo)*id)+0.5))
			dst = append(dst, byte(x0)|byte(x1)<<4)
		}
	}
	return dst
}

func decodeQ4_1(dst []float32, src []byte, n int) []float32 {
	for b := 0; b < n/qk; b++ {
		blk := src[b*20 : b*20+20]
		d := F16ToF32(binary.LittleEndian.Uint16(blk))
		m := F16ToF32(binary.LittleEndian.Uint16(blk[2:]))
		var hi [qk / 2]float32
		for j := 0; j < qk/2; j++ {
			dst = append(dst, float32(float32(blk[4+j]&15)*d)+m)
			hi[j] = float32(float32(blk[4+j]>>4)*d) + m
		}
		dst = append(dst, hi[:]...)
	}
	return dst
}

// encodeQ5_0 is quantize_row_q5_0_ref: q4_0's rounding with 32 levels,
// d = the value of largest magnitude over -16.
func encodeQ5_0(dst []byte, src []float32) []byte {
	for b := 0; b < len(src); b += qk {
		x := src[b : b+qk]
		amax, vmax := float32(0), float32(0)
		for _, v := range x {
			if a := abs32(v); a > amax {
				amax, vmax = a, v
			}
		}
		d := vmax / -16
		id := float32(0)
		if d != 0 {
			id = 1 / d
		}
		var q [qk]uint8
		for j, v := range x {
			q[j] = uint8(min(31, int8(float32(v*id)+16.5)))
		}
		dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(d))
		dst = appendQ5(dst, &q)
	}
	return dst
}

// encodeQ5_1 is quantize_row_q5_1_ref: q4_1's rounding with 32 levels.
func encodeQ5_1(dst []byte, src []float32) []byte {
	for b := 0; b < len(src); b += qk {
		x := src[b : b+qk]
		lo, d, id := minStep(x, 31)
		var q [qk]uint8
		for j, v := range x {
			q[j] = uint8(float32((v-lo)*id) + 0.5)
		}
		dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(d))
		dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(lo))
		dst = appendQ5(dst, &q)
	}
	return dst
}

// minStep returns x's least value, the step d = (max − min)/levels and
// its inverse, 0 for a constant block.
func minStep(x []float32, levels float32) (lo, d, id float32) {
	lo, hi := float32(math.MaxFloat32), float32(-math.MaxFloat32)
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	if d = (hi - lo) / levels; d != 0 {
		id = 1 / d
	}
	return lo, d, id
}

// appendQ5 appends 32 five-bit values as qh[4] (the fifth bits) and
// qs[16] (the low nibbles, j and j+16 in one byte).
func appendQ5(dst []byte, q *[qk]uint8) []byte {
	var qh uint32
	for j, v := range q {
		qh |= uint32(v>>4&1) << j
	}
	dst = binary.LittleEndian.AppendUint32(dst, qh)
	for j := 0; j < qk/2; j++ {
		dst = append(dst, q[j]&15|q[j+qk/2]<<4)
	}
	return dst
}

func decodeQ5_0(dst []float32, src []byte, n int) []float32 {
	for b := 0; b < n/qk; b++ {
		blk := src[b*22 : b*22+22]
		d := F16ToF32(binary.LittleEndian.Uint16(blk))
		q := q5Values(blk[2:])
		for _, v := range q {
			dst = append(dst, float32(int(v)-16)*d)
		}
	}
	return dst
}

func decodeQ5_1(dst []float32, src []byte, n int) []float32 {
	for b := 0; b < n/qk; b++ {
		blk := src[b*24 : b*24+24]
		d := F16ToF32(binary.LittleEndian.Uint16(blk))
		m := F16ToF32(binary.LittleEndian.Uint16(blk[2:]))
		q := q5Values(blk[4:])
		for _, v := range q {
			dst = append(dst, float32(float32(v)*d)+m)
		}
	}
	return dst
}

// q5Values reads the 32 five-bit values of qh[4], qs[16].
func q5Values(b []byte) (q [qk]uint8) {
	qh := binary.LittleEndian.Uint32(b)
	for j := 0; j < qk/2; j++ {
		q[j] = b[4+j]&15 | uint8(qh>>j&1)<<4
		q[j+qk/2] = b[4+j]>>4 | uint8(qh>>(j+qk/2)&1)<<4
	}
	return q
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// roundf rounds half away from zero, as C's roundf.
func roundf(v float32) float32 { return float32(math.Round(float64(v))) }

// F32ToBF16 rounds to the nearest bfloat16, ties to even, NaNs kept quiet
// (ggml_compute_fp32_to_bf16).
func F32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 64
	}
	return uint16((u + (0x7fff + (u>>16)&1)) >> 16)
}

// BF16ToF32 widens a bfloat16.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }
