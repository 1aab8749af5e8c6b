package cpu

import "math"

// exp2Table[i] is the float64 bits of 2^(i/64).
var exp2Table = func() (t [64]uint64) {
	for i := range t {
		t[i] = math.Float64bits(math.Exp2(float64(i) / 64))
	}
	return
}()

// expRow sets y[i] = e^(s·x[i] - m) (s·x[i] - m evaluated in float32) and
// returns Σ y[i] in float64. y may be x.
//
// Each exponential is within one ulp of the correctly rounded float32 value
// (ggml's vectorized ggml_v_expf is an approximation of the same order), at
// about twice the speed of math.Exp. It works in float64: v = k·ln2/64 + r
// with |r| ≤ ln2/128, e^v = 2^(k/64)·e^r, 2^(k/64) from a table with k/64's
// integer part added to its exponent and e^r a cubic (error < 4e-11).
// v ≤ -104 gives 0 (below the smallest subnormal), v ≥ 89 +Inf, NaN NaN.
func expRow(y, x []float32, s, m float32) float64 {
	const (
		k64   = 64 / math.Ln2
		ln2   = math.Ln2 / 64
		shift = 0x1.8p52 // adding it rounds to an integer held in the low mantissa bits
	)
	x = x[:len(y)]
	tab := &exp2Table
	var sum float64
	for i, xi := range x {
		v := s*xi - m
		var e float32
		if v > -104 && v < 89 {
			xd := float64(v)
			kf := xd*k64 + shift
			ki := math.Float64bits(kf)
			kf -= shift
			r := xd - kf*ln2
			p := 1 + r + r*r*(0.5+r*(1.0/6))
			e = float32(p * math.Float64frombits(tab[ki&63]+(ki>>6)<<52))
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
