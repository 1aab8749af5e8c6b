package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSoftMaxShortRows: the one-call kernel for rows of at most 16 elements
// gives, bit for bit, what the row by row path gives (scale, add the mask,
// softMaxRow), causal -Inf masks, whole masked rows and extreme values
// included.
func TestSoftMaxShortRows(t *testing.T) {
	if level != isaAVX512 {
		t.Skip("no AVX-512 on this machine")
	}
	r := rand.New(rand.NewPCG(7, 8))
	for iter := 0; iter < 500; iter++ {
		n, rows := 1+r.IntN(16), 1+r.IntN(6)
		lda, ldd, ldm := n+r.IntN(3), n+r.IntN(3), n+r.IntN(2)
		if iter%5 == 0 {
			ldm = 0
		}
		a := make([]float32, (rows-1)*lda+n)
		m := make([]float32, (rows-1)*ldm+n)
		for i := range a {
			a[i] = float32(r.NormFloat64() * 20)
		}
		for i := range m {
			switch r.IntN(4) {
			case 0:
				m[i] = float32(math.Inf(-1))
			case 1:
				m[i] = float32(r.NormFloat64())
			}
		}
		if iter%7 == 0 {
			a[0] = 1e30 // exp underflows for every other element
		}
		scale := float32(0.1 + r.Float64())
		got := make([]float32, (rows-1)*ldd+n)
		want := make([]float32, len(got))
		softMaxRowsAVX512(got, a, m, rows, ldd, lda, ldm, n, scale, &expC)
		w := make([]float32, n)
		for row := 0; row < rows; row++ {
			scaleF32(w, a[row*lda:row*lda+n], scale)
			addScaledF32(w, m[row*ldm:row*ldm+n], 1)
			softMaxRow(want[row*ldd:row*ldd+n], w)
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
				t.Fatalf("n %d, rows %d: element %d is %v, want %v", n, rows, i, got[i], want[i])
			}
		}
	}
}
