package cpu_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/graphc/graphc/internal/isatest"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// TestMain runs the tests at each level the machine has (isatest.Main).
func TestMain(m *testing.M) { isatest.Main(m) }

// forISAs runs f at every instruction-set level this machine and build
// have (go, and avx2/avx512 where the processor has them), so that one
// machine checks every kernel against the same references; with
// $GRAPHC_CPU_ISA set (TestMain's runs at each lower level), only at that
// one.
func forISAs(t *testing.T, f func(t *testing.T)) {
	levels := cpu.ISAs()
	if os.Getenv(cpu.ISAEnv) != "" {
		levels = []string{cpu.ISA()}
	}
	for _, l := range levels {
		t.Run("isa="+l, func(t *testing.T) {
			defer cpu.UseISA(l)()
			f(t)
		})
	}
}

const gd = 37 // guard elements on each side of a kernel's operands

// guardedF32 returns n random floats in [-1, 1) at element offset off of a
// buffer whose other elements are NaN (an out-of-range read poisons the
// result), and the whole buffer.
func guardedF32(r *rand.Rand, n, off int) (s, buf []float32) {
	buf = make([]float32, n+off+2*gd)
	for i := range buf {
		buf[i] = float32(math.NaN())
	}
	s = buf[gd+off : gd+off+n]
	for i := range s {
		s[i] = float32(2*r.Float64() - 1)
	}
	return s, buf
}

// guardedF16 is guardedF32 for f16 values (NaN guards are 0x7e00).
func guardedF16(r *rand.Rand, n, off int) (s, buf []uint16) {
	buf = make([]uint16, n+off+2*gd)
	for i := range buf {
		buf[i] = 0x7e00
	}
	s = buf[gd+off : gd+off+n]
	for i := range s {
		s[i] = tensor.F32ToF16(float32(2*r.Float64() - 1))
	}
	return s, buf
}

// checkGuardsF32 fails if an element of buf outside [lo, hi) is not NaN.
func checkGuardsF32(t *testing.T, buf []float32, lo, hi int) {
	t.Helper()
	for i, v := range buf {
		if (i < lo || i >= hi) && v == v {
			t.Fatalf("element %d outside [%d, %d) written: %v", i, lo, hi, v)
		}
	}
}

// dotTol is the float32 summation bound for a dot of k products of
// magnitude sum mag.
func dotTol(k int, mag float64) float64 { return float64(k+2)*0x1p-24*mag + 1e-30 }

func checkDot(t *testing.T, what string, got float32, want, mag float64, k int) {
	t.Helper()
	if d := math.Abs(float64(got) - want); !(d <= dotTol(k, mag)) {
		t.Fatalf("%s k=%d: got %.9g, want %.9g (|diff| %.3g > %.3g)", what, k, got, want, d, dotTol(k, mag))
	}
}

var dotLens = []int{0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 47, 48, 63, 64, 65, 100, 127, 128, 129, 256, 1000}

// TestDotKernels checks the dot kernels at every level, with the f16 ones
// in 512-bit registers and narrowed (narrowF16), rows apart and back to
// back.
func TestDotKernels(t *testing.T) {
	for _, narrow := range []bool{false, true} {
		t.Run(fmt.Sprintf("narrowF16=%v", narrow), func(t *testing.T) {
			defer cpu.SetNarrowF16(narrow)()
			forISAs(t, testDotKernels)
		})
	}
}

func testDotKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i, k := range dotLens {
		off := r.IntN(4)
		lda := k
		if i%2 == 1 {
			lda += 1 + r.IntN(4)
		}
		ldx := k + r.IntN(5)
		a, abuf := guardedF32(r, 3*lda+k, off)
		a16, a16buf := guardedF16(r, 3*lda+k, off)
		x, xbuf := guardedF32(r, 3*ldx+k, r.IntN(4))
		acopy, a16copy, xcopy := append([]float32(nil), abuf...), append([]uint16(nil), a16buf...), append([]float32(nil), xbuf...)
		ref := func(i, j int, f16 bool) (s, m float64) {
			for p := 0; p < k; p++ {
				av := float64(a[i*lda+p])
				if f16 {
					av = float64(tensor.F16ToF32(a16[i*lda+p]))
				}
				v := av * float64(x[j*ldx+p])
				s += v
				m += math.Abs(v)
			}
			return
		}
		s, m := ref(0, 0, false)
		checkDot(t, "dotF32", cpu.DotF32(a[:k], x[:k]), s, m, k)
		s, m = ref(0, 0, true)
		checkDot(t, "dotF16", cpu.DotF16(a16[:k], x[:k]), s, m, k)
		c4 := cpu.Dot4x1F32(a, lda, x[:k])
		c4h := cpu.Dot4x1F16(a16, lda, x[:k])
		ldc := 4 + r.IntN(3)
		coff := r.IntN(4)
		c16, cbuf := guardedF32(r, 3*ldc+4, coff)
		for i := range c16 {
			c16[i] = float32(math.NaN())
		}
		cpu.Dot4x4F32(a, lda, x, ldx, k, c16, ldc)
		for i := 0; i < 4; i++ {
			s, m := ref(i, 0, false)
			checkDot(t, "dot4x1F32", c4[i], s, m, k)
			s, m = ref(i, 0, true)
			checkDot(t, "dot4x1F16", c4h[i], s, m, k)
			for j := 0; j < 4; j++ {
				s, m := ref(i, j, false)
				checkDot(t, "dot4x4F32", c16[j*ldc+i], s, m, k)
			}
		}
		// the panel: rows 0..3 as above, the c block now m rows tall
		pm := 4 * (1 + r.IntN(3))
		pa, _ := guardedF32(r, (pm-1)*lda+k, off)
		pc, pbuf := guardedF32(r, 3*(pm+2)+pm, 3)
		for i := range pc {
			pc[i] = float32(math.NaN())
		}
		cpu.DotPanelF32(pm, pa, lda, x, ldx, k, pc, pm+2)
		for j := 0; j < 4; j++ {
			for i := 0; i < pm+2 && j*(pm+2)+i < len(pc); i++ {
				got := pc[j*(pm+2)+i]
				if i >= pm {
					if got == got {
						t.Fatalf("dotPanelF32 k=%d wrote element %d of the gap after column %d", k, i, j)
					}
					continue
				}
				var s, mag float64
				for p := 0; p < k; p++ {
					v := float64(pa[i*lda+p]) * float64(x[j*ldx+p])
					s += v
					mag += math.Abs(v)
				}
				checkDot(t, "dotPanelF32", got, s, mag, k)
			}
		}
		checkGuardsF32(t, pbuf, gd+3, gd+3+len(pc))
		for e, v := range c16 {
			if e%ldc >= 4 && v == v {
				t.Fatalf("dot4x4F32 k=%d wrote element %d between columns %d apart", k, e, ldc)
			}
		}
		checkGuardsF32(t, cbuf, gd+coff, gd+coff+len(c16))
		for i := range abuf {
			if math.Float32bits(abuf[i]) != math.Float32bits(acopy[i]) || a16buf[i] != a16copy[i] {
				t.Fatalf("k=%d: a modified", k)
			}
		}
		for i := range xbuf {
			if math.Float32bits(xbuf[i]) != math.Float32bits(xcopy[i]) {
				t.Fatalf("k=%d: x modified", k)
			}
		}
	}
}

func TestGemmKernel(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		kern := cpu.CurrentGemmKernel()
		mr, nr := kern.MR, kern.NR
		r := rand.New(rand.NewPCG(5, 6))
		for _, k := range []int{0, 1, 2, 3, 7, 16, 33, 100, cpu.GemmKC} {
			for _, acc := range []bool{false, true} {
				a, _ := guardedF32(r, mr*k, r.IntN(4))
				b, _ := guardedF32(r, nr*k, r.IntN(4))
				ldc := mr + r.IntN(9)
				off := r.IntN(4)
				c, cbuf := guardedF32(r, (nr-1)*ldc+mr, off)
				// the gaps between the block's columns must stay as they are
				for j := 0; j < nr-1; j++ {
					for i := mr; i < ldc; i++ {
						c[j*ldc+i] = float32(math.NaN())
					}
				}
				c0 := append([]float32(nil), c...)
				kern.Fn(k, a, b, c, ldc, acc)
				checkGuardsF32(t, cbuf, gd+off, gd+off+len(c))
				for j := 0; j < nr; j++ {
					for i := 0; i < ldc && j*ldc+i < len(c); i++ {
						got := c[j*ldc+i]
						if i >= mr {
							if got == got {
								t.Fatalf("k=%d: gap element (%d, %d) written", k, i, j)
							}
							continue
						}
						var s, m float64
						for p := 0; p < k; p++ {
							v := float64(a[mr*p+i]) * float64(b[nr*p+j])
							s += v
							m += math.Abs(v)
						}
						if acc {
							s += float64(c0[j*ldc+i])
							m += math.Abs(float64(c0[j*ldc+i]))
						}
						checkDot(t, "gemm kernel", got, s, m, k)
					}
				}
			}
		}
	})
}

func TestF16Rows(t *testing.T) {
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		math.Float32frombits(0x7fc12345), math.Float32frombits(0xff812345), 65504, 65519.99, 65520, 1e-8, 5.96e-8, 2.98e-8, 2.99e-8,
		6.1e-5, 1 + 1.0/2048, 1 + 3.0/2048, -(1 + 1.0/2048), 1e30, -1e-30}
	forISAs(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		for _, n := range dotLens {
			off := r.IntN(4)
			s, _ := guardedF32(r, n, off)
			for i := range s {
				switch r.IntN(4) {
				case 0:
					s[i] = specials[r.IntN(len(specials))]
				case 1:
					s[i] = math.Float32frombits(r.Uint32())
				}
			}
			h := make([]uint16, n+2*gd)
			for i := range h {
				h[i] = 0xabcd
			}
			cpu.F32ToF16Row(h[gd:gd+n], s)
			for i, v := range s {
				if got, want := h[gd+i], tensor.F32ToF16(v); got != want {
					t.Fatalf("f32→f16 of %g (%#x): %#x, want %#x", v, math.Float32bits(v), got, want)
				}
			}
			for i := range h {
				if (i < gd || i >= gd+n) && h[i] != 0xabcd {
					t.Fatalf("f32→f16 wrote element %d outside the row", i)
				}
			}
			d, dbuf := guardedF32(r, n, off)
			cpu.F16ToF32Row(d, h[gd:gd+n])
			for i := range d {
				if got, want := math.Float32bits(d[i]), math.Float32bits(tensor.F16ToF32(h[gd+i])); got != want {
					t.Fatalf("f16→f32 of %#x: %#x, want %#x", h[gd+i], got, want)
				}
			}
			checkGuardsF32(t, dbuf, gd+off, gd+off+n)
			cpu.RoundF16Row(d, s)
			for i := range d {
				if got, want := math.Float32bits(d[i]), math.Float32bits(tensor.F16ToF32(tensor.F32ToF16(s[i]))); got != want {
					t.Fatalf("round of %g: %#x, want %#x", s[i], got, want)
				}
			}
			checkGuardsF32(t, dbuf, gd+off, gd+off+n)
		}
	})
}

// TestExpKernels: the vector exponential, silu and sigmoid give the Go loop's bits
// (the same float64 operations in the same order, only the sum of the
// exponentials is added in another order).
func TestExpKernels(t *testing.T) {
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		-104, -103.99, 88.99, 89, -87.3, 88.72, 1e-30, -1e-30, 1e30, -1e30}
	forISAs(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(11, 12))
		for _, n := range dotLens {
			x, _ := guardedF32(r, n, r.IntN(4))
			for i := range x {
				switch r.IntN(3) {
				case 0:
					x[i] = specials[r.IntN(len(specials))]
				case 1:
					x[i] = float32(200 * (r.Float64() - 0.5))
				}
			}
			for _, sm := range [][2]float32{{1, 0}, {-1, 0}, {0.125, 3.5}} {
				want := make([]float32, n)
				wsum := cpu.ExpRowGo(want, x, sm[0], sm[1])
				got, gbuf := guardedF32(r, n, 1)
				gsum := cpu.ExpRow(got, x, sm[0], sm[1])
				checkGuardsF32(t, gbuf, gd+1, gd+1+n)
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
						t.Fatalf("exp(%g·%g - %g) = %g, Go loop %g", sm[0], x[i], sm[1], got[i], want[i])
					}
				}
				if d := math.Abs(gsum - wsum); !(d <= 1e-12*math.Abs(wsum)) && !(math.IsNaN(gsum) && math.IsNaN(wsum)) && gsum != wsum {
					t.Fatalf("n=%d: sum %g, Go loop %g", n, gsum, wsum)
				}
			}
			want := make([]float32, n)
			cpu.SiluGo(want, x)
			got, gbuf := guardedF32(r, n, 2)
			cpu.Silu(got, x)
			checkGuardsF32(t, gbuf, gd+2, gd+2+n)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
					t.Fatalf("silu(%g) = %g, Go loop %g", x[i], got[i], want[i])
				}
			}
			cpu.SigmoidGo(want, x)
			cpu.Sigmoid(got, x)
			checkGuardsF32(t, gbuf, gd+2, gd+2+n)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
					t.Fatalf("sigmoid(%g) = %g, Go loop %g", x[i], got[i], want[i])
				}
			}
		}
	})
}

// sameF32 reports whether got and want hold the same values (NaNs alike).
func sameF32(got, want []float32) int {
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
			return i
		}
	}
	return -1
}

// TestVecKernels: the elementwise loops give the Go loops' values, write
// only their destination and handle every length and alignment.
func TestVecKernels(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(13, 14))
		for _, n := range dotLens {
			a, _ := guardedF32(r, n, r.IntN(4))
			x, _ := guardedF32(r, n, r.IntN(4))
			if n > 3 {
				a[1], a[2], x[3] = float32(math.NaN()), float32(math.Inf(-1)), 0
			}
			for name, f := range cpu.VecBinary {
				want := make([]float32, n)
				f[1](want, a, x)
				off := r.IntN(4)
				got, gbuf := guardedF32(r, n, off)
				f[0](got, a, x)
				checkGuardsF32(t, gbuf, gd+off, gd+off+n)
				if i := sameF32(got, want); i >= 0 {
					t.Fatalf("%s n=%d: element %d = %g, Go loop %g", name, n, i, got[i], want[i])
				}
			}
			want := make([]float32, n)
			cpu.ScaleF32Go(want, a, 0.3)
			got, gbuf := guardedF32(r, n, 1)
			cpu.ScaleF32(got, a, 0.3)
			checkGuardsF32(t, gbuf, gd+1, gd+1+n)
			if i := sameF32(got, want); i >= 0 {
				t.Fatalf("scale n=%d: element %d = %g, Go loop %g", n, i, got[i], want[i])
			}
			for _, s := range []float32{1, -0.7} {
				copy(want, x)
				cpu.AddScaledGo(want, a, s)
				copy(got, x)
				cpu.AddScaled(got, a, s)
				checkGuardsF32(t, gbuf, gd+1, gd+1+n)
				for i := range want {
					if d := math.Abs(float64(got[i] - want[i])); d > 1e-7*math.Abs(float64(want[i])) {
						t.Fatalf("addScaled n=%d s=%g: element %d = %g, Go loop %g", n, s, i, got[i], want[i])
					}
				}
			}
			if g, w := cpu.MaxF32(a), cpu.MaxF32Go(a); g != w {
				t.Fatalf("max n=%d: %g, Go loop %g", n, g, w)
			}
			if g, w := cpu.SumSqF64(x), cpu.SumSqF64Go(x); math.Abs(g-w) > 1e-12*w {
				t.Fatalf("sum of squares n=%d: %g, Go loop %g", n, g, w)
			}
		}
	})
}

// TestRopeKernels: the vector rotations give the Go loop's values (up to
// the Go loop's rare double rounding of its emulated fmaf) for both modes,
// every even length, in place or not.
func TestRopeKernels(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(15, 16))
		for nd := 2; nd <= 100; nd += 2 {
			for _, mode := range []int{0, ops.RopeNeox} {
				cs, _ := guardedF32(r, nd, r.IntN(4))
				x, _ := guardedF32(r, nd+r.IntN(3), r.IntN(4))
				want := make([]float32, nd)
				cpu.RopeRowGo(want, x, cs, mode)
				off := r.IntN(4)
				got, gbuf := guardedF32(r, nd, off)
				cpu.RopeRow(got, x, cs, mode)
				checkGuardsF32(t, gbuf, gd+off, gd+off+nd)
				in := append([]float32(nil), x[:nd]...)
				cpu.RopeRow(in, in, cs, mode) // in place
				for i := range want {
					if d := math.Abs(float64(got[i] - want[i])); d > 1.2e-7*math.Abs(float64(want[i])) || got[i] != in[i] {
						t.Fatalf("nd=%d mode=%d: element %d = %g (in place %g), Go loop %g", nd, mode, i, got[i], in[i], want[i])
					}
				}
			}
		}
	})
}

func TestTranspose8(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(17, 18))
		for _, k := range []int{8, 16, 64, 256} {
			lds := k + r.IntN(5)
			ldd := 8 + r.IntN(30)
			src, _ := guardedF32(r, 7*lds+k, r.IntN(4))
			off := r.IntN(4)
			dst, dbuf := guardedF32(r, (k-1)*ldd+8, off)
			for i := range dst {
				dst[i] = float32(math.NaN())
			}
			cpu.Transpose8(dst, ldd, src, lds, k)
			checkGuardsF32(t, dbuf, gd+off, gd+off+len(dst))
			for e, v := range dst {
				p, i := e/ldd, e%ldd
				if i >= 8 {
					if v == v {
						t.Fatalf("k=%d: element %d between steps written", k, e)
					}
					continue
				}
				if v != src[i*lds+p] {
					t.Fatalf("k=%d: dst[%d·%d+%d] = %g, want %g", k, p, ldd, i, v, src[i*lds+p])
				}
			}
		}
	})
}

// TestDotBF16 checks the bf16 dot at every level against float64 sums of
// the same products, over lengths that leave tails after the 16- and
// 32-value SIMD blocks.
func TestDotBF16(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(5, 6))
		for _, k := range append(dotLens, 2048, 2049, 4095) {
			a, x := make([]byte, 2*k), make([]byte, 2*k)
			var want, mag float64
			for i := 0; i < k; i++ {
				av := tensor.F32ToBF16(float32(2*r.Float64() - 1))
				xv := tensor.F32ToBF16(float32(2*r.Float64() - 1))
				binary.LittleEndian.PutUint16(a[2*i:], av)
				binary.LittleEndian.PutUint16(x[2*i:], xv)
				p := float64(tensor.BF16ToF32(av)) * float64(tensor.BF16ToF32(xv))
				want += p
				mag += math.Abs(p)
			}
			checkDot(t, "dotBF16", cpu.DotBF16(a, x, k), want, mag, k)
		}
	})
}
