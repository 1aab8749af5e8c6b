//go:build !noasm

package cpu

// The F16C conversion loops of f16.go; len(s) >= len(d) is checked by the
// callers.

// f16ToF32AVX512 is f16ToF32Row's AVX-512 loop:
//
//	for i := range d {
//		d[i] = tensor.F16ToF32(s[i])
//	}
//
//go:noescape
func f16ToF32AVX512(d []float32, s []uint16)

// f16ToF32AVX2 is f16ToF32AVX512 with AVX2; len(d) is a multiple of 8.
//
//go:noescape
func f16ToF32AVX2(d []float32, s []uint16)

// f32ToF16AVX512 is f32ToF16Row's AVX-512 loop (round to nearest even):
//
//	for i := range d {
//		d[i] = tensor.F32ToF16(s[i])
//	}
//
//go:noescape
func f32ToF16AVX512(d []uint16, s []float32)

// f32ToF16AVX2 is f32ToF16AVX512 with AVX2; len(d) is a multiple of 8.
//
//go:noescape
func f32ToF16AVX2(d []uint16, s []float32)

// roundF16AVX512 is roundF16Row's AVX-512 loop:
//
//	for i := range d {
//		d[i] = tensor.F16ToF32(tensor.F32ToF16(s[i]))
//	}
//
//go:noescape
func roundF16AVX512(d, s []float32)

// roundF16AVX2 is roundF16AVX512 with AVX2; len(d) is a multiple of 8.
//
//go:noescape
func roundF16AVX2(d, s []float32)
