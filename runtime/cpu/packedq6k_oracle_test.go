//go:build linux && amd64

package cpu_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// TestGGMLMulMatPackedK is TestGGMLMulMat for the packed K-quants: MulMat
// with Pack's copy of a q4_K or q6_K weight, one, three and nine columns
// (each kernel: one column, a panel of four, one of eight), against ggml's
// vec_dot of each weight row with each column converted by from_float.
func TestGGMLMulMatPackedK(t *testing.T) {
	o := needOracle(t)
	const k, m = 1024, 40
	r := rand.New(rand.NewPCG(37, 38))
	w := make([]float32, k*m)
	for i := range w {
		w[i] = float32(r.NormFloat64())
	}
	v := o.variants[len(o.variants)-1]
	forISAs(t, func(t *testing.T) {
		for _, dt := range []tensor.DType{tensor.Q4_K, tensor.Q6_K} {
			ne := [4]int{k, m, 1, 1}
			a := tensor.Tensor{Type: dt, Ne: ne, Nb: tensor.ContiguousStrides(dt, ne), Data: o.quantize(dt, w, m)}
			for _, n := range []int{1, 3, 9} {
				x := tensor.NewTensor(tensor.F32, [4]int{k, n, 1, 1})
				for j := 0; j < n; j++ {
					copy(x.F32s()[j*k:], oracleRow(r, k))
				}
				be := cpu.New(2)
				if err := be.Pack(&a, false); err != nil {
					t.Fatal(err)
				}
				dst := tensor.NewTensor(tensor.F32, [4]int{m, n, 1, 1})
				be.MulMat(&dst, &a, &x, ops.MulMatParams{})
				be.Close()
				for j := 0; j < n; j++ {
					xf := x.F32s()[j*k : (j+1)*k]
					xq := v.fromFloat(cpu.VecDotType(dt), xf)
					for i := 0; i < m; i++ {
						want := v.vecDot(dt, a.Data[i*dt.RowSize(k):(i+1)*dt.RowSize(k)], xq, k)
						got := dst.F32s()[j*m+i]
						if mag := rowMagnitude(w[i*k:(i+1)*k], xf); math.Abs(float64(got)-float64(want)) > 1e-6*mag || math.IsNaN(float64(got)) {
							t.Errorf("%v n=%d: dst[%d,%d] = %g, ggml %s %g", dt, n, i, j, got, v.name, want)
						}
					}
				}
			}
		}
	})
}
