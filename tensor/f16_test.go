package tensor_test

import (
	"flag"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/tensor"
)

var exhaustive = flag.Bool("exhaustive", false, "check F32ToF16 on all 2³² inputs (about 20 s)")

// Hashes of x86 F16C results (VCVTPS2PH imm 0 via _cvtss_sh, VCVTPH2PS via
// _cvtsh_ss), recorded with gcc -mf16c on the project's machine: FNV-1a 64
// over the little-endian outputs for the inputs 0, step, 2·step, … < 2³².
const (
	f16cHashStep4099 = 0x006459e8ff99db38
	f16cHashAll      = 0x791e6e12f1610383
	f16cToF32HashAll = 0xf7a0d51a51de0ca3
)

type fnv64 uint64

func newFNV() fnv64 { return 1469598103934665603 }

func (h *fnv64) bytes(v uint64, n int) {
	for i := 0; i < n; i++ {
		*h ^= fnv64(v >> (8 * i) & 0xff)
		*h *= 1099511628211
	}
}

func hashF32ToF16(step uint64) uint64 {
	h := newFNV()
	for i := uint64(0); i < 1<<32; i += step {
		h.bytes(uint64(tensor.F32ToF16(math.Float32frombits(uint32(i)))), 2)
	}
	return uint64(h)
}

func TestF32ToF16MatchesF16C(t *testing.T) {
	if got := hashF32ToF16(4099); got != f16cHashStep4099 {
		t.Errorf("hash of F32ToF16 over every 4099th bit pattern = %#x, F16C gives %#x", got, uint64(f16cHashStep4099))
	}
	if *exhaustive {
		if got := hashF32ToF16(1); got != f16cHashAll {
			t.Errorf("hash of F32ToF16 over all inputs = %#x, F16C gives %#x", got, uint64(f16cHashAll))
		}
	}
}

func TestF16ToF32MatchesF16C(t *testing.T) {
	h := newFNV()
	for i := 0; i < 1<<16; i++ {
		h.bytes(uint64(math.Float32bits(tensor.F16ToF32(uint16(i)))), 4)
	}
	if uint64(h) != f16cToF32HashAll {
		t.Errorf("hash of F16ToF32 over all inputs = %#x, F16C gives %#x", uint64(h), uint64(f16cToF32HashAll))
	}
}

// refF16 rounds f to the nearest binary16 value, ties to even, by comparing
// distances in float64 to the candidates: an implementation independent of
// the bit manipulation under test.
func refF16(f float32) uint16 {
	x := float64(f)
	sign := uint16(0)
	if math.Signbit(x) {
		sign = 0x8000
		x = -x
	}
	if math.IsNaN(x) {
		panic("NaN")
	}
	// candidates: magnitudes 0..0x7bff are monotonic in their bits
	lo, hi := 0, 0x7bff
	for lo < hi { // largest h with value(h) <= x
		mid := (lo + hi + 1) / 2
		if float64(tensor.F16ToF32(uint16(mid))) <= x {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if lo == 0x7bff {
		// above max finite: rounds to Inf at or past 65520 (max + half ulp)
		if x >= 65520 {
			return sign | 0x7c00
		}
		return sign | 0x7bff
	}
	a, b := float64(tensor.F16ToF32(uint16(lo))), float64(tensor.F16ToF32(uint16(lo+1)))
	switch da, db := x-a, b-x; {
	case da < db:
		return sign | uint16(lo)
	case db < da:
		return sign | uint16(lo+1)
	case lo&1 == 0:
		return sign | uint16(lo)
	default:
		return sign | uint16(lo+1)
	}
}

func TestF16RoundTrip(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := tensor.F16ToF32(h)
		if math.IsNaN(float64(f)) {
			if h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
				t.Fatalf("F16ToF32(%#04x) = NaN", h)
			}
			if g := tensor.F32ToF16(f); g != h|0x200 {
				t.Errorf("F32ToF16(F16ToF32(%#04x)) = %#04x, want quieted NaN %#04x", h, g, h|0x200)
			}
			continue
		}
		if g := tensor.F32ToF16(f); g != h {
			t.Errorf("F32ToF16(F16ToF32(%#04x)=%g) = %#04x", h, f, g)
		}
	}
}

func TestF32ToF16Rounding(t *testing.T) {
	check := func(f float32) {
		t.Helper()
		if want, got := refF16(f), tensor.F32ToF16(f); got != want {
			t.Fatalf("F32ToF16(%g = %#08x) = %#04x, want %#04x", f, math.Float32bits(f), got, want)
		}
	}
	// every midpoint between neighbouring binary16 values and the floats
	// just around it, over the whole range including subnormals and the
	// overflow threshold
	for h := 0; h < 0x7c00; h++ {
		a := float64(tensor.F16ToF32(uint16(h)))
		var b float64
		if h == 0x7bff {
			b = 65536 // the next value if the exponent range went on
		} else {
			b = float64(tensor.F16ToF32(uint16(h + 1)))
		}
		mid := float32((a + b) / 2)
		for _, f := range []float32{mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, math.MaxFloat32), float32(a)} {
			check(f)
			check(-f)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		f := math.Float32frombits(r.Uint32())
		if math.IsNaN(float64(f)) {
			continue
		}
		check(f)
	}
	for _, f := range []float32{0, float32(math.Inf(1)), float32(math.Inf(-1)), 65504, 65519.99, 65520, 1e-8, 2.9802322e-08, 2.9802326e-08, 5.960464e-08} {
		check(f)
	}
}
