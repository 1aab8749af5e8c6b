package cpu

func dotQ2_K(a, x []byte, _ []float32, _ []int32, k int) float32 {
	return dotQ2_KGo(a, x, k/qkK)
}

func dotQ3_K(a, x []byte, _ []float32, _ []int32, k int) float32 {
	return dotQ3_KGo(a, x, k/qkK)
}

func dotIQ4_XS(a, x []byte, _ []float32, _ []int32, k int) float32 {
	return dotIQ4_XSGo(a, x, k/qkK)
}
