package cpu_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// BenchmarkKQuantKernels times the K-quant dot products' Go loops and
// assembly on 32 blocks kept in L1: the kernels' compute speed, apart from
// memory (BenchmarkMulMatKQuant).
func BenchmarkKQuantKernels(b *testing.B) {
	avx2 := slices.Contains(cpu.ISAs(), "avx2")
	vnni := slices.Contains(cpu.ISAs(), "avx512") && cpu.HasVNNI()
	for _, dt := range []tensor.DType{tensor.Q4_K, tensor.Q6_K, tensor.Q5_K} {
		r := rand.New(rand.NewPCG(1, 2))
		nb := 32
		a := kBlocks(r, dt, nb, false)
		x := cpu.QuantizeActivations(nil, tensor.Q8_K, kActivations(r, 256*nb, false))
		kk := cpu.KQuantKernels[dt]
		for _, v := range []struct {
			n string
			f func(a, x []byte, nb int) float32
		}{{"go", kk.Go}, {"avx2", kk.AVX2}, {"vnni", kk.VNNI}} {
			if v.n == "avx2" && !avx2 || v.n == "vnni" && !vnni {
				continue
			}
			b.Run(dt.String()+"/"+v.n, func(b *testing.B) {
				b.SetBytes(int64(len(a)))
				for b.Loop() {
					v.f(a, x, nb)
				}
			})
		}
	}
}
