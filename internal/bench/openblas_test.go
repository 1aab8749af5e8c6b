package bench_test

import (
	"testing"

	. "github.com/graphc/graphc/internal/bench"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/blas/openblas"
	"github.com/graphc/graphc/tensor"
)

// BenchmarkOpenBLAS runs OpenBLAS's cblas_sgemm (through the blas backend)
// on the f32 GEMM and matvec cases of Benchmark, for the comparison in one
// run on this machine:
//
//	go test -run - -bench 'Benchmark(OpenBLAS)?/(gemm|matvec)/f32' ./internal/bench
func BenchmarkOpenBLAS(b *testing.B) {
	if ok, why := openblas.Available(); !ok {
		b.Skip(why)
	}
	for _, c := range Cases(nil) {
		if c.DType != "f32" || (c.Kernel != "gemm" && c.Kernel != "matvec") {
			continue
		}
		b.Run(c.Name(), func(b *testing.B) {
			be, err := openblas.New(c.Threads)
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close()
			a := tensor.NewTensor(tensor.F32, [4]int{c.K, c.M, 1, 1})
			x := tensor.NewTensor(tensor.F32, [4]int{c.K, c.N, 1, 1})
			d := tensor.NewTensor(tensor.F32, [4]int{c.M, c.N, 1, 1})
			for i := range a.F32s() {
				a.F32s()[i] = float32(i%7) * 0.1
			}
			for i := range x.F32s() {
				x.F32s()[i] = float32(i%5) * 0.1
			}
			be.MulMat(&d, &a, &x, ops.MulMatParams{})
			for b.Loop() {
				be.MulMat(&d, &a, &x, ops.MulMatParams{})
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(c.Flops/ns, "GFLOP/s")
		})
	}
}
