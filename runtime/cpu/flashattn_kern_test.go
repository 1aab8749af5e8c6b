package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/tensor"
)

// atLevels runs f at every instruction-set level this machine has.
func atLevels(t *testing.T, f func(t *testing.T)) {
	initTables()
	old := level
	defer func() { level = old }()
	for l := isaGo; l <= bestISA(); l++ {
		level = l
		t.Run(l.String(), f)
	}
}

// TestFAExp checks faExp against float64 exp: within 2 ulps (seen: 1),
// 0 below e^-87.3 and for -Inf, the sum within float32 rounding.
func TestFAExp(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	atLevels(t, func(t *testing.T) {
		for _, n := range []int{0, 1, 7, 8, 64, 77} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(-100 * r.Float64())
			}
			if n > 3 {
				x[0], x[1], x[2] = float32(math.Inf(-1)), 0, -87
			}
			m := float32(r.Float64() - 0.5)
			y := make([]float32, n)
			sum := faExp(y, x, m)
			want := 0.0
			for i, xi := range x {
				v := float64(xi - m)
				e := math.Exp(v)
				if v < -87.33654 {
					e = 0
				}
				want += e
				if got := float64(y[i]); math.Abs(got-e) > 2*e*0x1p-23 {
					t.Errorf("n=%d: e^%g = %g, want %g", n, v, got, e)
				}
			}
			if math.Abs(float64(sum)-want) > 1e-6*want {
				t.Errorf("n=%d: sum %g, want %g", n, sum, want)
			}
		}
	})
}

// TestFAAccum checks faAccum and faAccumRows against float64 sums of the
// same steps (f32: 1e-5, with f16 rounding against faAccumGo exactly but
// for fused products: 1e-3 relative).
func TestFAAccum(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	rnd := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(2*r.Float64() - 1)
		}
		return x
	}
	atLevels(t, func(t *testing.T) {
		for _, c := range []struct{ nk, dv int }{{1, 16}, {5, 40}, {64, 64}, {33, 96}, {7, 8}, {9, 128}, {3, 80}} {
			lda, ldv, ldw := c.dv+3, c.dv+5, c.nk+2
			acc0, v, w := rnd(4*lda), rnd(c.nk*ldv), rnd(4*ldw)
			// faAccumRows: acc += w·v, and = w·v with zero.
			for _, zero := range []bool{false, true} {
				acc := append([]float32(nil), acc0...)
				faAccumRows(acc, lda, v, ldv, w, ldw, c.nk, c.dv, zero)
				for rr := range 4 {
					for i := range c.dv {
						want := 0.0
						if !zero {
							want = float64(acc0[rr*lda+i])
						}
						for j := range c.nk {
							want += float64(w[rr*ldw+j]) * float64(v[j*ldv+i])
						}
						if got := float64(acc[rr*lda+i]); math.Abs(got-want) > 1e-5 {
							t.Fatalf("faAccumRows nk=%d dv=%d zero=%v: [%d][%d] = %g, want %g", c.nk, c.dv, zero, rr, i, got, want)
						}
					}
				}
			}
			// faAccum with multipliers, f32 and f16-rounded.
			wm := make([]float32, 8*c.nk)
			for j := range c.nk {
				for rr := range 4 {
					wm[8*j+rr] = float32(r.Float64())
					wm[8*j+4+rr] = 1
					if r.IntN(3) == 0 {
						wm[8*j+4+rr] = float32(r.Float64())
					}
				}
			}
			// faAccumH reads v as f16: v rounded, and its f16 bits.
			vr := make([]float32, len(v))
			roundF16Go(vr, v)
			vh := make([]uint16, len(v))
			for i, x := range vr {
				vh[i] = tensor.F32ToF16(x)
			}
			for _, flags := range []int{faMul, faMul | faRound, faRound} {
				for _, half := range []bool{false, true} {
					acc := append([]float32(nil), acc0...)
					want := append([]float32(nil), acc0...)
					roundF16Go(want, want)
					copy(acc, want)
					name := "faAccum"
					if half {
						name = "faAccumH"
						faAccumH(acc, lda, vh, ldv, wm, c.nk, c.dv, flags)
						faAccumGo(want, lda, vr, ldv, wm, c.nk, 0, c.dv, flags)
					} else {
						faAccum(acc, lda, v, ldv, wm, c.nk, c.dv, flags)
						faAccumGo(want, lda, v, ldv, wm, c.nk, 0, c.dv, flags)
					}
					for i := range acc {
						if i%lda >= c.dv {
							continue
						}
						if d := math.Abs(float64(acc[i] - want[i])); d > 1e-3*math.Max(1, math.Abs(float64(want[i]))) {
							t.Fatalf("%s nk=%d dv=%d flags=%d: [%d] = %g, want %g", name, c.nk, c.dv, flags, i, acc[i], want[i])
						}
					}
				}
			}
		}
	})
}

// TestFADecodeQ8_0 checks the q8_0 decoder against tensor's, exactly.
func TestFADecodeQ8_0(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, 32*9)
	for i := range x {
		x[i] = float32(4*r.Float64() - 2)
	}
	raw := tensor.Quantize(nil, tensor.Q8_0, x)
	want := tensor.Dequantize(nil, tensor.Q8_0, raw, len(x))
	atLevels(t, func(t *testing.T) {
		got := make([]float32, len(x))
		decodeQ8_0(got, raw)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("element %d: %g, want %g", i, got[i], want[i])
			}
		}
	})
}

// TestFAScores checks faScores against its loop: the scaled, masked row
// within a rounding of the mask's product, its maximum, -Inf for a row
// the mask hides.
func TestFAScores(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	atLevels(t, func(t *testing.T) {
		for _, n := range []int{0, 5, 8, 64, 61} {
			for _, masked := range []bool{false, true} {
				s := make([]float32, n)
				var m []float32
				for i := range s {
					s[i] = float32(4*r.Float64() - 2)
				}
				if masked {
					m = make([]float32, n)
					for i := range m {
						if r.IntN(2) == 0 {
							m[i] = float32(math.Inf(-1))
						}
					}
				}
				want := append([]float32(nil), s...)
				wmax := faScoresGo(want, m, 0.3, 0.7)
				got := faScores(s, m, 0.3, 0.7)
				if got != wmax {
					t.Errorf("n=%d masked=%v: max %g, want %g", n, masked, got, wmax)
				}
				for i := range s {
					if s[i] != want[i] && math.Abs(float64(s[i]-want[i])) > 1e-6 {
						t.Errorf("n=%d masked=%v: [%d] = %g, want %g", n, masked, i, s[i], want[i])
					}
				}
			}
		}
		s := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}
		m := make([]float32, len(s))
		for i := range m {
			m[i] = float32(math.Inf(-1))
		}
		if got := faScores(s, m, 1, 1); !math.IsInf(float64(got), -1) {
			t.Errorf("a hidden row's maximum is %g, want -Inf", got)
		}
	})
}

// TestFATransposeH8 checks the f16 transpose against the f16 values,
// exactly, at strides wider than the rows.
func TestFATransposeH8(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	atLevels(t, func(t *testing.T) {
		for _, k := range []int{8, 64, 128} {
			lds, ldd := k+3, 8+5
			src := make([]uint16, 8*lds)
			for i := range src {
				src[i] = tensor.F32ToF16(float32(4*r.Float64() - 2))
			}
			dst := make([]float32, (k-1)*ldd+8)
			transposeH8(dst, ldd, src, lds, k)
			for i := range 8 {
				for p := range k {
					if got, want := dst[p*ldd+i], tensor.F16ToF32(src[i*lds+p]); got != want {
						t.Fatalf("k=%d: dst[%d][%d] = %g, want %g", k, p, i, got, want)
					}
				}
			}
		}
	})
}
