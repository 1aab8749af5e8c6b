//go:build !noasm

package cpu

// dotQ2_KAVX2 is dotQ2_KGo(a, x, nb) with AVX2 (a holds nb q2_K blocks,
// x nb q8_K blocks): the same bits, each block's integer sums exact and
// its float32 value and the running sum rounded as in the Go loop.
//
//go:noescape
func dotQ2_KAVX2(a, x []byte, nb int) float32

// dotQ2_KVNNI is dotQ2_KAVX2 with AVX-512 VNNI's vpdpwssd.
//
//go:noescape
func dotQ2_KVNNI(a, x []byte, nb int) float32

// dotQ3_KAVX2 is dotQ3_KGo(a, x, nb) with AVX2, the same bits.
//
//go:noescape
func dotQ3_KAVX2(a, x []byte, nb int) float32

// dotQ3_KVNNI is dotQ3_KAVX2 with AVX-512 VNNI's vpdpwssd.
//
//go:noescape
func dotQ3_KVNNI(a, x []byte, nb int) float32

// dotIQ4_XSAVX2 is dotIQ4_XSGo(a, x, nb) with AVX2, the same bits (x
// holds no -128: quantizeQ8_KGo never writes one).
//
//go:noescape
func dotIQ4_XSAVX2(a, x []byte, nb int) float32

// dotIQ4_XSVNNI is dotIQ4_XSAVX2 with AVX-512 VNNI's vpdpwssd.
//
//go:noescape
func dotIQ4_XSVNNI(a, x []byte, nb int) float32
