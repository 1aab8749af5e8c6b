package cpu

import "github.com/graphc/graphc/tensor"

// KDot is MulMat's dot product for weight type t at the current level
// (quantKernels[t].dot), k elements; nil for a type without one.
func KDot(t tensor.DType) func(a, x []byte, xd []float32, xs []int32, k int) float32 {
	if q := quantKernels[t]; q != nil {
		return q.dot
	}
	return nil
}

// VecDotType is ggml's vec_dot_type of weight type t.
func VecDotType(t tensor.DType) tensor.DType { return vecDotType(t) }

// QuantizeActivations appends row in type vt as MulMat quantizes x.
func QuantizeActivations(dst []byte, vt tensor.DType, row []float32) []byte {
	return quantizeActivations(dst, vt, row)
}

// A KKernels holds a K-quant's dot product over nb blocks: the Go loop
// and the AVX2 and AVX-512 VNNI assembly (the Go loop again in a build
// without assembly), to be called only where the machine has them.
type KKernels struct {
	Go, AVX2, VNNI func(a, x []byte, nb int) float32
}

// KQuantKernels are the K-quants with assembly.
var KQuantKernels = map[tensor.DType]KKernels{
	tensor.Q4_K: {dotQ4_KGo, dotQ4_KAVX2, dotQ4_KVNNI},
	tensor.Q5_K: {dotQ5_KGo, dotQ5_KAVX2, dotQ5_KVNNI},
	tensor.Q6_K: {dotQ6_KGo, dotQ6_KAVX2, dotQ6_KVNNI},
}
