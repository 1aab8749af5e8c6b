//go:build !noasm

package cpu

// dotQ2_KRowsAVX2 is, for r < rows, dst[r·ldd] = dotQ2_KGo(a[r·lda:], x,
// nb) with AVX2 (a's rows hold nb q2_K blocks, x nb q8_K blocks): the
// same bits, each block's integer sums exact and its float32 value and
// the running sum rounded as in the Go loop. A call takes many rows: the
// constants are loaded once.
//
//go:noescape
func dotQ2_KRowsAVX2(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)

// dotQ2_KRowsVNNI is dotQ2_KRowsAVX2 with AVX-512 VNNI's vpdpwssd.
//
//go:noescape
func dotQ2_KRowsVNNI(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)

// dotQ3_KRowsAVX2 is dotQ2_KRowsAVX2 for q3_K: dotQ3_KGo's bits.
//
//go:noescape
func dotQ3_KRowsAVX2(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)

// dotQ3_KRowsVNNI is dotQ3_KRowsAVX2 with AVX-512 VNNI's vpdpwssd.
//
//go:noescape
func dotQ3_KRowsVNNI(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)

// dotIQ4_XSRowsAVX2 is dotQ2_KRowsAVX2 for iq4_xs: dotIQ4_XSGo's bits (x
// holds no -128: quantizeQ8_KGo never writes one).
//
//go:noescape
func dotIQ4_XSRowsAVX2(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)

// dotIQ4_XSRowsVNNI is dotIQ4_XSRowsAVX2 with AVX-512 VNNI's vpdpwssd.
//
//go:noescape
func dotIQ4_XSRowsVNNI(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)
