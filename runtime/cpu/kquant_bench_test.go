package cpu_test

import (
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// BenchmarkKQuantKernels times MulMat's quantized dot products at each
// level this machine has ("go": the Go loops) on a row of 8192 elements
// kept in L1: the kernels' compute speed, apart from memory
// (BenchmarkMulMatKQuant).
func BenchmarkKQuantKernels(b *testing.B) {
	const k = 8192
	for _, dt := range []tensor.DType{tensor.Q4_K, tensor.Q6_K, tensor.Q5_K, tensor.Q2_K, tensor.Q3_K, tensor.IQ4_XS,
		tensor.Q5_0, tensor.Q4_1, tensor.Q5_1, tensor.IQ4_NL} {
		r := rand.New(rand.NewPCG(1, 2))
		a := kBlocks(r, dt, k/dt.BlockSize(), false)
		x := cpu.QuantizeActivations(nil, cpu.VecDotType(dt), kActivations(r, k, false))
		xd, xs := q8_0Sides(dt, x)
		for _, l := range cpu.ISAs() {
			b.Run(dt.String()+"/"+l, func(b *testing.B) {
				defer cpu.UseISA(l)()
				dot := cpu.KDot(dt)
				b.SetBytes(int64(len(a)))
				for b.Loop() {
					dot(a, x, xd, xs, k)
				}
			})
		}
	}
}
