package cpu_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// q8kBlocks are blocks of 256 values for the q8_K quantizer: random ones
// at many magnitudes, and the cases where a SIMD kernel could part from
// the Go loop: ties in magnitude (the first wins, its sign kept), quants
// at exactly .5, zero blocks, subnormals and maxima small enough that
// -127/max overflows, values near the float32 maximum, NaN (quiet,
// signalling, with payloads) and ±Inf.
func q8kBlocks(r *rand.Rand) [][]float32 {
	var blocks [][]float32
	add := func(f func(x []float32)) {
		x := make([]float32, 256)
		f(x)
		blocks = append(blocks, x)
	}
	uniform := func(x []float32, scale float64) {
		for i := range x {
			x[i] = float32((2*r.Float64() - 1) * scale)
		}
	}
	for i := 0; i < 400; i++ {
		scale := math.Pow(10, float64(r.IntN(61)-30))
		add(func(x []float32) { uniform(x, scale) })
	}
	// Ties: ±m at two positions (within one vector, one 32-value group, or
	// far apart), either sign first; and a tie of equal signs.
	for i := 0; i < 200; i++ {
		p := r.IntN(256)
		q := p + 1 + r.IntN([]int{7, 31, 255}[i%3])
		if q >= 256 {
			p, q = r.IntN(128), 128+r.IntN(128)
		}
		sign := float32(1 - 2*(i/3%2))
		add(func(x []float32) {
			uniform(x, 1)
			x[p], x[q] = sign*2, -sign*2
			if i%5 == 0 {
				x[q] = sign * 2
			}
		})
	}
	// max = ∓127 and ∓254: iscale = ±1 and ±0.5, so halves and odd
	// integers round at exactly .5, half to even.
	for _, mx := range []float32{127, -127, 254, -254} {
		add(func(x []float32) {
			for i := range x {
				x[i] = float32(r.IntN(254)-127) * (mx / 127)
				if i%2 == 0 {
					x[i] += 0.5 * mx / 127
				}
			}
			x[r.IntN(256)] = mx
		})
	}
	add(func(x []float32) {}) // all zero
	add(func(x []float32) {
		for i := range x {
			x[i] = float32(math.Copysign(0, -1))
		}
	})
	add(func(x []float32) { // a negative max, at the first and last value
		uniform(x, 3)
		x[0] = -5
	})
	add(func(x []float32) {
		uniform(x, 3)
		x[255] = -5
	})
	add(func(x []float32) { x[255] = 1e-3 }) // one non-zero value
	// Subnormals and small maxima (-127/max overflows below ~3.7e-37).
	for _, scale := range []float64{1e-45, 1e-42, 1e-39, 1e-38, 3e-37, 4e-37, 1e-36} {
		add(func(x []float32) { uniform(x, scale) })
		add(func(x []float32) {
			uniform(x, scale)
			x[r.IntN(256)] = 0
			x[r.IntN(256)] = float32(math.NaN())
		})
	}
	for _, scale := range []float64{1e30, 3e38} {
		add(func(x []float32) { uniform(x, scale) })
	}
	add(func(x []float32) {
		uniform(x, 1e30)
		x[r.IntN(256)] = -math.MaxFloat32
	})
	// NaN and ±Inf.
	nans := []uint32{0x7fc00000, 0xffc00000, 0x7f800001, 0xff800123, 0x7fc0007f, 0x7fc00080, 0x7fffffff, 0xffffffff}
	for i := 0; i < 64; i++ {
		add(func(x []float32) {
			uniform(x, 1)
			for k := 0; k <= i%4; k++ {
				x[r.IntN(256)] = math.Float32frombits(nans[r.IntN(len(nans))])
			}
			switch i % 8 {
			case 1:
				x[r.IntN(256)] = float32(math.Inf(1))
			case 2:
				x[r.IntN(256)] = float32(math.Inf(-1))
			case 3:
				x[r.IntN(128)] = float32(math.Inf(-1))
				x[128+r.IntN(128)] = float32(math.Inf(1))
			case 4:
				x[r.IntN(256)] = float32(math.Inf(1))
				x[r.IntN(256)] = 0
			case 5:
				clear(x)
				x[r.IntN(256)] = math.Float32frombits(nans[r.IntN(len(nans))])
			case 6:
				for k := range x {
					x[k] = math.Float32frombits(nans[r.IntN(len(nans))])
				}
			}
		})
	}
	// A NaN at each position, the max in the same lane of another vector
	// (where a NaN taken into a lane's running max would hide it).
	for p := 0; p < 256; p++ {
		for _, m := range []float32{3, -3} {
			add(func(x []float32) {
				uniform(x, 1)
				x[(p+32*(1+r.IntN(7)))%256] = m
				x[p] = math.Float32frombits(nans[p%len(nans)])
			})
		}
	}
	// NaNs of many payloads where -127/max overflows.
	for i := 0; i < 16; i++ {
		add(func(x []float32) {
			uniform(x, 1e-39)
			for k := 0; k < 32; k++ {
				x[r.IntN(256)] = math.Float32frombits(nans[r.IntN(len(nans))] | r.Uint32()&0x3fffff)
			}
		})
	}
	return blocks
}

// TestQuantizeQ8_K checks MulMat's q8_K quantizer at each level against
// quantizeQ8_KGo byte for byte: each test block alone, and rows of several
// appended to a dst whose spare capacity holds garbage.
func TestQuantizeQ8_K(t *testing.T) {
	r := rand.New(rand.NewPCG(82, 56))
	blocks := q8kBlocks(r)
	rows := make([][]float32, 0, len(blocks)+64)
	for _, x := range blocks {
		rows = append(rows, x)
	}
	for i := 0; i < 64; i++ {
		var row []float32
		for nb := 1 + r.IntN(32); nb > 0; nb-- {
			row = append(row, blocks[r.IntN(len(blocks))]...)
		}
		rows = append(rows, row)
	}
	forISAs(t, func(t *testing.T) {
		for i, row := range rows {
			want := cpu.QuantizeQ8_KGo(nil, row)
			pre := []byte{1, 2, 3}
			dst := append(make([]byte, 0, len(pre)+len(want)+16), pre...)
			spare := dst[len(dst):cap(dst)]
			for k := range spare {
				spare[k] = 0xa5
			}
			got := cpu.QuantizeActivations(dst, tensor.Q8_K, row)
			if !bytes.Equal(got[:len(pre)], pre) || len(got) != len(pre)+len(want) {
				t.Fatalf("row %d: prefix or length changed: %d bytes, want %d", i, len(got), len(pre)+len(want))
			}
			if g := got[len(pre):]; !bytes.Equal(g, want) {
				k := 0
				for g[k] == want[k] {
					k++
				}
				b := k / tensor.Q8_K.Size()
				t.Fatalf("row %d: byte %d (block %d, offset %d) = %#x, the Go loop's %#x; block %v",
					i, k, b, k%tensor.Q8_K.Size(), g[k], want[k], row[256*b:256*b+256])
			}
		}
	})
}

// BenchmarkQuantizeQ8_K times MulMat's q8_K quantizer at each level on a
// row of 2048 and of 8192 values kept in L1.
func BenchmarkQuantizeQ8_K(b *testing.B) {
	for _, n := range []int{2048, 8192} {
		r := rand.New(rand.NewPCG(1, 2))
		x := kActivations(r, n, false)
		dst := make([]byte, 0, n/256*tensor.Q8_K.Size())
		for _, l := range cpu.ISAs() {
			b.Run(fmt.Sprintf("n=%d/%s", n, l), func(b *testing.B) {
				defer cpu.UseISA(l)()
				b.SetBytes(int64(4 * n))
				for b.Loop() {
					cpu.QuantizeActivations(dst[:0], tensor.Q8_K, x)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n/256), "ns/block")
			})
		}
	}
}
