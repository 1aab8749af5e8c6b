//go:build !noasm

package cpu

// faAccumHAVX512 is faAccumHGo over columns [0, cols) (cols a positive
// multiple of 32, nk positive) with AVX-512; the sums are fused
// multiply-adds. The caller checks the bounds.
//
//go:noescape
func faAccumHAVX512(acc *float32, lda int, v *uint16, ldv int, wm *float32, nk, cols, flags int)

// faAccumHAVX2 is faAccumHAVX512 with AVX2 for cols a positive multiple
// of 16.
//
//go:noescape
func faAccumHAVX2(acc *float32, lda int, v *uint16, ldv int, wm *float32, nk, cols, flags int)

// transposeH8AVX is transposeH8Go with AVX and F16C (both levels) for k a
// multiple of 8; the caller checks the bounds.
//
//go:noescape
func transposeH8AVX(dst *float32, ldd int, src *uint16, lds, k int)
