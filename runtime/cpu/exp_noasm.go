//go:build !amd64 || noasm

package cpu

// The Go bodies of exp_amd64.go's kernels, reached only from tests here.

func expRowAVX512(y, x []float32, s, m float32, _ *expConsts) float64 { return expRowGo(y, x, s, m) }

func siluAVX512(d, x []float32, _ *expConsts) { siluGo(d, x) }

func sigmoidAVX512(d, x []float32, _ *expConsts) { sigmoidGo(d, x) }

func expRowAVX2(y, x []float32, s, m float32, _ *expConsts) float64 { return expRowGo(y, x, s, m) }

func siluAVX2(d, x []float32, _ *expConsts) { siluGo(d, x) }

func sigmoidAVX2(d, x []float32, _ *expConsts) { sigmoidGo(d, x) }

func softMaxRowsAVX512(d, a, m []float32, rows, ldd, lda, ldm, n int, scale float32, _ *expConsts) {
	w := make([]float32, n)
	for r := 0; r < rows; r++ {
		scaleF32(w, a[r*lda:r*lda+n], scale)
		addScaledF32(w, m[r*ldm:r*ldm+n], 1)
		softMaxRow(d[r*ldd:r*ldd+n], w)
	}
}
