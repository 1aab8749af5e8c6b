//go:build !noasm

package cpu

// dotQ2_KRowsAVX2 is, for r < rows, dst[r·ldd] = dotQ2_KGo(a[r·lda:], x,
// nb) with AVX2 (a's rows hold nb q2_K blocks, x nb q8_K blocks): each
// block's integer sums exact, scaled into float32 lanes summed once per
// row, so the Go loop's value to float32 rounding (the summation order).
// A call takes many rows: the constants are loaded once.
//
//go:noescape
func dotQ2_KRowsAVX2(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)

// dotQ2_KRowsVNNI is dotQ2_KRowsAVX2 with AVX-512 VNNI's vpdpwssd.
//
//go:noescape
func dotQ2_KRowsVNNI(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)

// dotQ3_KRowsAVX2 is dotQ2_KRowsAVX2 for q3_K: dotQ3_KGo's value per
// row to float32 rounding.
//
//go:noescape
func dotQ3_KRowsAVX2(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)

// dotQ3_KRowsVNNI is dotQ3_KRowsAVX2 with AVX-512 VNNI's vpdpwssd.
//
//go:noescape
func dotQ3_KRowsVNNI(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)

// dotIQ4_XSRowsAVX2 is dotQ2_KRowsAVX2 for iq4_xs: dotIQ4_XSGo's value
// per row to float32 rounding (x holds no -128: quantizeQ8_KGo never
// writes one).
//
//go:noescape
func dotIQ4_XSRowsAVX2(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)

// dotIQ4_XSRowsVNNI is dotIQ4_XSRowsAVX2 with AVX-512 VNNI's vpdpwssd.
//
//go:noescape
func dotIQ4_XSRowsVNNI(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)
