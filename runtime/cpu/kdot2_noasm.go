//go:build !amd64 || noasm

package cpu

// The Go bodies of kdot2_amd64.go's kernels: this build has no assembly,
// so they are the reference loops and only tests reach them (level is
// isaGo).

func dotQ2_KRowsAVX2(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int) {
	rowsGo(dotQ2_KGo, a, lda, x, nb, dst, ldd, rows)
}

func dotQ2_KRowsVNNI(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int) {
	rowsGo(dotQ2_KGo, a, lda, x, nb, dst, ldd, rows)
}

func dotQ3_KRowsAVX2(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int) {
	rowsGo(dotQ3_KGo, a, lda, x, nb, dst, ldd, rows)
}

func dotQ3_KRowsVNNI(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int) {
	rowsGo(dotQ3_KGo, a, lda, x, nb, dst, ldd, rows)
}

func dotIQ4_XSRowsAVX2(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int) {
	rowsGo(dotIQ4_XSGo, a, lda, x, nb, dst, ldd, rows)
}

func dotIQ4_XSRowsVNNI(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int) {
	rowsGo(dotIQ4_XSGo, a, lda, x, nb, dst, ldd, rows)
}
