package cpu

import (
	"math"

	"github.com/graphc/graphc/tensor"
)

// withX8_0 is a q8_0 kernel taking x's scales and sums (xScales, xSums)
// as one taking x alone.
func withX8_0(f func(a, x []byte, xd []float32, xs []int32, nb int) float32) func(a, x []byte, nb int) float32 {
	return func(a, x []byte, nb int) float32 { return f(a, x, xScales(nil, x)[:nb], xSums(nil, x)[:nb], nb) }
}

// Q32Kernels are the weight types of 32-element blocks with assembly
// against q8_0 or q8_1 activations: their Go loops and AVX2 and AVX-512
// VNNI assembly over nb blocks (nb a multiple of 8 for the assembly).
var Q32Kernels = map[tensor.DType]KKernels{
	tensor.Q5_0: {dotQ5_0Go, withX8_0(dotQ5_0AVX2), withX8_0(dotQ5_0VNNI)},
	tensor.IQ4_NL: {dotIQ4_NLGo,
		withX8_0(func(a, x []byte, xd []float32, _ []int32, nb int) float32 { return dotIQ4_NLAVX2(a, x, xd, nb) }),
		withX8_0(func(a, x []byte, xd []float32, _ []int32, nb int) float32 { return dotIQ4_NLVNNI(a, x, xd, nb) })},
	tensor.Q4_1: {dotQ4_1Go, dotQ4_1AVX2, dotQ4_1VNNI},
	tensor.Q5_1: {dotQ5_1Go, dotQ5_1AVX2, dotQ5_1VNNI},
}

// QMagnitude is what the float32 rounding of a Q32Kernels type's dot
// product over nb blocks is relative to: Σ over blocks of |the block's
// value| (the Go loop on it alone) and, for q4_1 and q5_1, 2·|ma·sx|
// (their blocks' two parts, added in lanes apart): a bound on every
// partial sum's magnitude, in lanes or in block order.
func QMagnitude(dt tensor.DType, a, x []byte, nb int) float64 {
	size, xsize := dt.Size(), VecDotType(dt).Size()
	f := Q32Kernels[dt].Go
	var mag float64
	for b := 0; b < nb; b++ {
		ab, xb := a[b*size:(b+1)*size], x[b*xsize:(b+1)*xsize]
		mag += math.Abs(float64(f(ab, xb, 1)))
		if dt == tensor.Q4_1 || dt == tensor.Q5_1 {
			mag += 2 * math.Abs(float64(f16At(ab, 2))*float64(f16At(xb, 2)))
		}
	}
	return mag
}
