package cpu_test

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// BenchmarkPackedColumns is MulMat of a packed q4_0 or q8_0 weight against
// one to four columns (one token of each of a few sequences decoded
// together) at Llama-3.2-1B's shapes, K×M: feed-forward up, down and the
// output head. Each round runs every column count once, one after the
// other, over copies of the weight that together outgrow the last-level
// cache (so the weights stream from memory, as in a model), and the metrics
// are each count's CPU time (the process's, all threads) over one
// column's: "x4/x1" is the cost of four sequences' step against one's,
// the figure that a host's other load shifts least; "x4-1group/x1" is
// four columns with one row group per kernel call (the small panels' pairs
// off). GB/s is one column's weight stream, wall clock.
func BenchmarkPackedColumns(b *testing.B) {
	const streamBytes = 96 << 20
	for _, dt := range []tensor.DType{tensor.Q4_0, tensor.Q8_0} {
		for _, s := range []struct{ K, M int }{{2048, 8192}, {8192, 2048}, {2048, 128256}} {
			ne := [4]int{s.K, s.M, 1, 1}
			size := tensor.ContiguousStrides(dt, ne)[3]
			copies := max(1, streamBytes/size)
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("%v/K=%d,M=%d/threads=%d", dt, s.K, s.M, threads), func(b *testing.B) {
					be := cpu.New(threads)
					defer be.Close()
					r := rand.New(rand.NewPCG(1, 2))
					ws := make([]tensor.Tensor, copies)
					for i := range ws {
						ws[i] = tensor.Tensor{Type: dt, Ne: ne, Nb: tensor.ContiguousStrides(dt, ne), Data: randomBlocks(r, dt, size)}
						if err := be.Pack(&ws[i], false); err != nil {
							b.Fatal(err)
						}
					}
					var xs, ds [5]tensor.Tensor
					for n := 1; n <= 4; n++ {
						xs[n] = tensor.NewTensor(tensor.F32, [4]int{s.K, n, 1, 1})
						for i := range xs[n].F32s() {
							xs[n].F32s()[i] = float32(r.NormFloat64())
						}
						ds[n] = tensor.NewTensor(tensor.F32, [4]int{s.M, n, 1, 1})
					}
					// cpuT[0] is four columns with one row group per
					// kernel call.
					var cpuT [5]time.Duration
					var wall1 time.Duration
					for b.Loop() {
						for n := 0; n <= 4; n++ {
							restore := cpu.SetSmallPairs(n > 0)
							c0, t0 := processCPU(), time.Now()
							for i := range ws {
								be.MulMat(&ds[max(n, 4*(1-n))], &ws[i], &xs[max(n, 4*(1-n))], ops.MulMatParams{})
							}
							cpuT[n] += processCPU() - c0
							restore()
							if n == 1 {
								wall1 += time.Since(t0)
							}
						}
					}
					for n := 2; n <= 4; n++ {
						b.ReportMetric(float64(cpuT[n])/float64(cpuT[1]), fmt.Sprintf("x%d/x1", n))
					}
					b.ReportMetric(float64(cpuT[0])/float64(cpuT[1]), "x4-1group/x1")
					b.ReportMetric(float64(size*copies)*float64(b.N)/wall1.Seconds()/1e9, "GB/s")
				})
			}
		}
	}
}

// randomBlocks returns size bytes of q4_0 or q8_0 blocks: random quants,
// scales of one small f16 magnitude with random signs.
func randomBlocks(r *rand.Rand, dt tensor.DType, size int) []byte {
	bs := 18
	if dt == tensor.Q8_0 {
		bs = 34
	}
	data := make([]byte, size)
	for i := 0; i+8 <= size; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8; j++ {
			data[i+j] = byte(v >> (8 * j))
		}
	}
	d := tensor.F32ToF16(0.01)
	for o := 0; o < size; o += bs {
		data[o], data[o+1] = byte(d), byte(d>>8)|data[o+1]&0x80
	}
	return data
}

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPackedKernelInCache is the packed kernels on row groups and a
// panel that stay in L1 (64 blocks of 32, 8 of 256): their compute alone,
// ns per block of a group in CPU time, to set against the weights' stream
// (BenchmarkPackedColumns).
// pair: the small panels' kernels over two groups.
func BenchmarkPackedKernelInCache(b *testing.B) {
	for _, dt := range []tensor.DType{tensor.Q4_0, tensor.Q8_0, tensor.Q4_K, tensor.Q6_K} {
		nb, be, cw := 64, 32, 1 // blocks of 32
		if dt == tensor.Q4_K || dt == tensor.Q6_K {
			nb, be, cw = 8, 256, 32 // blocks of 256 (a 2048-wide row), q6_K's offsets
		}
		for _, c := range []struct {
			pc   int
			pair bool
		}{{1, false}, {2, true}, {cpu.SmallPanelCols, false}, {cpu.SmallPanelCols, true}, {cpu.PanelCols, false}} {
			if c.pair && nb == 8 {
				continue // the K-quants have no small panels over two groups
			}
			b.Run(fmt.Sprintf("%v/pc=%d/pair=%v", dt, c.pc, c.pair), func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				w := make([]byte, 2*nb*cpu.PackedBlockBytes(dt))
				xq := make([]byte, nb*c.pc*be)
				for i := range w {
					w[i] = byte(r.Uint32())
				}
				for i := range xq {
					xq[i] = byte(r.Uint32())
				}
				w1, w2 := w[:len(w)/2], w[len(w)/2:]
				xd, xc, tile := make([]float32, nb*c.pc), make([]int32, nb*c.pc*cw), make([]float32, 2*cpu.PackRows*c.pc)
				groups := 1
				if c.pair {
					groups = 2
				}
				c0 := processCPU()
				for b.Loop() {
					if c.pair {
						cpu.PackedSmall2Asm(dt, c.pc, w1, w2, xq, xd, xc, nb, tile)
					} else {
						cpu.PackedKernel(dt, c.pc, w1, xq, xd, xc, nb, tile)
					}
				}
				b.ReportMetric(float64(processCPU()-c0)/float64(b.N*nb*groups), "cpu-ns/block")
			})
		}
	}
}
