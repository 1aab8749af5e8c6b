package cpu

// MulMat's dot products of q2_K, q3_K and iq4_xs weights: the assembly
// (kdot2_amd64.s) at the current level, else the Go loops (kquant.go),
// the same bits either way.

func dotQ2_K(a, x []byte, _ []float32, _ []int32, k int) float32 {
	nb := k / qkK
	a, x = a[:nb*q2_KSize], x[:nb*q8_KSize]
	switch {
	case level == isaAVX512 && hasVNNI:
		return dotQ2_KVNNI(a, x, nb)
	case level >= isaAVX2:
		return dotQ2_KAVX2(a, x, nb)
	}
	return dotQ2_KGo(a, x, nb)
}

func dotQ3_K(a, x []byte, _ []float32, _ []int32, k int) float32 {
	nb := k / qkK
	a, x = a[:nb*q3_KSize], x[:nb*q8_KSize]
	switch {
	case level == isaAVX512 && hasVNNI:
		return dotQ3_KVNNI(a, x, nb)
	case level >= isaAVX2:
		return dotQ3_KAVX2(a, x, nb)
	}
	return dotQ3_KGo(a, x, nb)
}

func dotIQ4_XS(a, x []byte, _ []float32, _ []int32, k int) float32 {
	nb := k / qkK
	a, x = a[:nb*iq4xsSize], x[:nb*q8_KSize]
	switch {
	case level == isaAVX512 && hasVNNI:
		return dotIQ4_XSVNNI(a, x, nb)
	case level >= isaAVX2:
		return dotIQ4_XSAVX2(a, x, nb)
	}
	return dotIQ4_XSGo(a, x, nb)
}
