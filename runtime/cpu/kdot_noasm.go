//go:build !amd64 || noasm

package cpu

// The Go bodies of kdot_amd64.go's kernels: this build has no assembly, so
// they are the reference loops and only tests reach them (level is isaGo).

func dotQ4_KRowsAVX2(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int) {
	dotQ4_KRowsGo(a, lda, x, nb, dst, ldd, rows)
}

func dotQ4_KRowsVNNI(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int) {
	dotQ4_KRowsGo(a, lda, x, nb, dst, ldd, rows)
}

func dotQ5_KAVX2(a, x []byte, nb int) float32 { return dotQ5_KGo(a, x, nb) }

func dotQ5_KVNNI(a, x []byte, nb int) float32 { return dotQ5_KGo(a, x, nb) }

func dotQ6_KRowsAVX2(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int) {
	dotQ6_KRowsGo(a, lda, x, nb, dst, ldd, rows)
}

func dotQ6_KRowsVNNI(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int) {
	dotQ6_KRowsGo(a, lda, x, nb, dst, ldd, rows)
}
