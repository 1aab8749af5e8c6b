package cpu

import (
	"github.com/graphc/graphc/tensor"
)

// The quantized dot products at the current level (k elements: k/32
// blocks), their Go loops (nb blocks) and the integer block sums.
var (
	DotQ8_0      = dotQ8_0
	DotQ4_0      = dotQ4_0
	DotQ8_0Go    = dotQ8_0Go
	DotQ4_0Go    = dotQ4_0Go
	BlockSumQ8_0 = blockSumQ8_0
	BlockSumQ4_0 = blockSumQ4_0
	BlockScale   = blockScale
	XScales      = xScales
	XSums        = xSums
)

// QuantizeActivationsQ8_0 appends row as MulMat's q8_0 activations.
func QuantizeActivationsQ8_0(dst []byte, row []float32) []byte {
	return quantizeActivations(dst, tensor.Q8_0, row)
}

// QuantizeActivationsQ8_0Go is QuantizeActivationsQ8_0's Go loop.
func QuantizeActivationsQ8_0Go(dst []byte, row []float32) []byte {
	return quantizeQ8_0Go(dst, row)
}

// HasVNNI reports whether the avx512 level runs the VNNI dot products.
func HasVNNI() bool { return hasVNNI }
