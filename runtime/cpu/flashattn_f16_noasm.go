//go:build !amd64 || noasm

package cpu

import "unsafe"

// The Go bodies of flashattn_f16_amd64.go's kernels, reached only from
// tests here.

func faAccumHAVX512(acc *float32, lda int, v *uint16, ldv int, wm *float32, nk, cols, flags int) {
	faAccumHGo(unsafe.Slice(acc, 3*lda+cols), lda, unsafe.Slice(v, (nk-1)*ldv+cols), ldv, unsafe.Slice(wm, 8*nk), nk, 0, cols, flags)
}

func faAccumHAVX2(acc *float32, lda int, v *uint16, ldv int, wm *float32, nk, cols, flags int) {
	faAccumHAVX512(acc, lda, v, ldv, wm, nk, cols, flags)
}

func transposeH8AVX(dst *float32, ldd int, src *uint16, lds, k int) {
	transposeH8Go(unsafe.Slice(dst, (k-1)*ldd+8), ldd, unsafe.Slice(src, 7*lds+k), lds, k)
}
