//go:build !amd64 || noasm

package cpu

// The Go bodies of dot_amd64.go's kernels: this build has no assembly, so
// they are the reference loops and only tests reach them (level is isaGo).

func dotF32AVX512(a, x []float32) float32 {
	return dotF32Go(a, x)
}

func dotF32AVX2(a, x []float32) float32 {
	return dotF32Go(a, x)
}

func dot4x1F32AVX512(a []float32, lda int, x []float32, c *[4]float32) {
	*c = dot4x1F32Go(a, lda, x)
}

func dot4x1F32AVX2(a []float32, lda int, x []float32, c *[4]float32) {
	*c = dot4x1F32Go(a, lda, x)
}

func dot4x4F32AVX512(a []float32, lda int, x []float32, ldx, k int, c []float32, ldc int) {
	dot4x4F32Go(a, lda, x, ldx, k, c, ldc)
}

func dot4x4F16AVX512(a []uint16, lda int, x []float32, ldx, k int, c []float32, ldc int) {
	var rows [4][]float32
	for i := range rows {
		rows[i] = make([]float32, k)
		f16ToF32Row(rows[i], a[i*lda:i*lda+k])
	}
	dot4x4F32Go(append(append(append(rows[0], rows[1]...), rows[2]...), rows[3]...), k, x, ldx, k, c, ldc)
}

func dot4x4F32AVX2(a []float32, lda int, x []float32, ldx, k int, c []float32, ldc int) {
	dot4x4F32Go(a, lda, x, ldx, k, c, ldc)
}

func dot4x4F16AVX2(a []uint16, lda int, x []float32, ldx, k int, c []float32, ldc int) {
	dot4x4F16AVX512(a, lda, x, ldx, k, c, ldc)
}

func dotF16AVX512(a []uint16, x []float32) float32 {
	return dotF16Go(a, x)
}

func dotF16AVX2(a []uint16, x []float32) float32 {
	return dotF16Go(a, x)
}

func dot4x1F16AVX512(a []uint16, lda int, x []float32, c *[4]float32) {
	*c = dot4x1F16Go(a, lda, x)
}

func dot4x1F16AVX2(a []uint16, lda int, x []float32, c *[4]float32) {
	*c = dot4x1F16Go(a, lda, x)
}
func dotPanelF32AVX512(m int, a []float32, lda int, x []float32, ldx, k int, c []float32, ldc int) {
	dotPanelF32Go(m, a, lda, x, ldx, k, c, ldc)
}

func dotBF16AVX512(a, x []byte) float32 { return dotBF16Go(a, x, len(a)/2) }

func dotBF16AVX2(a, x []byte) float32 { return dotBF16Go(a, x, len(a)/2) }
