//go:build !amd64 || noasm

package cpu

import "unsafe"

// The Go bodies of flashattn_amd64.go's kernels, reached only from tests
// here.

func faAccumAVX512(acc *float32, lda int, v *float32, ldv int, wm *float32, nk, cols, flags int) {
	faAccumGo(unsafe.Slice(acc, 3*lda+cols), lda, unsafe.Slice(v, (nk-1)*ldv+cols), ldv, unsafe.Slice(wm, 8*nk), nk, 0, cols, flags)
}

func faAccumAVX2(acc *float32, lda int, v *float32, ldv int, wm *float32, nk, cols, flags int) {
	faAccumAVX512(acc, lda, v, ldv, wm, nk, cols, flags)
}

func decodeQ8_0AVX512(dst *float32, src *byte, nb int) {
	decodeQ8_0Go(unsafe.Slice(dst, 32*nb), unsafe.Slice(src, 34*nb))
}

func decodeQ8_0AVX2(dst *float32, src *byte, nb int) { decodeQ8_0AVX512(dst, src, nb) }

func faAccumRowsAVX512(acc *float32, lda int, v *float32, ldv int, w *float32, ldw, nk, cols, zero int) {
	faAccumRowsGo(unsafe.Slice(acc, 3*lda+cols), lda, unsafe.Slice(v, (nk-1)*ldv+cols), ldv, unsafe.Slice(w, 3*ldw+nk), ldw, nk, 0, cols, zero != 0)
}

func faAccumRowsAVX2(acc *float32, lda int, v *float32, ldv int, w *float32, ldw, nk, cols, zero int) {
	faAccumRowsAVX512(acc, lda, v, ldv, w, ldw, nk, cols, zero)
}

func faExpAVX2(y, x *float32, n int, m float32, _ *faExpConsts) float32 {
	return faExpGo(unsafe.Slice(y, n), unsafe.Slice(x, n), m)
}

func faScoresAVX2(s, m *float32, n int, scale, slope float32) float32 {
	var ms []float32
	if m != nil {
		ms = unsafe.Slice(m, n)
	}
	return faScoresGo(unsafe.Slice(s, n), ms, scale, slope)
}
