package cpu

import (
	"math"
	"unsafe"
)

// expConsts are the exponential's table and constants, shared by the Go
// loop and the assembly (which reads them at the offsets checked below).
type expConsts struct {
	tab                                  [16]uint64 // float64 bits of 2^(i/16)
	k16, ln2, shift, one, half, six, tw4 float64
	lo, hi, inf, one32                   float32
}

var expC = expConsts{
	k16: 16 / math.Ln2, ln2: math.Ln2 / 16, shift: 0x1.8p52, // adding shift rounds to an integer held in the low mantissa bits
	one: 1, half: 0.5, six: 1.0 / 6, tw4: 1.0 / 24,
	lo: -104, hi: 89, inf: float32(math.Inf(1)), one32: 1,
}

func init() {
	for i := range expC.tab {
		expC.tab[i] = math.Float64bits(math.Exp2(float64(i) / 16))
	}
	if unsafe.Offsetof(expC.k16) != 128 || unsafe.Offsetof(expC.lo) != 184 || unsafe.Offsetof(expC.one32) != 196 {
		bug("expConsts layout does not match exp_amd64.s")
	}
}

// expRow sets y[i] = e^(s·x[i] - m) (s·x[i] - m evaluated in float32) and
// returns Σ y[i] in float64. y may be x.
//
// Each exponential is within one ulp of the correctly rounded float32 value
// (ggml's vectorized ggml_v_expf is an approximation of the same order), at
// a fraction of math.Exp's cost. It works in float64: v = k·ln2/16 + r with
// |r| ≤ ln2/32, e^v = 2^(k/16)·e^r, 2^(k/16) from a table with k/16's
// integer part added to its exponent and e^r a quartic (error < 5e-11).
// v ≤ -104 gives 0 (below the smallest subnormal), v ≥ 89 +Inf, NaN NaN.
func expRow(y, x []float32, s, m float32) float64 {
	x = x[:len(y)]
	if level == isaAVX512 {
		return expRowAVX512(y, x, s, m, &expC)
	}
	if level == isaAVX2 {
		n := len(y) &^ 7
		return expRowAVX2(y[:n], x[:n], s, m, &expC) + expRowGo(y[n:], x[n:], s, m)
	}
	return expRowGo(y, x, s, m)
}

// expRowGo is expRow's loop; exp_amd64.s computes the same, sixteen at a
// time, and exp_avx2_amd64.s eight at a time (the sum in another order).
func expRowGo(y, x []float32, s, m float32) float64 {
	x = x[:len(y)]
	c := &expC
	var sum float64
	for i, xi := range x {
		v := s*xi - m
		var e float32
		if v > c.lo && v < c.hi {
			xd := float64(v)
			kf := xd*c.k16 + c.shift
			ki := math.Float64bits(kf)
			kf -= c.shift
			r := xd - kf*c.ln2
			p := c.one + r + r*r*(c.half+r*(c.six+r*c.tw4))
			e = float32(p * math.Float64frombits(c.tab[ki&15]+(ki>>4)<<52))
		} else {
			e = expSpecial(v)
		}
		y[i] = e
		sum += float64(e)
	}
	return sum
}

func expSpecial(v float32) float32 {
	switch {
	case v != v:
		return v
	case v > 0:
		return float32(math.Inf(1))
	}
	return 0
}

// siluF32 is d = a/(1+e^-a), ggml_silu_f32; d may be a.
func siluF32(d, a []float32) {
	a = a[:len(d)]
	if level == isaAVX512 {
		siluAVX512(d, a, &expC)
		return
	}
	if level == isaAVX2 {
		n := len(d) &^ 7
		siluAVX2(d[:n], a[:n], &expC)
		d, a = d[n:], a[n:]
	}
	siluGo(d, a)
}

func siluGo(d, a []float32) {
	var e [256]float32
	for len(d) > 0 {
		n := min(len(d), len(e))
		expRowGo(e[:n], a[:n], -1, 0)
		for i, x := range a[:n] {
			d[i] = x / (1 + e[i])
		}
		d, a = d[n:], a[n:]
	}
}

// sigmoidF32 is d = 1/(1+e^-a), ggml_sigmoid_f32; d may be a.
func sigmoidF32(d, a []float32) {
	a = a[:len(d)]
	if level == isaAVX512 {
		sigmoidAVX512(d, a, &expC)
		return
	}
	if level == isaAVX2 {
		n := len(d) &^ 7
		sigmoidAVX2(d[:n], a[:n], &expC)
		d, a = d[n:], a[n:]
	}
	sigmoidGo(d, a)
}

func sigmoidGo(d, a []float32) {
	var e [256]float32
	for len(d) > 0 {
		n := min(len(d), len(e))
		expRowGo(e[:n], a[:n], -1, 0)
		for i := range d[:n] {
			d[i] = 1 / (1 + e[i])
		}
		d, a = d[n:], a[n:]
	}
}
