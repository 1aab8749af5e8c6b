package cpu

// MulMat's dot products of q2_K, q3_K and iq4_xs weights: the assembly
// (kdot2_amd64.s) at the current level, else the Go loops (kquant.go):
// rows kernels (quantKernel.rows) summing in float32 lanes, as q4_K's.

func dotQ2_K(a, x []byte, _ []float32, _ []int32, k int) float32 {
	var d [1]float32
	dotQ2_KRows(a, 0, x, k/qkK, d[:], 0, 1)
	return d[0]
}

func dotQ3_K(a, x []byte, _ []float32, _ []int32, k int) float32 {
	var d [1]float32
	dotQ3_KRows(a, 0, x, k/qkK, d[:], 0, 1)
	return d[0]
}

func dotIQ4_XS(a, x []byte, _ []float32, _ []int32, k int) float32 {
	var d [1]float32
	dotIQ4_XSRows(a, 0, x, k/qkK, d[:], 0, 1)
	return d[0]
}

// dotQ2_KRows is q2_K's rows kernel, as dotQ4_KRows.
func dotQ2_KRows(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int) {
	if rows == 0 {
		return
	}
	// The assembly reads and writes these, unchecked.
	_, _, _ = a[:(rows-1)*lda+nb*q2_KSize], x[:nb*q8_KSize], dst[(rows-1)*ldd]
	switch {
	case level == isaAVX512 && hasVNNI:
		dotQ2_KRowsVNNI(a, lda, x, nb, dst, ldd, rows)
	case level >= isaAVX2:
		dotQ2_KRowsAVX2(a, lda, x, nb, dst, ldd, rows)
	default:
		rowsGo(dotQ2_KGo, a, lda, x, nb, dst, ldd, rows)
	}
}

// dotQ3_KRows is q3_K's rows kernel, as dotQ4_KRows.
func dotQ3_KRows(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int) {
	if rows == 0 {
		return
	}
	_, _, _ = a[:(rows-1)*lda+nb*q3_KSize], x[:nb*q8_KSize], dst[(rows-1)*ldd]
	switch {
	case level == isaAVX512 && hasVNNI:
		dotQ3_KRowsVNNI(a, lda, x, nb, dst, ldd, rows)
	case level >= isaAVX2:
		dotQ3_KRowsAVX2(a, lda, x, nb, dst, ldd, rows)
	default:
		rowsGo(dotQ3_KGo, a, lda, x, nb, dst, ldd, rows)
	}
}

// dotIQ4_XSRows is iq4_xs's rows kernel, as dotQ4_KRows.
func dotIQ4_XSRows(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int) {
	if rows == 0 {
		return
	}
	_, _, _ = a[:(rows-1)*lda+nb*iq4xsSize], x[:nb*q8_KSize], dst[(rows-1)*ldd]
	switch {
	case level == isaAVX512 && hasVNNI:
		dotIQ4_XSRowsVNNI(a, lda, x, nb, dst, ldd, rows)
	case level >= isaAVX2:
		dotIQ4_XSRowsAVX2(a, lda, x, nb, dst, ldd, rows)
	default:
		rowsGo(dotIQ4_XSGo, a, lda, x, nb, dst, ldd, rows)
	}
}

// rowsGo is a rows kernel with the Go loop dot over nb blocks.
func rowsGo(dot func(a, x []byte, nb int) float32, a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int) {
	for r := 0; r < rows; r++ {
		dst[r*ldd] = dot(a[r*lda:], x, nb)
	}
}
