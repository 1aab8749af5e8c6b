package tensor

import "math"

// F32ToF16 converts f to IEEE 754 binary16 with round-to-nearest-even, the
// rounding of ggml_fp32_to_fp16 and of x86 F16C (VCVTPS2PH with rounding
// control 0). Values that round past 65504 become ±Inf, values at or below
// half the smallest subnormal (2⁻²⁵) become ±0. A NaN stays a NaN: it keeps
// its sign and the top 9 bits of its payload and gets the quiet bit, as
// VCVTPS2PH does.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man == 0 {
			return sign | 0x7c00
		}
		return sign | 0x7e00 | uint16(man>>13)
	}
	e := exp - 127 + 15 // biased binary16 exponent
	switch {
	case e >= 0x1f:
		return sign | 0x7c00
	case e <= 0:
		// binary16 subnormal: the value in units of 2⁻²⁴ is m·2^(e-14).
		if e < -10 {
			return sign
		}
		m := man | 0x800000
		shift := uint(14 - e)
		r := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || rem == half && r&1 == 1 {
			r++ // may carry into the smallest normal, which is the right encoding
		}
		return sign | uint16(r)
	}
	r := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || rem == 0x1000 && r&1 == 1 {
		r++ // a carry out of the mantissa bumps the exponent, up to Inf
	}
	return sign | uint16(r)
}

// F16ToF32 converts an IEEE 754 binary16 value to float32. The conversion is
// exact; a NaN keeps its sign and payload and gets the quiet bit, as x86 F16C
// (VCVTPH2PS) does.
func F16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch exp {
	case 0x1f:
		if man != 0 {
			man |= 0x200
		}
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case 0:
		if man == 0 {
			return math.Float32frombits(sign)
		}
		// subnormal: man·2⁻²⁴, exact in float32
		v := float32(man) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+(127-15))<<23 | man<<13)
}
