package cpu

import (
	"github.com/graphc/graphc/tensor"
)

// Row conversions between f16 and float32 (ggml_fp16_to_fp32_row,
// ggml_fp32_to_fp16_row): F16C's VCVTPH2PS / VCVTPS2PH (round to nearest
// even) on amd64, the exact Go conversions elsewhere. Both give identical
// bits, NaNs included (see tensor.F16ToF32).

// f16ToF32Row sets d[i] to the float32 value of s[i], i < len(d).
func f16ToF32Row(d []float32, s []uint16) {
	s = s[:len(d)]
	switch level {
	case isaAVX512:
		f16ToF32AVX512(d, s)
		return
	case isaAVX2:
		n := len(d) &^ 7
		f16ToF32AVX2(d[:n], s[:n])
		d, s = d[n:], s[n:]
	}
	f16ToF32Go(d, s)
}

func f16ToF32Go(d []float32, s []uint16) {
	s = s[:len(d)]
	tab := &f16Table
	for i, h := range s {
		d[i] = tab[h]
	}
}

// f32ToF16Row sets d[i] to s[i] rounded to the nearest f16, i < len(d).
func f32ToF16Row(d []uint16, s []float32) {
	s = s[:len(d)]
	switch level {
	case isaAVX512:
		f32ToF16AVX512(d, s)
		return
	case isaAVX2:
		n := len(d) &^ 7
		f32ToF16AVX2(d[:n], s[:n])
		d, s = d[n:], s[n:]
	}
	f32ToF16Go(d, s)
}

func f32ToF16Go(d []uint16, s []float32) {
	s = s[:len(d)]
	for i, v := range s {
		d[i] = tensor.F32ToF16(v)
	}
}

// roundF16Row sets d[i] to s[i] rounded to the nearest f16 value (ggml's
// conversion of src1 to vec_dot_type f16, seen as float32); d may be s.
func roundF16Row(d, s []float32) {
	s = s[:len(d)]
	switch level {
	case isaAVX512:
		roundF16AVX512(d, s)
		return
	case isaAVX2:
		n := len(d) &^ 7
		roundF16AVX2(d[:n], s[:n])
		d, s = d[n:], s[n:]
	}
	roundF16Go(d, s)
}

func roundF16Go(d, s []float32) {
	s = s[:len(d)]
	tab := &f16Table
	for i, v := range s {
		d[i] = tab[tensor.F32ToF16(v)]
	}
}
