//go:build !noasm

package cpu

// dotQ4_KRowsAVX2 is, for r < rows, dst[r·ldd] = dotQ4_KGo(a[r·lda:], x,
// nb) with AVX2 (a's rows hold nb q4_K blocks, x nb q8_K blocks): each
// block's integer sums exact, scaled into float32 lanes summed once per
// row, so the Go loop's value to float32 rounding (the summation order).
// A call takes many rows: the constants are loaded once.
//
//go:noescape
func dotQ4_KRowsAVX2(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)

// dotQ4_KRowsVNNI is dotQ4_KRowsAVX2 with AVX-512 VNNI on 256-bit vectors:
// each sub-block's products summed by vpdpbusd, the scales applied by
// vpdpwssd.
//
//go:noescape
func dotQ4_KRowsVNNI(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)

// dotQ5_KAVX2 is dotQ5_KGo(a, x, nb) with AVX2 (a holds nb q5_K blocks,
// x nb q8_K blocks): the same bits, each
// block's integer sums exact and its float32 value and the running sum
// rounded as in the Go loop.
//
//go:noescape
func dotQ5_KAVX2(a, x []byte, nb int) float32

// dotQ5_KVNNI is dotQ5_KAVX2 with 512-bit vectors (two sub-blocks at a
// time) and AVX-512 VNNI's vpdpwssd.
//
//go:noescape
func dotQ5_KVNNI(a, x []byte, nb int) float32

// dotQ6_KRowsAVX2 is dotQ4_KRowsAVX2 for q6_K: dotQ6_KGo's value per row
// to float32 rounding.
//
//go:noescape
func dotQ6_KRowsAVX2(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)

// dotQ6_KRowsVNNI is dotQ6_KRowsAVX2 with 512-bit vectors (64 quants at a
// time) and AVX-512 VNNI's vpdpwssd.
//
//go:noescape
func dotQ6_KRowsVNNI(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)
