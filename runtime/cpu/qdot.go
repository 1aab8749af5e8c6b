package cpu

import (
	"encoding/binary"

	"github.com/graphc/graphc/tensor"
)

// The quantized dot products behind MulMat with q8_0 and q4_0 weights:
// a row of weight blocks against a row of activations quantized to q8_0
// (quantizeActivations), ggml_vec_dot_q8_0_q8_0 and ggml_vec_dot_q4_0_q8_0.
// Per block, the integer dot product of the quants times both f16 scales,
// d = da·dx in float32, then float32(s)·d, summed in float32.
//
// xd holds x's block scales as float32 (xScales), converted once per row
// of x instead of once per row of a; the Go loops read them from x.
//
// The assembly (qdot_amd64.s) takes whole groups of 8 blocks; the wrappers
// finish the rest with the Go loops. It computes every block's integer sum
// exactly (int8 products paired with vpmaddubsw/vpmaddwd, or vpdpbusd with
// AVX-512 VNNI, then added up across the block), converts it and the
// scales exactly as the Go loop does, so each block's float32(s)·d is
// bit-identical; only the float32 summation order of the blocks differs
// (8 lanes, then the lanes), which stays well within 1e-6 of the row's
// Σ|float32(s)·d| (the tests' bound).
//
// For q8_0 the assembly uses ggml's sign trick (|a| as unsigned bytes times
// x with a's sign), exact as long as x holds no -128: true of every
// activation quantizeActivations writes (|round(v·127/amax)| ≤ 127), as in
// ggml. The weights may hold any int8, -128 included. For q4_0 it keeps the
// nibbles unsigned and subtracts 8·Σx per block (xSums) instead of 8 from
// every nibble: the same integer, fewer instructions.

// dotQ8_0 is ggml_vec_dot_q8_0_q8_0 over k/32 blocks of a and x (xs is
// for dotQ4_0's signature).
func dotQ8_0(a, x []byte, xd []float32, _ []int32, k int) float32 {
	nb := k / 32
	a, x = a[:nb*34], x[:nb*34]
	var s float32
	n := 0
	switch {
	case level == isaAVX512 && hasVNNI:
		n = nb &^ 7
		s = dotQ8_0VNNI(a, x, xd[:n], n)
	case level >= isaAVX2:
		n = nb &^ 7
		s = dotQ8_0AVX2(a, x, xd[:n], n)
	}
	return s + dotQ8_0Go(a[n*34:], x[n*34:], nb-n)
}

// dotQ4_0 is ggml_vec_dot_q4_0_q8_0 over k/32 blocks of a and x; xs holds
// x's quant sums (xSums).
func dotQ4_0(a, x []byte, xd []float32, xs []int32, k int) float32 {
	nb := k / 32
	a, x = a[:nb*18], x[:nb*34]
	var s float32
	n := 0
	switch {
	case level == isaAVX512 && hasVNNI:
		n = nb &^ 7
		s = dotQ4_0VNNI(a, x, xd[:n], xs[:n], n)
	case level >= isaAVX2:
		n = nb &^ 7
		s = dotQ4_0AVX2(a, x, xd[:n], xs[:n], n)
	}
	return s + dotQ4_0Go(a[n*18:], x[n*34:], nb-n)
}

// xScales appends the scales of the q8_0 blocks of x as float32.
func xScales(dst []float32, x []byte) []float32 {
	for o := 0; o+34 <= len(x); o += 34 {
		dst = append(dst, tensor.F16ToF32(binary.LittleEndian.Uint16(x[o:])))
	}
	return dst
}

// xSums appends the sums of the quants of the q8_0 blocks of x: the q4_0
// products take Σ nibble·x − 8·Σx per block.
func xSums(dst []int32, x []byte) []int32 {
	for o := 0; o+34 <= len(x); o += 34 {
		var s int32
		for _, q := range x[o+2 : o+34] {
			s += int32(int8(q))
		}
		dst = append(dst, s)
	}
	return dst
}

// dotQ8_0Go is dotQ8_0's loop over nb blocks: per block, the integer dot
// product times both scales.
func dotQ8_0Go(a, x []byte, nb int) float32 {
	var sum float32
	for o := 0; o < nb*34; o += 34 {
		sum += float32(blockSumQ8_0(a[o:o+34], x[o:o+34])) * blockScale(a[o:], x[o:])
	}
	return sum
}

// dotQ4_0Go is dotQ4_0's loop over nb blocks: a's nibbles, less 8, against
// x's bytes, low nibbles with the block's first half.
func dotQ4_0Go(a, x []byte, nb int) float32 {
	var sum float32
	for b := 0; b < nb; b++ {
		ab, xb := a[b*18:b*18+18], x[b*34:b*34+34]
		sum += float32(blockSumQ4_0(ab, xb)) * blockScale(ab, xb)
	}
	return sum
}

// blockScale is d = da·dx of two blocks, in float32.
func blockScale(a, x []byte) float32 {
	return tensor.F16ToF32(binary.LittleEndian.Uint16(a)) * tensor.F16ToF32(binary.LittleEndian.Uint16(x))
}

// blockSumQ8_0 is the integer dot product of two q8_0 blocks' quants.
func blockSumQ8_0(a, x []byte) int32 {
	qa, qx := a[2:34], x[2:34]
	var s int32
	for j := range qa {
		s += int32(int8(qa[j])) * int32(int8(qx[j]))
	}
	return s
}

// blockSumQ4_0 is the integer dot product of a q4_0 block's quants and a
// q8_0 block's.
func blockSumQ4_0(a, x []byte) int32 {
	_, _ = a[17], x[33]
	var s int32
	for j := 0; j < 16; j++ {
		s += (int32(a[2+j]&15) - 8) * int32(int8(x[2+j]))
		s += (int32(a[2+j]>>4) - 8) * int32(int8(x[2+16+j]))
	}
	return s
}
