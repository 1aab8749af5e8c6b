//go:build !noasm

package cpu

// dotQ8_0AVX2 is dotQ8_0Go(a, x, nb) with AVX2 for nb a multiple of 8
// (a and x hold at least nb blocks of 34 bytes, x has no -128, and xd[b]
// is x's block b's scale as float32):
//
//	var sum float32
//	for b := 0; b < nb; b++ {
//		o := b * 34
//		d := tensor.F16ToF32(binary.LittleEndian.Uint16(a[o:])) * xd[b]
//		sum += float32(blockSumQ8_0(a[o:], x[o:])) * d
//	}
//	return sum
//
// Each block's product is exact as in the loop; the blocks are summed in 8
// lanes (block b in lane b%8), then across the lanes.
//
//go:noescape
func dotQ8_0AVX2(a, x []byte, xd []float32, nb int) float32

// dotQ8_0VNNI is dotQ8_0AVX2 with AVX-512 VNNI's vpdpbusd (on 256-bit
// vectors, so it also needs AVX-512VL).
//
//go:noescape
func dotQ8_0VNNI(a, x []byte, xd []float32, nb int) float32

// dotQ4_0AVX2 is dotQ4_0Go(a, x, nb) with AVX2 for nb a multiple of 8 (a
// holds nb blocks of 18 bytes, x nb blocks of 34, xd their scales and xs
// the sums of their quants, xSums), summed as dotQ8_0AVX2 sums. Each
// block's integer sum is Σ nibble·x − 8·Σx: the nibbles stay unsigned, so
// x may hold -128.
//
//go:noescape
func dotQ4_0AVX2(a, x []byte, xd []float32, xs []int32, nb int) float32

// dotQ4_0VNNI is dotQ4_0AVX2 with AVX-512 VNNI's vpdpbusd.
//
//go:noescape
func dotQ4_0VNNI(a, x []byte, xd []float32, xs []int32, nb int) float32
