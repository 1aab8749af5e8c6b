package cpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// TestMulMatPackedQ4_K checks MulMat with packed q4_K weights against
// MulMat with the weights as they are (ggml's q4_K·q8_K dot per column)
// at every level: the integer sums of each block are exact in both, so
// they differ by the float32 rounding of the scaled block terms and their
// sum only, within 1e-5 relative to the row's magnitude (Σ|w·x| over the
// dequantized values). The Go loops add the same terms in the same order:
// at the go level, the same bits.
func TestMulMatPackedQ4_K(t *testing.T) { testMulMatPackedK(t, tensor.Q4_K) }

// TestMulMatPackedQ6_K is TestMulMatPackedQ4_K for q6_K.
func TestMulMatPackedQ6_K(t *testing.T) { testMulMatPackedK(t, tensor.Q6_K) }

func testMulMatPackedK(t *testing.T, dt tensor.DType) {
	for _, isa := range cpu.ISAs() {
		t.Run(isa, func(t *testing.T) {
			defer cpu.UseISA(isa)()
			r := rand.New(rand.NewPCG(7, 8))
			for _, c := range []struct{ threads, k, m, n, ne2 int }{
				{1, 256, 16, 1, 1},
				{2, 512, 37, 1, 1},
				{1, 256 * 3, 50, 8, 1},
				{2, 256 * 2, 33, 9, 2},
				{2, 256 * 4, 100, 17, 1},
				{1, 256, 70, 3, 1},
				{1, 256 * 8, 40, 2, 1},
				{2, 256 * 5, 64, 4, 1},
				{2, 256 * 7, 48, 1, 1},
			} {
				name := fmt.Sprintf("%+v", c)
				vals := make([]float32, c.k*c.m)
				for i := range vals {
					vals[i] = float32(r.NormFloat64())
				}
				ne := [4]int{c.k, c.m, 1, 1}
				a := tensor.Tensor{Type: dt, Ne: ne, Nb: tensor.ContiguousStrides(dt, ne), Data: tensor.Quantize(nil, dt, vals)}
				x := tensor.NewTensor(tensor.F32, [4]int{c.k, c.n, c.ne2, 1})
				for i := range x.F32s() {
					x.F32s()[i] = float32(r.NormFloat64())
				}
				want := tensor.NewTensor(tensor.F32, [4]int{c.m, c.n, c.ne2, 1})
				be := cpu.New(c.threads)
				be.MulMat(&want, &a, &x, ops.MulMatParams{})
				be.Close()
				got := tensor.NewTensor(tensor.F32, [4]int{c.m, c.n, c.ne2, 1})
				be = cpu.New(c.threads)
				if err := be.Pack(&a, false); err != nil {
					t.Fatal(err)
				}
				be.MulMat(&got, &a, &x, ops.MulMatParams{})
				be.Close()

				aw := tensor.Dequantize(nil, dt, a.Data, c.k*c.m)
				for b := 0; b < c.n*c.ne2; b++ {
					xr := x.F32s()[b*c.k : (b+1)*c.k]
					xq := tensor.Dequantize(nil, tensor.Q8_K, tensor.Quantize(nil, tensor.Q8_K, xr), c.k)
					for i := 0; i < c.m; i++ {
						var mag float64
						for j := 0; j < c.k; j++ {
							mag += math.Abs(float64(aw[i*c.k+j]) * float64(xq[j]))
						}
						g, w := got.F32s()[b*c.m+i], want.F32s()[b*c.m+i]
						if isa == "go" && g != w || math.Abs(float64(g)-float64(w)) > 1e-5*mag {
							t.Fatalf("%s: dst[%d, %d] = %g, want %g", name, i, b, g, w)
						}
					}
				}
			}
		})
	}
}

// BenchmarkPackedQ4_KStream is MulMat of one to four columns with q4_K
// weights at Llama-3.2-1B's shapes (the feed-forward's 2048→8192 and
// 8192→2048, a q4_K head of 128256), the weight as it is (the rows
// kernel) against Pack's copy, product by product in turn on the same
// columns, so that both see the same machine. Each side cycles through
// copies enough to exceed the last-level cache, as a model's weights do.
// It reports both sides' median GB/s of the weight as stored (the same
// work for both) and the median of the pairs' ratios; at one thread also
// the median ratio of their CPU times (threadCPU), which a loaded
// machine's waits for a CPU leave out.
func BenchmarkPackedQ4_KStream(b *testing.B) { benchPackedKStream(b, tensor.Q4_K) }

// BenchmarkPackedQ6_KStream is BenchmarkPackedQ4_KStream for q6_K (a
// Q4_K_M file's output head is q6_K).
func BenchmarkPackedQ6_KStream(b *testing.B) { benchPackedKStream(b, tensor.Q6_K) }

func benchPackedKStream(b *testing.B, dt tensor.DType) {
	const minBytes = 96 << 20
	for _, isa := range cpu.ISAs() {
		if isa == "go" {
			continue
		}
		for _, s := range []struct{ K, M int }{{2048, 8192}, {8192, 2048}, {2048, 128256}} {
			var ws []tensor.Tensor // built for the first sub-benchmark that runs
			weights := func() []tensor.Tensor {
				if ws == nil {
					r := rand.New(rand.NewPCG(1, 2))
					ne := [4]int{s.K, s.M, 1, 1}
					size := dt.RowSize(s.K) * s.M
					for range max(1, ceilDivTest(minBytes, size)) {
						ws = append(ws, tensor.Tensor{Type: dt, Ne: ne, Nb: tensor.ContiguousStrides(dt, ne), Data: kBlocks(r, dt, s.K*s.M/256, false)})
					}
				}
				return ws
			}
			for _, n := range []int{1, 2, 4} {
				for _, threads := range []int{1, 2} {
					b.Run(fmt.Sprintf("%s/K=%d,M=%d/n=%d/threads=%d", isa, s.K, s.M, n, threads), func(b *testing.B) {
						defer cpu.UseISA(isa)()
						ws := weights()
						r := rand.New(rand.NewPCG(3, 4))
						x := tensor.NewTensor(tensor.F32, [4]int{s.K, n, 1, 1})
						for i := range x.F32s() {
							x.F32s()[i] = float32(r.NormFloat64())
						}
						dst := tensor.NewTensor(tensor.F32, [4]int{s.M, n, 1, 1})
						plain, packed := cpu.New(threads), cpu.New(threads)
						defer plain.Close()
						defer packed.Close()
						for i := range ws {
							if err := packed.Pack(&ws[i], false); err != nil {
								b.Fatal(err)
							}
						}
						bytes := float64(len(ws[0].Data))
						// One thread runs the products inline: on a locked
						// thread its CPU time is theirs.
						runtime.LockOSThread()
						defer runtime.UnlockOSThread()
						var gbPlain, gbPacked, ratio, cpuRatio []float64
						i := 0
						for b.Loop() {
							w := &ws[i%len(ws)]
							i++
							c0, okc := threadCPU()
							t0 := time.Now()
							plain.MulMat(&dst, w, &x, ops.MulMatParams{})
							t1 := time.Now()
							c1, _ := threadCPU()
							packed.MulMat(&dst, w, &x, ops.MulMatParams{})
							t2 := time.Now()
							c2, _ := threadCPU()
							p, q := t1.Sub(t0).Seconds(), t2.Sub(t1).Seconds()
							gbPlain = append(gbPlain, bytes/p/1e9)
							gbPacked = append(gbPacked, bytes/q/1e9)
							ratio = append(ratio, p/q)
							if okc && threads == 1 && c2 > c1 && c1 > c0 {
								cpuRatio = append(cpuRatio, float64(c1-c0)/float64(c2-c1))
							}
						}
						if len(cpuRatio) > 0 {
							b.ReportMetric(median(cpuRatio), "cpu-packed/plain")
						}
						b.ReportMetric(median(gbPlain), "plainGB/s")
						b.ReportMetric(median(gbPacked), "packedGB/s")
						b.ReportMetric(median(ratio), "packed/plain")
					})
				}
			}
		}
	}
}

func ceilDivTest(a, b int) int { return (a + b - 1) / b }

// median is the middle of v (v is reordered).
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// TestMulMatPackedKExtremes is TestMulMatPackedQ4_K on the blocks whose
// integer sums are the largest (every quant and scale byte 0xff, q6_K's
// scales −128) against columns whose quants are all ±127: no lane may
// saturate or wrap.
func TestMulMatPackedKExtremes(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Q4_K, tensor.Q6_K} {
		for _, isa := range cpu.ISAs() {
			t.Run(fmt.Sprintf("%v/%s", dt, isa), func(t *testing.T) {
				defer cpu.UseISA(isa)()
				r := rand.New(rand.NewPCG(9, 10))
				const k, m = 256 * 4, 20
				for _, n := range []int{1, 3, 9} {
					ne := [4]int{k, m, 1, 1}
					a := tensor.Tensor{Type: dt, Ne: ne, Nb: tensor.ContiguousStrides(dt, ne), Data: kBlocks(r, dt, k*m/256, true)}
					x := tensor.NewTensor(tensor.F32, [4]int{k, n, 1, 1})
					for j := 0; j < n; j++ {
						copy(x.F32s()[j*k:], kActivations(r, k, true))
					}
					want := tensor.NewTensor(tensor.F32, [4]int{m, n, 1, 1})
					be := cpu.New(1)
					be.MulMat(&want, &a, &x, ops.MulMatParams{})
					got := tensor.NewTensor(tensor.F32, [4]int{m, n, 1, 1})
					if err := be.Pack(&a, false); err != nil {
						t.Fatal(err)
					}
					be.MulMat(&got, &a, &x, ops.MulMatParams{})
					be.Close()
					for i, w := range want.F32s() {
						g := got.F32s()[i]
						if math.Abs(float64(g)-float64(w)) > 1e-5*math.Abs(float64(w))+1e-6 {
							t.Fatalf("n=%d: dst[%d] = %g, want %g", n, i, g, w)
						}
					}
				}
			})
		}
	}
}
