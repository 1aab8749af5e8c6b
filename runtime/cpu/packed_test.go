package cpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// TestMulMatPackedWeights checks MulMat with packed weights at every level against
// the float64 reference of TestMulMatBlocks (ggml's recipe): row counts
// that fill no group, one column (the matrix-vector kernels), panels with
// and without a partial one, strided x, a broadcast weight, 1 and 2
// threads. The kernels sum ggml's block terms in another order: 1e-5
// relative to the row's magnitude.
func TestMulMatPackedWeights(t *testing.T) {
	for _, isa := range cpu.ISAs() {
		t.Run(isa, func(t *testing.T) {
			defer cpu.UseISA(isa)()
			r := rand.New(rand.NewPCG(5, 6))
			for _, dt := range []tensor.DType{tensor.Q8_0, tensor.Q4_0} {
				for _, c := range []struct {
					threads, k, m, n, ne2, wne2 int
					strided                     bool
				}{
					{1, 32, 16, 1, 1, 1, false},
					{2, 64, 37, 1, 1, 1, false},
					{1, 32 * 9, 50, 8, 1, 1, false},
					{2, 32 * 9, 33, 9, 2, 1, false},
					{2, 32 * 3, 17, 17, 2, 2, true},
					{1, 32 * 5, 40, 3, 1, 1, true},
					{2, 32 * 7, 35, 4, 1, 1, false},
					// one column, several groups: two row groups per kernel
					// call, with an odd one left and across batches
					{1, 32 * 3, 100, 1, 1, 1, false},
					{2, 32 * 5, 70, 1, 2, 2, false},
					// a copy of 2 MiB or more: a huge-page mapping of its own
					{2, 2048, 1040, 2, 1, 1, false},
				} {
					name := fmt.Sprintf("%s/%+v", dt, c)
					vals := make([]float32, c.k*c.m*c.wne2)
					for i := range vals {
						vals[i] = float32(r.NormFloat64())
					}
					ne := [4]int{c.k, c.m, c.wne2, 1}
					a := tensor.Tensor{Type: dt, Ne: ne, Nb: tensor.ContiguousStrides(dt, ne), Data: tensor.Quantize(nil, dt, vals)}
					x := tensor.NewTensor(tensor.F32, [4]int{c.k, c.n, c.ne2, 1})
					if c.strided {
						x.Nb = [4]int{4 * c.n, 4, 4 * c.n * c.k, 4 * c.n * c.k * c.ne2}
					}
					for i := range x.F32s() {
						x.F32s()[i] = float32(r.NormFloat64())
					}
					dst := tensor.NewTensor(tensor.F32, [4]int{c.m, c.n, c.ne2, 1})
					be := cpu.New(c.threads)
					if err := be.Pack(&a, false); err != nil {
						t.Fatal(err)
					}
					be.MulMat(&dst, &a, &x, ops.MulMatParams{})
					be.Close()

					aw := tensor.Dequantize(nil, dt, a.Data, c.k*c.m*c.wne2)
					for b := 0; b < c.n*c.ne2; b++ {
						col, i2 := b%c.n, b/c.n
						xr := make([]float32, c.k)
						for j := range xr {
							xr[j] = x.F32s()[(j*x.Nb[0]+col*x.Nb[1]+i2*x.Nb[2])/4]
						}
						xq := tensor.Dequantize(nil, tensor.Q8_0, tensor.Quantize(nil, tensor.Q8_0, xr), c.k)
						w := aw[(i2/(c.ne2/c.wne2))*c.k*c.m:]
						for i := 0; i < c.m; i++ {
							var want, mag float64
							for j := 0; j < c.k; j++ {
								p := float64(w[i*c.k+j]) * float64(xq[j])
								want += p
								mag += math.Abs(p)
							}
							got := float64(dst.F32s()[b*c.m+i])
							if math.Abs(got-want) > 1e-5*mag {
								t.Fatalf("%s: dst[%d, %d] = %g, want %g", name, i, b, got, want)
							}
						}
					}
				}
			}
		})
	}
}

// TestPackRefuses: Pack takes dense q4_0, q8_0, q4_K and q6_K matrices only, and a
// packed weight's view of another shape is not read packed.
func TestPackRefuses(t *testing.T) {
	be := cpu.New(1)
	defer be.Close()
	f := tensor.NewTensor(tensor.F32, [4]int{32, 4, 1, 1})
	if err := be.Pack(&f, false); err == nil {
		t.Error("Pack of f32: no error")
	}
	q := tensor.Tensor{Type: tensor.Q4_0, Ne: [4]int{64, 4, 1, 1}, Nb: tensor.ContiguousStrides(tensor.Q4_0, [4]int{64, 4, 1, 1})}
	q.Data = make([]byte, q.Span())
	if err := be.Pack(&q, false); err != nil {
		t.Fatal(err)
	}
	// The same bytes as a [32, 8] matrix: MulMat must read them as they are.
	v := q
	v.Ne, v.Nb = [4]int{32, 8, 1, 1}, tensor.ContiguousStrides(tensor.Q4_0, [4]int{32, 8, 1, 1})
	for i := range v.Data {
		v.Data[i] = byte(i % 7) // f16 scales 0x0n0m: small, finite
	}
	x := tensor.NewTensor(tensor.F32, [4]int{32, 1, 1, 1})
	for i := range x.F32s() {
		x.F32s()[i] = 1
	}
	got := tensor.NewTensor(tensor.F32, [4]int{8, 1, 1, 1})
	be.MulMat(&got, &v, &x, ops.MulMatParams{})
	plain := cpu.New(1)
	defer plain.Close()
	want := tensor.NewTensor(tensor.F32, [4]int{8, 1, 1, 1})
	plain.MulMat(&want, &v, &x, ops.MulMatParams{})
	for i, w := range want.F32s() {
		if got.F32s()[i] != w {
			t.Fatalf("view of a packed weight: dst[%d] = %g, want %g", i, got.F32s()[i], w)
		}
	}
}

// TestQuantizeColumn: the assembly quantizers (avx512, avx2) write exactly
// the Go loop's quants, scales and sums, on blocks of every magnitude,
// all-zero blocks (scale 0) and values halfway between two quants
// (rounding to even).
func TestQuantizeColumn(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const nb, qs, ss = 40, 64, 3
	row := make([]float32, nb*32)
	for b := 0; b < nb; b++ {
		scale := float32(math.Pow(10, float64(r.IntN(20)-10)))
		for i := 0; i < 32; i++ {
			switch b % 5 {
			case 0:
				row[b*32+i] = 0
			case 1:
				row[b*32+i] = float32(i-16) + 0.5 // ties after scaling by 127/amax when amax = 127
			default:
				row[b*32+i] = float32(r.NormFloat64()) * scale
			}
		}
		if b%5 == 1 {
			row[b*32] = 127
		}
	}
	forISAs(t, func(t *testing.T) {
		for _, shift := range []uint{3, 7} {
			got := [3]any{make([]byte, nb*qs), make([]float32, nb*ss), make([]int32, nb*ss)}
			want := [3]any{make([]byte, nb*qs), make([]float32, nb*ss), make([]int32, nb*ss)}
			cpu.QuantizeColumn(row, nb, got[0].([]byte), qs, got[1].([]float32), got[2].([]int32), ss, shift)
			cpu.QuantizeColumnGo(row, nb, want[0].([]byte), qs, want[1].([]float32), want[2].([]int32), ss, shift)
			for i := range got {
				if fmt.Sprint(got[i]) != fmt.Sprint(want[i]) {
					t.Fatalf("shift %d, output %d (quants, scales, sums):\n got %v\nwant %v", shift, i, got[i], want[i])
				}
			}
		}
	})
}

// TestPackedKernels compares the packed kernels of every level with the Go
// loop on one row group against one panel, built in the packed layout
// (pack.go): random quants and the extremes (q4_0 nibbles 0 and 15, q8_0
// quants −128 and 127, activations ±127, all of one sign: the int16 pair
// sums at their largest), nb = 1, 3 and 64, a padding row (scale 0). The
// kernels sum the same block terms in the same order, with or without
// FMA: 1e-6 relative to Σ|terms|. The tile must be overwritten, not added
// to, and nothing past it written.
func TestPackedKernels(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		for _, dt := range []tensor.DType{tensor.Q4_0, tensor.Q8_0} {
			for _, pc := range []int{1, 2, cpu.SmallPanelCols, cpu.PanelCols} {
				for _, nb := range []int{1, 3, 64} {
					for _, fill := range []string{"random", "max", "min", "extremes", "mixed"} {
						name := fmt.Sprintf("%s/pc=%d/nb=%d/%s", dt, pc, nb, fill)
						checkPackedKernel(t, r, name, dt, pc, nb, fill)
					}
				}
			}
		}
	})
}

func checkPackedKernel(t *testing.T, r *rand.Rand, name string, dt tensor.DType, pc, nb int, fill string) {
	t.Helper()
	pb := cpu.PackedBlockBytes(dt)
	w := make([]byte, nb*pb)
	xq := make([]byte, nb*pc*32)
	xd := make([]float32, nb*pc)
	xc := make([]int32, nb*pc)
	// wbyte and xbyte draw one stored weight byte and one activation quant.
	hi := byte(0xff) // q4_0: nibbles 15, 15; q8_0: q = 127
	lo := byte(0x00) // q4_0: nibbles 0, 0; q8_0: q = −128
	wbyte := func() byte {
		switch fill {
		case "max":
			return hi
		case "min":
			return lo
		case "extremes", "mixed":
			return [2]byte{lo, hi}[r.IntN(2)]
		}
		return byte(r.IntN(256))
	}
	xsign := int8(1 - 2*r.IntN(2))
	xbyte := func() byte {
		switch fill {
		case "max", "min", "extremes":
			return byte(127 * xsign)
		case "mixed":
			return byte(int8(127 * (1 - 2*r.IntN(2))))
		}
		return byte(int8(r.IntN(255) - 127))
	}
	for b := 0; b < nb; b++ {
		wb := w[b*pb : (b+1)*pb]
		for row := 0; row < cpu.PackRows; row++ {
			d := tensor.F32ToF16(float32(r.Float64()*2 - 1))
			if row == cpu.PackRows-1 {
				d = 0 // a padding row
			}
			wb[2*row], wb[2*row+1] = byte(d), byte(d>>8)
		}
		for i := 32; i < pb; i++ {
			wb[i] = wbyte()
		}
		for j := 0; j < pc; j++ {
			var sum int32
			for i := 0; i < 32; i++ {
				q := xbyte()
				xq[(b*pc+j)*32+i] = q
				sum += int32(int8(q))
			}
			xd[b*pc+j] = float32(r.Float64() * 0.1)
			if dt == tensor.Q4_0 {
				xc[b*pc+j] = -8 * sum
			} else {
				xc[b*pc+j] = -128 * sum
			}
		}
	}
	w0, xq0 := slices.Clone(w), slices.Clone(xq)

	want := make([]float32, cpu.PackRows*pc)
	cpu.PackedKernelGo(dt, pc, w, xq, xd, xc, nb, want)
	if asm := cpu.PackedKernelAsm(dt, pc, w, xq, xd, xc, nb, make([]float32, cpu.PackRows*pc)); asm != (cpu.ISA() != "go") {
		t.Fatalf("%s: packed kernel in assembly: %v at level %s", name, asm, cpu.ISA())
	}
	buf := make([]float32, cpu.PackRows*pc+cpu.PackRows)
	for i := range buf {
		buf[i] = float32(math.NaN())
	}
	guard := float32(-7.25)
	for i := cpu.PackRows * pc; i < len(buf); i++ {
		buf[i] = guard
	}
	got := buf[:cpu.PackRows*pc]
	cpu.PackedKernel(dt, pc, w, xq, xd, xc, nb, got)

	for i, v := range buf[len(got):] {
		if v != guard {
			t.Fatalf("%s: wrote %g past the tile at %d", name, v, i)
		}
	}
	if !slices.Equal(w, w0) || !slices.Equal(xq, xq0) {
		t.Fatalf("%s: the kernel wrote its inputs", name)
	}
	for j := 0; j < pc; j++ {
		for row := 0; row < cpu.PackRows; row++ {
			var mag float64
			for b := 0; b < nb; b++ {
				wb := w[b*pb:]
				da := tensor.F16ToF32(uint16(wb[2*row]) | uint16(wb[2*row+1])<<8)
				x := xq[(b*pc+j)*32:][:32]
				var s int64
				for i := 0; i < 32; i++ {
					var q int64
					if dt == tensor.Q4_0 {
						v := wb[32+64*(i%16/4)+4*row+i%4]
						q = int64(v&15) - 8
						if i >= 16 {
							q = int64(v>>4) - 8
						}
					} else {
						q = int64(wb[32+64*(i/4)+4*row+i%4]) - 128
					}
					s += q * int64(int8(x[i]))
				}
				mag += math.Abs(float64(s) * float64(da) * float64(xd[b*pc+j]))
			}
			g, wv := got[j*cpu.PackRows+row], want[j*cpu.PackRows+row]
			if math.IsNaN(float64(g)) || math.Abs(float64(g)-float64(wv)) > 1e-6*mag {
				t.Fatalf("%s: tile[col %d, row %d] = %g, Go loop %g (Σ|terms| %g)", name, j, row, g, wv, mag)
			}
		}
	}
}
