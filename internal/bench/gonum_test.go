package bench_test

import (
	"fmt"
	"runtime"
	"testing"

	. "github.com/graphc/graphc/internal/bench"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// BenchmarkGonum runs gonum's pure-Go Sgemm and Sgemv on the GEMM and
// matvec cases of Benchmark, for the comparison in one run:
//
//	go test -run - -bench 'Benchmark(Gonum)?/(gemm|matvec)/f32' ./internal/bench
//
// ggml's layout dst[M,N] = a[K,M]·x[K,N] is, row-major, C (N×M) = X (N×K)
// · Aᵀ. gonum splits big products over GOMAXPROCS goroutines, so the
// 1-thread cases run with GOMAXPROCS=1.
func BenchmarkGonum(b *testing.B) {
	var impl gonum.Implementation
	for _, c := range Cases(nil) {
		if c.DType != "f32" || (c.Kernel != "gemm" && c.Kernel != "matvec") {
			continue
		}
		b.Run(c.Name(), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(c.Threads))
			M, N, K := c.M, c.N, c.K
			a, x, d := make([]float32, M*K), make([]float32, N*K), make([]float32, M*N)
			for i := range a {
				a[i] = float32(i%7) * 0.1
			}
			for i := range x {
				x[i] = float32(i%5) * 0.1
			}
			op := func() { impl.Sgemm(blas.NoTrans, blas.Trans, N, M, K, 1, x, K, a, K, 0, d, M) }
			if N == 1 {
				op = func() { impl.Sgemv(blas.NoTrans, M, K, 1, a, K, x, 1, 0, d, 1) }
			}
			op()
			for b.Loop() {
				op()
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(c.Flops/ns, "GFLOP/s")
		})
	}
}

func TestGonumLayout(t *testing.T) {
	// the transposition above computes ggml's product
	var impl gonum.Implementation
	const M, N, K = 3, 2, 4
	a := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12} // rows of K
	x := []float32{1, 0, 1, 0, 0, 1, 0, 1}                // columns of K
	d := make([]float32, M*N)
	impl.Sgemm(blas.NoTrans, blas.Trans, N, M, K, 1, x, K, a, K, 0, d, M)
	want := []float32{4, 12, 20, 6, 14, 22}
	if fmt.Sprint(d) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", d, want)
	}
}
