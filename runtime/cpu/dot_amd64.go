//go:build !noasm

package cpu

// dotF32AVX512 is Σ a[k]·x[k], k < len(x) (len(a) >= len(x)):
//
//	var s float32
//	for k := range x {
//		s += a[k] * x[k]
//	}
//	return s
//
// The products are fused, the sum order differs; the caller checks the bounds.
//
//go:noescape
func dotF32AVX512(a, x []float32) float32

// dotF32AVX2 is dotF32AVX512 with AVX2; len(x) is a multiple of 8.
//
//go:noescape
func dotF32AVX2(a, x []float32) float32

// dot4x1F32AVX512 is the dots of four rows a[i·lda:], i < 4, with x:
//
//	for i := range c {
//		var s float32
//		for k := range x {
//			s += a[i*lda+k] * x[k]
//		}
//		c[i] = s
//	}
//
// The products are fused, the sum order differs; the caller checks the bounds.
//
//go:noescape
func dot4x1F32AVX512(a []float32, lda int, x []float32, c *[4]float32)

// dot4x1F32AVX2 is dot4x1F32AVX512 with AVX2; len(x) is a multiple of 8.
//
//go:noescape
func dot4x1F32AVX2(a []float32, lda int, x []float32, c *[4]float32)

// dot4x4F32AVX512 is a 4×4 block of dots, column by column:
//
//	for j := 0; j < 4; j++ {
//		for i := 0; i < 4; i++ {
//			var s float32
//			for p := 0; p < k; p++ {
//				s += a[i*lda+p] * x[j*ldx+p]
//			}
//			c[j*ldc+i] = s
//		}
//	}
//
// The products are fused, the sum order differs; the caller checks the bounds.
//
//go:noescape
func dot4x4F32AVX512(a []float32, lda int, x []float32, ldx, k int, c []float32, ldc int)

// dot4x4F16AVX512 is dot4x4F32AVX512 for four f16 rows of a, converted
// to float32 as they are loaded (the same sums in the same order as
// converting the rows first). The caller checks the bounds.
//
//go:noescape
func dot4x4F16AVX512(a []uint16, lda int, x []float32, ldx, k int, c []float32, ldc int)

// dot4x4F32AVX2 is dot4x4F32AVX512 with AVX2; k is a multiple of 8.
//
//go:noescape
func dot4x4F32AVX2(a []float32, lda int, x []float32, ldx, k int, c []float32, ldc int)

// dot4x4F16AVX2 is dot4x4F16AVX512 with AVX2; k is a multiple of 8.
//
//go:noescape
func dot4x4F16AVX2(a []uint16, lda int, x []float32, ldx, k int, c []float32, ldc int)

// dotF16AVX512 is Σ f32(a[k])·x[k], k < len(x):
//
//	var s float32
//	for k := range x {
//		s += f16Table[a[k]] * x[k]
//	}
//	return s
//
// The products are fused, the sum order differs; the caller checks the bounds.
//
//go:noescape
func dotF16AVX512(a []uint16, x []float32) float32

// dotF16AVX2 is dotF16AVX512 with AVX2; len(x) is a multiple of 8.
//
//go:noescape
func dotF16AVX2(a []uint16, x []float32) float32

// dot4x1F16AVX512 is the dots of four f16 rows a[i·lda:], i < 4, with x:
//
//	for i := range c {
//		var s float32
//		for k := range x {
//			s += f16Table[a[i*lda+k]] * x[k]
//		}
//		c[i] = s
//	}
//
// The products are fused, the sum order differs; the caller checks the bounds.
//
//go:noescape
func dot4x1F16AVX512(a []uint16, lda int, x []float32, c *[4]float32)

// dot4x1F16AVX2 is dot4x1F16AVX512 with AVX2; len(x) is a multiple of 8.
//
//go:noescape
func dot4x1F16AVX2(a []uint16, lda int, x []float32, c *[4]float32)

// dotPanelF32AVX512 is dot4x4F32AVX512 for m rows (m a multiple of 4):
//
//	for i0 := 0; i0 < m; i0 += 4 {
//		dot4x4F32AVX512(a[i0*lda:], lda, x, ldx, k, c[i0:], ldc)
//	}
//
//go:noescape
func dotPanelF32AVX512(m int, a []float32, lda int, x []float32, ldx, k int, c []float32, ldc int)

// dotBF16AVX512 is the dot of the bf16 values a and x (little-endian, two
// bytes each; len(a) a multiple of 64, x at least as long):
//
//	for i := 0; i < len(a); i += 2 {
//		s += bf16(a[i:]) * bf16(x[i:])
//	}
//
// The products are fused, the sum order differs; the caller checks the bounds.
//
//go:noescape
func dotBF16AVX512(a, x []byte) float32

// dotBF16AVX2 is dotBF16AVX512 with AVX2; len(a) is a multiple of 32.
//
//go:noescape
func dotBF16AVX2(a, x []byte) float32
