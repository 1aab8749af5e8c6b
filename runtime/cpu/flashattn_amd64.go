//go:build !noasm

package cpu

// faAccumAVX512 is faAccumGo over columns [0, cols) (cols a positive
// multiple of 32, nk positive) with AVX-512; the sums are fused
// multiply-adds. The caller checks the bounds.
//
//go:noescape
func faAccumAVX512(acc *float32, lda int, v *float32, ldv int, wm *float32, nk, cols, flags int)

// faAccumAVX2 is faAccumAVX512 with AVX2 for cols a positive multiple of 16.
//
//go:noescape
func faAccumAVX2(acc *float32, lda int, v *float32, ldv int, wm *float32, nk, cols, flags int)

// decodeQ8_0AVX512 is decodeQ8_0Go of nb (positive) blocks from src into
// dst; the caller checks the bounds.
//
//go:noescape
func decodeQ8_0AVX512(dst *float32, src *byte, nb int)

// decodeQ8_0AVX2 is decodeQ8_0AVX512 with AVX2.
//
//go:noescape
func decodeQ8_0AVX2(dst *float32, src *byte, nb int)

// faAccumRowsAVX512 is faAccumRowsGo over columns [0, cols) (cols a
// positive multiple of 32, nk positive) with AVX-512; the sums are fused
// multiply-adds. The caller checks the bounds.
//
//go:noescape
func faAccumRowsAVX512(acc *float32, lda int, v *float32, ldv int, w *float32, ldw, nk, cols, zero int)

// faAccumRowsAVX2 is faAccumRowsAVX512 with AVX2 for cols a positive
// multiple of 16.
//
//go:noescape
func faAccumRowsAVX2(acc *float32, lda int, v *float32, ldv int, w *float32, ldw, nk, cols, zero int)

// faExpAVX2 is faExpGo's loop with AVX2 for n a multiple of 8, the sum
// in eight lanes; the caller checks the bounds.
//
//go:noescape
func faExpAVX2(y, x *float32, n int, m float32, c *faExpConsts) float32

// faScoresAVX2 is faScoresGo's loop with AVX2 for n a multiple of 8 (the
// mask's product fused); the caller checks the bounds.
//
//go:noescape
func faScoresAVX2(s, m *float32, n int, scale, slope float32) float32
