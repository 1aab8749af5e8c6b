package tensor

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// codecBounds are the codecs of quant.go's q4_1/q5_x, kquant.go and
// iquant.go with two error bounds each: worst, the largest error of a
// value over the largest magnitude of its block (of Block values), and
// rmse, the relative RMS error on gaussian values. q4_1, q5_0, q5_1 and
// q8_K's worst are their rounding's (half a step of range/levels; one
// step of amax/16 where q5_0 clips the top level; half of amax/127), plus
// the f16 rounding of scale and min; the searching encoders' are what they
// reach on the inputs here (ggml's own, internal/quanttest checks that),
// with a margin.
var codecBounds = []struct {
	dt          DType
	worst, rmse float64
}{
	{Q4_1, 2.0/15/2*1.01 + 2e-3, 0.085},
	{Q5_0, 1.0/16*1.01 + 1e-3, 0.047},
	{Q5_1, 2.0/31/2*1.01 + 2e-3, 0.042},
	{Q2_K, 0.5, 0.32},
	{Q3_K, 0.3, 0.17},
	{Q4_K, 0.12, 0.08},
	{Q5_K, 0.07, 0.04},
	{Q6_K, 0.03, 0.02},
	{Q8_K, 1.0 / 127 / 2 * 1.001, 0.008},
	{IQ4_NL, 0.15, 0.085},
	{IQ4_XS, 0.15, 0.085},
}

// roundTrip encodes and decodes src with dt, checking the length, that
// every value comes back finite and within worst·amax of its block (plus
// a little, near 0).
func roundTrip(t *testing.T, dt DType, worst float64, src []float32) []float32 {
	t.Helper()
	q := Quantize(nil, dt, src)
	if len(q) != dt.RowSize(len(src)) {
		t.Fatalf("%s: %d bytes for %d values, want %d", dt, len(q), len(src), dt.RowSize(len(src)))
	}
	back := Dequantize(nil, dt, q, len(src))
	if len(back) != len(src) {
		t.Fatalf("%s: %d values back, want %d", dt, len(back), len(src))
	}
	for b := 0; b < len(src); b += dt.BlockSize() {
		amax := 0.0
		for _, v := range src[b : b+dt.BlockSize()] {
			amax = max(amax, math.Abs(float64(v)))
		}
		for i := b; i < b+dt.BlockSize(); i++ {
			if math.IsNaN(float64(back[i])) || math.IsInf(float64(back[i]), 0) {
				t.Fatalf("%s: value %d: %g back as %g", dt, i, src[i], back[i])
			}
			// Near 0, f16 scales have a fixed precision (2⁻²⁵, times at
			// most 32 levels) rather than a relative one.
			if err := math.Abs(float64(back[i] - src[i])); err > worst*amax+0x1p-20 {
				t.Fatalf("%s: value %d: %g back as %g, off by %g > %g·%g (block amax) + 2⁻²⁰", dt, i, src[i], back[i], err, worst, amax)
			}
		}
	}
	return back
}

func TestCodecRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range codecBounds {
		for _, d := range []struct {
			name string
			f    func() float64
		}{
			{"gaussian", r.NormFloat64},
			{"uniform", func() float64 { return 2*r.Float64() - 1 }},
			{"outliers", func() float64 {
				if r.IntN(40) == 0 {
					return r.NormFloat64() * 100
				}
				return r.NormFloat64()
			}},
		} {
			src := make([]float32, 64*256)
			for i := range src {
				src[i] = float32(d.f())
			}
			back := roundTrip(t, c.dt, c.worst, src)
			if d.name != "gaussian" {
				continue
			}
			var se, ss float64
			for i, v := range src {
				se += float64(back[i]-v) * float64(back[i]-v)
				ss += float64(v) * float64(v)
			}
			if rmse := math.Sqrt(se / ss); rmse > c.rmse {
				t.Errorf("%s: relative RMS error %.4f on gaussian values, want at most %.4f", c.dt, rmse, c.rmse)
			}
		}
	}
}

// TestCodecEdgeCases: all-zero, constant, negative-only and
// one-huge-value blocks come back within the bounds; values below f16's
// range (or ggml's GROUP_MAX_EPS) come back finite and no larger.
func TestCodecEdgeCases(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	fill := func(f func(i int) float32) []float32 {
		x := make([]float32, 2*256)
		for i := range x {
			x[i] = f(i)
		}
		return x
	}
	for _, c := range codecBounds {
		for _, e := range []struct {
			name string
			x    []float32
		}{
			{"zeros", fill(func(int) float32 { return 0 })},
			{"constant", fill(func(int) float32 { return 0.75 })},
			{"negative constant", fill(func(int) float32 { return -2 })},
			{"negative", fill(func(int) float32 { return -1 - 2*r.Float32() })},
			{"positive", fill(func(int) float32 { return 1 + 2*r.Float32() })},
			{"one huge", fill(func(i int) float32 {
				if i%256 == 77 {
					return 3e4
				}
				return float32(r.NormFloat64()) * 0.01
			})},
		} {
			back := roundTrip(t, c.dt, c.worst, e.x)
			if e.name == "zeros" {
				for i, v := range back {
					if v != 0 {
						t.Fatalf("%s: zeros: value %d back as %g", c.dt, i, v)
					}
				}
			}
		}
		tiny := fill(func(int) float32 { return float32(r.NormFloat64()) * 1e-20 })
		roundTrip(t, c.dt, 1, tiny)
	}
}

// TestCodecExact: values on a type's grid come back exactly.
func TestCodecExact(t *testing.T) {
	grid := func(n int, f func(i int) float32) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = f(i)
		}
		return x
	}
	for _, c := range []struct {
		dt DType
		x  []float32
	}{
		// d = 0.5, m = -2: both ends of 16 levels in each block.
		{Q4_1, grid(64, func(i int) float32 { return float32(i%16)*0.5 - 2 })},
		// the largest magnitude −4 sets d = 0.25: levels −16…15.
		{Q5_0, grid(64, func(i int) float32 { return float32(i%32-16) * 0.25 })},
		{Q5_1, grid(64, func(i int) float32 { return float32(i%32)*0.125 + 1 })},
		// −127 sets d = 1.
		{Q8_K, grid(512, func(i int) float32 { return float32(i%255 - 127) })},
		// the 16 levels at d = 1/4, each block holding −127 (d's sign).
		{IQ4_NL, grid(64, func(i int) float32 { return float32(kvaluesIQ4NL[i%16]) / 4 })},
	} {
		back := Dequantize(nil, c.dt, Quantize(nil, c.dt, c.x), len(c.x))
		for i, v := range c.x {
			if back[i] != v {
				t.Errorf("%s: value %d: %g back as %g", c.dt, i, v, back[i])
				break
			}
		}
	}
}

// TestQ8_KLayout: q8_K's d is a float32, bsums the sums of qs in 16s.
func TestQ8_KLayout(t *testing.T) {
	src := make([]float32, 256)
	for i := range src {
		src[i] = float32(i%17 - 8)
	}
	src[3] = -127
	q := Quantize(nil, Q8_K, src)
	if d := math.Float32frombits(binary.LittleEndian.Uint32(q)); d != 1 {
		t.Errorf("d = %g, want 1", d)
	}
	for j := range 16 {
		sum := 0
		for _, v := range q[4+16*j : 4+16*j+16] {
			sum += int(int8(v))
		}
		if got := int16(binary.LittleEndian.Uint16(q[4+256+2*j:])); int(got) != sum {
			t.Errorf("bsums[%d] = %d, want %d", j, got, sum)
		}
	}
}

// TestNearestInt: ggml's nearest_int rounds ties to even.
func TestNearestInt(t *testing.T) {
	for _, c := range []struct {
		v    float32
		want int
	}{{0, 0}, {0.5, 0}, {1.5, 2}, {2.5, 2}, {-0.5, 0}, {-1.5, -2}, {-2.5, -2}, {3.49, 3}, {-3.51, -4}, {4194303, 4194303}} {
		if got := nearestInt(c.v); got != c.want {
			t.Errorf("nearestInt(%g) = %d, want %d", c.v, got, c.want)
		}
	}
}

// FuzzQuantize encodes values made of the fuzzer's bytes (int16 mantissas
// times 2^(e−40), within f16's range) with every codec: the bytes come
// back as RowSize bytes and finite values, within the bound for the codecs
// whose bound is their rounding's.
func FuzzQuantize(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte{40, 0xff, 0x7f, 0, 0x80, 1, 0})
	f.Add([]byte{7, 1, 0, 2, 0, 3, 0, 0xfd, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		scale := float32(math.Ldexp(1, int(data[0]%41)-40))
		src := make([]float32, 512)
		for i := 0; i+1 < len(data)-1 && i/2 < len(src); i += 2 {
			src[i/2] = float32(int16(binary.LittleEndian.Uint16(data[1+i:]))) * scale
		}
		for _, c := range codecBounds {
			worst := c.worst
			switch c.dt {
			case Q4_1, Q5_0, Q5_1, Q8_K:
			default:
				worst = math.Inf(1)
			}
			roundTrip(t, c.dt, worst, src)
		}
	})
}
