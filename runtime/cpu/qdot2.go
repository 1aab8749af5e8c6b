package cpu

// MulMat's dot products of q5_0, iq4_nl, q4_1 and q5_1 weights: the
// assembly (qdot2_amd64.s) over whole groups of 8 blocks at the current
// level, the Go loops (kquant.go) over the rest. q5_0 and iq4_nl take
// x's q8_0 scales as float32 (xd, quantKernel.scales) and q5_0 their quant
// sums (xs) as dotQ4_0 does; q4_1 and q5_1 read x's q8_1 scales from x.
// The assembly sums the blocks' float32 values in lanes: the Go loop's
// value to float32 rounding.

func dotQ5_0(a, x []byte, xd []float32, xs []int32, k int) float32 {
	nb := k / 32
	a, x = a[:nb*q5_0Size], x[:nb*34]
	var s float32
	n := 0
	switch {
	case level == isaAVX512 && hasVNNI:
		n = nb &^ 7
		s = dotQ5_0VNNI(a, x, xd[:n], xs[:n], n)
	case level >= isaAVX2:
		n = nb &^ 7
		s = dotQ5_0AVX2(a, x, xd[:n], xs[:n], n)
	}
	return s + dotQ5_0Go(a[n*q5_0Size:], x[n*34:], nb-n)
}

func dotIQ4_NL(a, x []byte, xd []float32, _ []int32, k int) float32 {
	nb := k / 32
	a, x = a[:nb*iq4nlSize], x[:nb*34]
	var s float32
	n := 0
	switch {
	case level == isaAVX512 && hasVNNI:
		n = nb &^ 7
		s = dotIQ4_NLVNNI(a, x, xd[:n], n)
	case level >= isaAVX2:
		n = nb &^ 7
		s = dotIQ4_NLAVX2(a, x, xd[:n], n)
	}
	return s + dotIQ4_NLGo(a[n*iq4nlSize:], x[n*34:], nb-n)
}

func dotQ4_1(a, x []byte, _ []float32, _ []int32, k int) float32 {
	nb := k / 32
	a, x = a[:nb*q4_1Size], x[:nb*q8_1Size]
	var s float32
	n := 0
	switch {
	case level == isaAVX512 && hasVNNI:
		n = nb &^ 7
		s = dotQ4_1VNNI(a, x, n)
	case level >= isaAVX2:
		n = nb &^ 7
		s = dotQ4_1AVX2(a, x, n)
	}
	return s + dotQ4_1Go(a[n*q4_1Size:], x[n*q8_1Size:], nb-n)
}

func dotQ5_1(a, x []byte, _ []float32, _ []int32, k int) float32 {
	nb := k / 32
	a, x = a[:nb*q5_1Size], x[:nb*q8_1Size]
	var s float32
	n := 0
	switch {
	case level == isaAVX512 && hasVNNI:
		n = nb &^ 7
		s = dotQ5_1VNNI(a, x, n)
	case level >= isaAVX2:
		n = nb &^ 7
		s = dotQ5_1AVX2(a, x, n)
	}
	return s + dotQ5_1Go(a[n*q5_1Size:], x[n*q8_1Size:], nb-n)
}
