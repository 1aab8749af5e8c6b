package openblas_test

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/blas/openblas"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// newOrSkip returns a backend, or skips the test with the reason BLAS is
// unavailable (GRAPHC_REQUIRE_BLAS=1 turns that into a failure).
func newOrSkip(t *testing.T) *openblas.Backend {
	t.Helper()
	b, err := openblas.New(2)
	if err != nil {
		if os.Getenv("GRAPHC_REQUIRE_BLAS") == "1" {
			t.Fatal(err)
		}
		t.Skipf("skipping: %v", err)
	}
	t.Logf("blas: %s", openblas.Info())
	return b
}

func random(r *rand.Rand, typ tensor.DType, ne [4]int) tensor.Tensor {
	t := tensor.NewTensor(typ, ne)
	tensor.Fill(&t, func(int, [4]int) float64 { return r.Float64()*2 - 1 })
	return t
}

// TestMulMatMatchesCPU compares BLAS with the CPU backend on f32 and f16
// weights, with broadcasting over dims 2 and 3 and padded rows.
func TestMulMatMatchesCPU(t *testing.T) {
	b := newOrSkip(t)
	c := cpu.New(2)
	defer c.Close()
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		typ   tensor.DType
		a, x  [4]int
		tol   float64
		strid bool
	}{
		{tensor.F32, [4]int{64, 48, 1, 1}, [4]int{64, 40, 1, 1}, 1e-5, false},
		{tensor.F32, [4]int{96, 33, 2, 1}, [4]int{96, 35, 4, 3}, 1e-5, false},
		{tensor.F32, [4]int{64, 48, 1, 1}, [4]int{64, 40, 1, 1}, 1e-5, true},
		// The CPU rounds x to f16 for an f16 a; BLAS does not.
		{tensor.F16, [4]int{128, 64, 1, 1}, [4]int{128, 32, 1, 1}, 2e-2, false},
	} {
		a, x := random(r, tc.typ, tc.a), random(r, tensor.F32, tc.x)
		ne := [4]int{tc.a[1], tc.x[1], tc.x[2], tc.x[3]}
		want, got := tensor.NewTensor(tensor.F32, ne), tensor.NewTensor(tensor.F32, ne)
		if tc.strid { // rows padded by 8 floats
			nb := [4]int{4, 4 * (ne[0] + 8)}
			nb[2], nb[3] = nb[1]*ne[1], nb[1]*ne[1]*ne[2]
			got = tensor.Tensor{Type: tensor.F32, Ne: ne, Nb: nb}
			got.Data = tensor.NewBuffer(got.Span())
		}
		c.MulMat(&want, &a, &x, ops.MulMatParams{})
		b.MulMat(&got, &a, &x, ops.MulMatParams{})
		g := tensor.Clone(&got)
		worst := 0.0
		for i, w := range want.F32s() {
			worst = max(worst, math.Abs(float64(g.F32s()[i]-w)))
		}
		if worst > tc.tol {
			t.Errorf("%s a%v x%v: BLAS differs from the CPU by up to %g (tolerance %g)", tc.typ, tc.a, tc.x, worst, tc.tol)
		}
	}
}
