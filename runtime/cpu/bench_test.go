package cpu_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
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
		at      tensor.DType
		M, N, K int
	}{
		{tensor.F32, 64, 8, 64},
		{tensor.F32, 512, 512, 512},
		{tensor.F16, 512, 512, 512},
		{tensor.F32, 4096, 1, 4096},
		{tensor.F16, 4096, 1, 4096},
		{tensor.F16, 4096, 8, 4096},
		{tensor.BF16, 4096, 1, 4096},
	} {
		b.Run(fmt.Sprintf("%v/M=%d,N=%d,K=%d", c.at, c.M, c.N, c.K), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			a := mk(r, c.at, [4]int{c.K, c.M, 1, 1}, dense)
			x := mk(r, tensor.F32, [4]int{c.K, c.N, 1, 1}, dense)
			d := mk(r, tensor.F32, [4]int{c.M, c.N, 1, 1}, dense)
			benchThreads(b, func(b *testing.B, be *cpu.Backend) {
				b.SetBytes(int64(len(a.Data)))
				for b.Loop() {
					be.MulMat(d.Tensor, a.Tensor, x.Tensor, ops.MulMatParams{})
				}
				b.ReportMetric(2*float64(c.M*c.N*c.K)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		})
	}
}

// BenchmarkMulMatAttentionDecode is a decode step's attention products
// with an f16 cache at Llama-3.2-1B's shapes (32 query heads over 8 K/V
// heads of 64): K·q, the keys rows 64 wide in a cache of 8 heads per
// token, and V·kq, the values transposed (rows of the cache's length),
// over nkv cache rows, one thread.
func BenchmarkMulMatAttentionDecode(b *testing.B) {
	const hd, nkvh, nh, nctx = 64, 8, 32, 1024
	r := rand.New(rand.NewPCG(1, 2))
	kc := mk(r, tensor.F16, [4]int{hd * nkvh, nctx, 1, 1}, dense)
	vc := mk(r, tensor.F16, [4]int{nctx, hd * nkvh, 1, 1}, dense)
	be := cpu.New(1)
	defer be.Close()
	for _, nkv := range []int{37, 128, 512, 1024} {
		k := &tensor.Tensor{Type: tensor.F16, Ne: [4]int{hd, nkv, nkvh, 1}, Nb: [4]int{2, hd * nkvh * 2, hd * 2, hd * nkvh * 2 * nkv}}
		k.Data = kc.Data[:k.Span()]
		v := &tensor.Tensor{Type: tensor.F16, Ne: [4]int{nkv, hd, nkvh, 1}, Nb: [4]int{2, nctx * 2, nctx * hd * 2, nctx * hd * nkvh * 2}}
		v.Data = vc.Data[:v.Span()]
		q := mk(r, tensor.F32, [4]int{hd, 1, nh, 1}, dense)
		kq := mk(r, tensor.F32, [4]int{nkv, 1, nh, 1}, dense)
		kqv := mk(r, tensor.F32, [4]int{hd, 1, nh, 1}, dense)
		b.Run(fmt.Sprintf("K/nkv=%d", nkv), func(b *testing.B) {
			for b.Loop() {
				be.MulMat(kq.Tensor, k, q.Tensor, ops.MulMatParams{})
			}
		})
		b.Run(fmt.Sprintf("V/nkv=%d", nkv), func(b *testing.B) {
			for b.Loop() {
				be.MulMat(kqv.Tensor, v, kq.Tensor, ops.MulMatParams{})
			}
		})
	}
}

func benchRows(b *testing.B, ne [4]int, f func(be *cpu.Backend, d, a *tensor.Tensor)) {
	r := rand.New(rand.NewPCG(1, 2))
	a := mk(r, tensor.F32, ne, dense)
	d := mk(r, tensor.F32, ne, dense)
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
			benchRows(b, ne, func(be *cpu.Backend, d, a *tensor.Tensor) { be.RMSNorm(d, a, ops.NormParams{Eps: 1e-5}) })
		})
	}
}

func BenchmarkSoftMax(b *testing.B) {
	for _, ne := range [][4]int{{512, 1, 32, 1}, {512, 512, 8, 1}} {
		b.Run(fmt.Sprint(ne[:3]), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			mask := mk(r, tensor.F16, [4]int{ne[0], ne[1], 1, 1}, dense)
			benchRows(b, ne, func(be *cpu.Backend, d, a *tensor.Tensor) {
				be.SoftMax(d, a, mask.Tensor, ops.SoftMaxParams{Scale: 0.125, MaxBias: 0})
			})
		})
	}
}

// BenchmarkExpKernels times the exponential (expRow, as soft_max calls it),
// silu and sigmoid on a row kept in L1, at each level this machine has
// ("go": the Go loops), in ns per element.
func BenchmarkExpKernels(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{512, 8192} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(20*r.Float64() - 10)
		}
		y := make([]float32, n)
		for _, k := range []struct {
			name string
			f    func()
		}{
			{"exp", func() { cpu.ExpRow(y, x, 1, 10) }},
			{"silu", func() { cpu.Silu(y, x) }},
			{"sigmoid", func() { cpu.Sigmoid(y, x) }},
		} {
			for _, l := range cpu.ISAs() {
				b.Run(fmt.Sprintf("%s/n=%d/%s", k.name, n, l), func(b *testing.B) {
					defer cpu.UseISA(l)()
					for b.Loop() {
						k.f()
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/elem")
				})
			}
		}
	}
}

func BenchmarkAdd(b *testing.B) {
	for _, ne := range [][4]int{{4096, 1, 1, 1}, {4096, 64, 1, 1}} {
		b.Run(fmt.Sprint(ne[:2]), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			x := mk(r, tensor.F32, ne, dense)
			benchRows(b, ne, func(be *cpu.Backend, d, a *tensor.Tensor) { be.Add(d, a, x.Tensor) })
		})
	}
}

// BenchmarkDispatch is the cost of a tiny op split over every thread: the
// barrier overhead (compare with threads=1, which runs inline).
func BenchmarkDispatch(b *testing.B) {
	defer cpu.SetMinWork(1)()
	r := rand.New(rand.NewPCG(1, 2))
	a := mk(r, tensor.F32, [4]int{128, 2, 1, 1}, dense)
	benchThreads(b, func(b *testing.B, be *cpu.Backend) {
		for b.Loop() {
			be.Add(a.Tensor, a.Tensor, a.Tensor)
		}
	})
}

// BenchmarkMulMatPacked is MulMat with a 4096×4096 q4_0, q8_0, q4_K or q6_K weight,
// plain (the row-by-row dot products) against packed (Pack's copy), for a
// matrix-vector product, a small batch and a prompt-sized one. GFLOP/s.
func BenchmarkMulMatPacked(b *testing.B) {
	const k, m = 4096, 4096
	for _, dt := range []tensor.DType{tensor.Q4_0, tensor.Q8_0, tensor.Q4_K, tensor.Q6_K} {
		vals := make([]float32, k*m)
		for i := range vals {
			vals[i] = float32(i%17) - 8
		}
		ne := [4]int{k, m, 1, 1}
		a := tensor.Tensor{Type: dt, Ne: ne, Nb: tensor.ContiguousStrides(dt, ne), Data: tensor.Quantize(nil, dt, vals)}
		for _, n := range []int{1, 8, 512} {
			x := tensor.NewTensor(tensor.F32, [4]int{k, n, 1, 1})
			for i := range x.F32s() {
				x.F32s()[i] = float32(i%13) - 6
			}
			dst := tensor.NewTensor(tensor.F32, [4]int{m, n, 1, 1})
			for _, threads := range []int{1, 2} {
				for _, packed := range []bool{false, true} {
					name := fmt.Sprintf("%s/n=%d/threads=%d/packed=%v", dt, n, threads, packed)
					b.Run(name, func(b *testing.B) {
						be := cpu.New(threads)
						defer be.Close()
						if packed {
							if err := be.Pack(&a, false); err != nil {
								b.Fatal(err)
							}
						}
						be.MulMat(&dst, &a, &x, ops.MulMatParams{})
						b.ResetTimer()
						for range b.N {
							be.MulMat(&dst, &a, &x, ops.MulMatParams{})
						}
						b.ReportMetric(2*k*m*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					})
				}
			}
		}
	}
}

// kquantShapes are Llama-3.2-1B's matrix-vector products (hidden 2048,
// feed-forward 8192, 8 key-value heads of 64): K×M.
var kquantShapes = []struct{ K, M int }{{2048, 2048}, {2048, 512}, {2048, 8192}, {8192, 2048}}

// BenchmarkMulMatKQuant is MulMat with a q4_K, q5_K or q6_K weight (random
// quants and sane scales) against one f32 row, at Llama-3.2-1B's shapes:
// GB/s of weight read (SetBytes), the figure to set against the machine's
// read bandwidth and ggml's (BenchmarkGGMLVecDot).
func BenchmarkMulMatKQuant(b *testing.B) {
	for _, dt := range []tensor.DType{tensor.Q4_K, tensor.Q6_K, tensor.Q5_K} {
		for _, s := range kquantShapes {
			b.Run(fmt.Sprintf("%v/K=%d,M=%d", dt, s.K, s.M), func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				ne := [4]int{s.K, s.M, 1, 1}
				a := tensor.Tensor{Type: dt, Ne: ne, Nb: tensor.ContiguousStrides(dt, ne), Data: kBlocks(r, dt, s.K*s.M/256, false)}
				x := tensor.NewTensor(tensor.F32, [4]int{s.K, 1, 1, 1})
				for i := range x.F32s() {
					x.F32s()[i] = float32(r.NormFloat64())
				}
				dst := tensor.NewTensor(tensor.F32, [4]int{s.M, 1, 1, 1})
				benchThreads(b, func(b *testing.B, be *cpu.Backend) {
					b.SetBytes(int64(len(a.Data)))
					for b.Loop() {
						be.MulMat(&dst, &a, &x, ops.MulMatParams{})
					}
				})
			})
		}
	}
}
