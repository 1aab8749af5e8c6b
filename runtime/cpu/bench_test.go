package cpu_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/runtime"
	"github.com/graphc/graphc/runtime/cpu"
)

// benchThreads runs f with 1 thread and with GOMAXPROCS threads.
func benchThreads(b *testing.B, f func(b *testing.B, be *cpu.Backend)) {
	for _, n := range []int{1, 0} {
		be := cpu.New(n)
		b.Run(fmt.Sprintf("threads=%d", be.Threads()), func(b *testing.B) { f(b, be) })
		be.Close()
	}
}

func BenchmarkMulMat(b *testing.B) {
	for _, c := range []struct {
		at      runtime.DType
		M, N, K int
	}{
		{runtime.F32, 64, 8, 64},
		{runtime.F32, 512, 512, 512},
		{runtime.F16, 512, 512, 512},
		{runtime.F32, 4096, 1, 4096},
		{runtime.F16, 4096, 1, 4096},
		{runtime.F16, 4096, 8, 4096},
	} {
		b.Run(fmt.Sprintf("%v/M=%d,N=%d,K=%d", c.at, c.M, c.N, c.K), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			a := mk(r, c.at, [4]int{c.K, c.M, 1, 1}, dense)
			x := mk(r, runtime.F32, [4]int{c.K, c.N, 1, 1}, dense)
			d := mk(r, runtime.F32, [4]int{c.M, c.N, 1, 1}, dense)
			benchThreads(b, func(b *testing.B, be *cpu.Backend) {
				b.SetBytes(int64(len(a.Data)))
				for b.Loop() {
					be.MulMat(d.Tensor, a.Tensor, x.Tensor)
				}
				b.ReportMetric(2*float64(c.M*c.N*c.K)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		})
	}
}

func benchRows(b *testing.B, ne [4]int, f func(be *cpu.Backend, d, a *runtime.Tensor)) {
	r := rand.New(rand.NewPCG(1, 2))
	a := mk(r, runtime.F32, ne, dense)
	d := mk(r, runtime.F32, ne, dense)
	benchThreads(b, func(b *testing.B, be *cpu.Backend) {
		b.SetBytes(int64(2 * len(a.Data))) // read a, write dst
		for b.Loop() {
			f(be, d.Tensor, a.Tensor)
		}
	})
}

func BenchmarkRMSNorm(b *testing.B) {
	for _, ne := range [][4]int{{4096, 1, 1, 1}, {4096, 32, 1, 1}} {
		b.Run(fmt.Sprint(ne[:2]), func(b *testing.B) {
			benchRows(b, ne, func(be *cpu.Backend, d, a *runtime.Tensor) { be.RMSNorm(d, a, 1e-5) })
		})
	}
}

func BenchmarkSoftMax(b *testing.B) {
	for _, ne := range [][4]int{{512, 1, 32, 1}, {512, 512, 8, 1}} {
		b.Run(fmt.Sprint(ne[:3]), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			mask := mk(r, runtime.F16, [4]int{ne[0], ne[1], 1, 1}, dense)
			benchRows(b, ne, func(be *cpu.Backend, d, a *runtime.Tensor) { be.SoftMax(d, a, mask.Tensor, 0.125, 0) })
		})
	}
}

func BenchmarkAdd(b *testing.B) {
	for _, ne := range [][4]int{{4096, 1, 1, 1}, {4096, 64, 1, 1}} {
		b.Run(fmt.Sprint(ne[:2]), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			x := mk(r, runtime.F32, ne, dense)
			benchRows(b, ne, func(be *cpu.Backend, d, a *runtime.Tensor) { be.Add(d, a, x.Tensor) })
		})
	}
}

// BenchmarkDispatch is the cost of a tiny op split over every thread: the
// barrier overhead (compare with threads=1, which runs inline).
func BenchmarkDispatch(b *testing.B) {
	defer cpu.SetMinWork(1)()
	r := rand.New(rand.NewPCG(1, 2))
	a := mk(r, runtime.F32, [4]int{128, 2, 1, 1}, dense)
	benchThreads(b, func(b *testing.B, be *cpu.Backend) {
		for b.Loop() {
			be.Add(a.Tensor, a.Tensor, a.Tensor)
		}
	})
}
