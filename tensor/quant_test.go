package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestQuantizeRoundTrip checks each type's reconstruction error against
// its step: q8_0 within half a step (amax/127/2), q4_0 within one step of
// amax/8, halves within their relative precision.
func TestQuantizeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, 32*64)
	for i := range src {
		src[i] = float32(r.NormFloat64()) * float32(1+i%7)
	}
	src[5] = 0
	for _, dt := range []DType{F32, F16, BF16, Q8_0, Q4_0} {
		q := Quantize(nil, dt, src)
		if len(q) != dt.RowSize(len(src)) {
			t.Fatalf("%s: %d bytes, want %d", dt, len(q), dt.RowSize(len(src)))
		}
		back := Dequantize(nil, dt, q, len(src))
		for b := 0; b < len(src); b += 32 {
			amax := 0.0
			for _, v := range src[b : b+32] {
				amax = max(amax, math.Abs(float64(v)))
			}
			for i := b; i < b+32; i++ {
				err := math.Abs(float64(back[i] - src[i]))
				var tol float64
				switch dt {
				case F32:
					tol = 0
				case F16:
					tol = math.Abs(float64(src[i])) / 1024
				case BF16:
					tol = math.Abs(float64(src[i])) / 128
				case Q8_0:
					tol = amax/127/2*1.01 + amax*1e-3 // plus the f16 rounding of the scale
				case Q4_0:
					tol = amax/8*1.01 + amax*1e-3
				}
				if err > tol {
					t.Fatalf("%s: element %d: %g back as %g (tolerance %g)", dt, i, src[i], back[i], tol)
				}
			}
		}
	}
}

func TestQ8_0Layout(t *testing.T) {
	src := make([]float32, 32)
	for i := range src {
		src[i] = float32(i - 16)
	}
	q := Quantize(nil, Q8_0, src)
	// amax 16: d = 16/127, and -16 maps to -127 exactly.
	if F16ToF32(uint16(q[0])|uint16(q[1])<<8) != F16ToF32(F32ToF16(16.0/127)) || int8(q[2]) != -127 || int8(q[2+16]) != 0 {
		t.Errorf("block % x", q[:4])
	}
	q4 := Quantize(nil, Q4_0, src)
	// max-magnitude value -16: d = -16/-8 = 2, x = -16 -> -8 -> nibble 0.
	if F16ToF32(uint16(q4[0])|uint16(q4[1])<<8) != 2 || q4[2]&15 != 0 {
		t.Errorf("q4_0 block % x", q4[:4])
	}
}

func TestBF16(t *testing.T) {
	for _, tc := range []struct {
		f    float32
		want uint16
	}{{1, 0x3f80}, {-2, 0xc000}, {float32(math.Inf(1)), 0x7f80}, {1.00390625, 0x3f80}, {1.01171875, 0x3f82}} {
		if got := F32ToBF16(tc.f); got != tc.want {
			t.Errorf("F32ToBF16(%g) = %#x, want %#x", tc.f, got, tc.want)
		}
	}
	if !math.IsNaN(float64(BF16ToF32(F32ToBF16(float32(math.NaN()))))) {
		t.Error("NaN")
	}
}
