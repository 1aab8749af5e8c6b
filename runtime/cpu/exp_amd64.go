//go:build !noasm

package cpu

// expRowAVX512 is expRowGo with AVX-512, sixteen values per step:
//
//	var sum float64
//	for i := range y {
//		y[i] = exp(s*x[i] - m) // as expRowGo computes it
//		sum += float64(y[i])
//	}
//	return sum
//
// len(x) >= len(y) is checked by the caller.
//
//go:noescape
func expRowAVX512(y, x []float32, s, m float32, c *expConsts) float64

// siluAVX512 is siluGo with AVX-512:
//
//	for i := range d {
//		d[i] = x[i] / (1 + exp(-x[i]))
//	}
//
//go:noescape
func siluAVX512(d, x []float32, c *expConsts)

// sigmoidAVX512 is sigmoidGo with AVX-512:
//
//	for i := range d {
//		d[i] = 1 / (1 + exp(-x[i]))
//	}
//
//go:noescape
func sigmoidAVX512(d, x []float32, c *expConsts)

// expRowAVX2 is expRowAVX512 at the avx2 level, eight values per step,
// for len(y) a multiple of 8 (the caller runs the rest with expRowGo).
//
//go:noescape
func expRowAVX2(y, x []float32, s, m float32, c *expConsts) float64

// siluAVX2 is siluAVX512 at the avx2 level, for len(d) a multiple of 8.
//
//go:noescape
func siluAVX2(d, x []float32, c *expConsts)

// sigmoidAVX2 is sigmoidAVX512 at the avx2 level, for len(d) a multiple
// of 8.
//
//go:noescape
func sigmoidAVX2(d, x []float32, c *expConsts)

// softMaxRowsAVX512 is softMaxTask's row with slope 1 for rows rows of
// n ≤ 16 elements, ldd, lda and ldm apart (ldm 0: one mask row):
//
//	for r := 0; r < rows; r++ {
//		w := a[r*lda:][:n] · scale + m[r*ldm:][:n]
//		softMaxRow(d[r*ldd:][:n], w)
//	}
//
// The same operations in the same order. The caller checks the bounds.
//
//go:noescape
func softMaxRowsAVX512(d, a, m []float32, rows, ldd, lda, ldm, n int, scale float32, c *expConsts)
