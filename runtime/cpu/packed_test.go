package cpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/runtime"
	"github.com/graphc/graphc/runtime/cpu"
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
			defer cpu.SetISA(isa)()
			r := rand.New(rand.NewPCG(5, 6))
			for _, dt := range []runtime.DType{runtime.Q8_0, runtime.Q4_0} {
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
				} {
					name := fmt.Sprintf("%s/%+v", dt, c)
					vals := make([]float32, c.k*c.m*c.wne2)
					for i := range vals {
						vals[i] = float32(r.NormFloat64())
					}
					ne := [4]int{c.k, c.m, c.wne2, 1}
					a := runtime.Tensor{Type: dt, Ne: ne, Nb: runtime.ContiguousStrides(dt, ne), Data: runtime.Quantize(nil, dt, vals)}
					x := runtime.NewTensor(runtime.F32, [4]int{c.k, c.n, c.ne2, 1})
					if c.strided {
						x.Nb = [4]int{4 * c.n, 4, 4 * c.n * c.k, 4 * c.n * c.k * c.ne2}
					}
					for i := range x.F32s() {
						x.F32s()[i] = float32(r.NormFloat64())
					}
					dst := runtime.NewTensor(runtime.F32, [4]int{c.m, c.n, c.ne2, 1})
					be := cpu.New(c.threads)
					if err := be.Pack(&a); err != nil {
						t.Fatal(err)
					}
					be.MulMat(&dst, &a, &x)
					be.Close()

					aw := runtime.Dequantize(nil, dt, a.Data, c.k*c.m*c.wne2)
					for b := 0; b < c.n*c.ne2; b++ {
						col, i2 := b%c.n, b/c.n
						xr := make([]float32, c.k)
						for j := range xr {
							xr[j] = x.F32s()[(j*x.Nb[0]+col*x.Nb[1]+i2*x.Nb[2])/4]
						}
						xq := runtime.Dequantize(nil, runtime.Q8_0, runtime.Quantize(nil, runtime.Q8_0, xr), c.k)
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

// TestPackRefuses: Pack takes dense q4_0 and q8_0 matrices only, and a
// packed weight's view of another shape is not read packed.
func TestPackRefuses(t *testing.T) {
	be := cpu.New(1)
	defer be.Close()
	f := runtime.NewTensor(runtime.F32, [4]int{32, 4, 1, 1})
	if err := be.Pack(&f); err == nil {
		t.Error("Pack of f32: no error")
	}
	q := runtime.Tensor{Type: runtime.Q4_0, Ne: [4]int{64, 4, 1, 1}, Nb: runtime.ContiguousStrides(runtime.Q4_0, [4]int{64, 4, 1, 1})}
	q.Data = make([]byte, q.Span())
	if err := be.Pack(&q); err != nil {
		t.Fatal(err)
	}
	// The same bytes as a [32, 8] matrix: MulMat must read them as they are.
	v := q
	v.Ne, v.Nb = [4]int{32, 8, 1, 1}, runtime.ContiguousStrides(runtime.Q4_0, [4]int{32, 8, 1, 1})
	for i := range v.Data {
		v.Data[i] = byte(i % 7) // f16 scales 0x0n0m: small, finite
	}
	x := runtime.NewTensor(runtime.F32, [4]int{32, 1, 1, 1})
	for i := range x.F32s() {
		x.F32s()[i] = 1
	}
	got := runtime.NewTensor(runtime.F32, [4]int{8, 1, 1, 1})
	be.MulMat(&got, &v, &x)
	plain := cpu.New(1)
	defer plain.Close()
	want := runtime.NewTensor(runtime.F32, [4]int{8, 1, 1, 1})
	plain.MulMat(&want, &v, &x)
	for i, w := range want.F32s() {
		if got.F32s()[i] != w {
			t.Fatalf("view of a packed weight: dst[%d] = %g, want %g", i, got.F32s()[i], w)
		}
	}
}

// TestQuantizeColumn: the assembly quantizer writes exactly the Go loop's
// quants, scales and sums, on blocks of every magnitude, all-zero blocks
// (scale 0) and values halfway between two quants (rounding to even).
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
}
