//go:build !noasm

package cpu

// dotQ5_0AVX2 is dotQ5_0Go(a, x, nb) with AVX2 for nb a multiple of 8 (a
// holds nb q5_0 blocks, x nb q8_0 blocks, xd their scales as float32 and
// xs the sums of their quants, xSums), summed in 8 float32 lanes as
// dotQ4_0AVX2: each block's integer sum, Σ q·x − 16·Σx with q the
// unsigned 5-bit quant, and its float32 value exact as in the loop.
//
//go:noescape
func dotQ5_0AVX2(a, x []byte, xd []float32, xs []int32, nb int) float32

// dotQ5_0VNNI is dotQ5_0AVX2 with AVX-512 VNNI's vpdpbusd and the fifth
// bits added under a mask register.
//
//go:noescape
func dotQ5_0VNNI(a, x []byte, xd []float32, xs []int32, nb int) float32

// dotIQ4_NLAVX2 is dotIQ4_NLGo(a, x, nb) with AVX2 for nb a multiple of 8
// (xd x's scales), summed as dotQ8_0AVX2: the nibbles' values looked up
// by vpshufb, their products with x exact as long as x holds no -128
// (quantizeActivations never writes one).
//
//go:noescape
func dotIQ4_NLAVX2(a, x []byte, xd []float32, nb int) float32

// dotIQ4_NLVNNI is dotIQ4_NLAVX2 with AVX-512 VNNI's vpdpbusd.
//
//go:noescape
func dotIQ4_NLVNNI(a, x []byte, xd []float32, nb int) float32

// dotQ4_1AVX2 is dotQ4_1Go(a, x, nb) with AVX2 for nb a multiple of 8 (x
// nb q8_1 blocks): each block's integer sum exact, its (da·dx)·sum and
// ma·sx rounded as in the loop, all of them added in 8 float32 lanes.
//
//go:noescape
func dotQ4_1AVX2(a, x []byte, nb int) float32

// dotQ4_1VNNI is dotQ4_1AVX2 with AVX-512 VNNI's vpdpbusd.
//
//go:noescape
func dotQ4_1VNNI(a, x []byte, nb int) float32

// dotQ5_1AVX2 is dotQ4_1AVX2 for q5_1: dotQ5_1Go(a, x, nb).
//
//go:noescape
func dotQ5_1AVX2(a, x []byte, nb int) float32

// dotQ5_1VNNI is dotQ5_1AVX2 with AVX-512 VNNI's vpdpbusd and the fifth
// bits added under a mask register.
//
//go:noescape
func dotQ5_1VNNI(a, x []byte, nb int) float32
