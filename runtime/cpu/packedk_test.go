package cpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// TestMulMatPackedQ4_K checks MulMat with packed q4_K weights against
// MulMat with the weights as they are (ggml's q4_K·q8_K dot per column)
// at every level: the integer sums of each block are exact in both, so
// they differ by the float32 rounding of the scaled block terms and their
// sum only, within 1e-5 relative to the row's magnitude (Σ|w·x| over the
// dequantized values). The Go loops add the same terms in the same order:
// at the go level, the same bits.
func TestMulMatPackedQ4_K(t *testing.T) {
	for _, isa := range cpu.ISAs() {
		t.Run(isa, func(t *testing.T) {
			defer cpu.UseISA(isa)()
			r := rand.New(rand.NewPCG(7, 8))
			for _, c := range []struct{ threads, k, m, n, ne2 int }{
				{1, 256, 16, 1, 1},
				{2, 512, 37, 1, 1},
				{1, 256 * 3, 50, 8, 1},
				{2, 256 * 2, 33, 9, 2},
				{2, 256 * 4, 100, 17, 1},
				{1, 256, 70, 3, 1},
			} {
				name := fmt.Sprintf("%+v", c)
				vals := make([]float32, c.k*c.m)
				for i := range vals {
					vals[i] = float32(r.NormFloat64())
				}
				ne := [4]int{c.k, c.m, 1, 1}
				a := tensor.Tensor{Type: tensor.Q4_K, Ne: ne, Nb: tensor.ContiguousStrides(tensor.Q4_K, ne), Data: tensor.Quantize(nil, tensor.Q4_K, vals)}
				x := tensor.NewTensor(tensor.F32, [4]int{c.k, c.n, c.ne2, 1})
				for i := range x.F32s() {
					x.F32s()[i] = float32(r.NormFloat64())
				}
				want := tensor.NewTensor(tensor.F32, [4]int{c.m, c.n, c.ne2, 1})
				be := cpu.New(c.threads)
				be.MulMat(&want, &a, &x, ops.MulMatParams{})
				be.Close()
				got := tensor.NewTensor(tensor.F32, [4]int{c.m, c.n, c.ne2, 1})
				be = cpu.New(c.threads)
				if err := be.Pack(&a); err != nil {
					t.Fatal(err)
				}
				be.MulMat(&got, &a, &x, ops.MulMatParams{})
				be.Close()

				aw := tensor.Dequantize(nil, tensor.Q4_K, a.Data, c.k*c.m)
				for b := 0; b < c.n*c.ne2; b++ {
					xr := x.F32s()[b*c.k : (b+1)*c.k]
					xq := tensor.Dequantize(nil, tensor.Q8_K, tensor.Quantize(nil, tensor.Q8_K, xr), c.k)
					for i := 0; i < c.m; i++ {
						var mag float64
						for j := 0; j < c.k; j++ {
							mag += math.Abs(float64(aw[i*c.k+j]) * float64(xq[j]))
						}
						g, w := got.F32s()[b*c.m+i], want.F32s()[b*c.m+i]
						if isa == "go" && g != w || math.Abs(float64(g)-float64(w)) > 1e-5*mag {
							t.Fatalf("%s: dst[%d, %d] = %g, want %g", name, i, b, g, w)
						}
					}
				}
			}
		})
	}
}
