package cpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/tensor"
)

// TestMulMats checks that MulMats equals one MulMat per product bit for
// bit, on every ISA and thread count: packed groups of one type (rows not
// a multiple of the 16-row groups; a strided dst; q4_K and q6_K, whose
// dense results the kernels write in place), and the cases that fall
// back to one MulMat each (mixed types, an unpacked weight, several
// columns); and that the products agree with those of the weights as
// loaded (MulMat of one column takes the same packed path, so only that
// catches a wrong in-place kernel).
func TestMulMats(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		forBackends(t, func(t *testing.T, b *cpu.Backend, r *rand.Rand) {
			weight := func(dt tensor.DType, k, m int, pack bool) *tensor.Tensor {
				vals := make([]float32, k*m)
				for i := range vals {
					vals[i] = r.Float32()*2 - 1
				}
				ne := [4]int{k, m, 1, 1}
				w := &tensor.Tensor{Type: dt, Ne: ne, Nb: tensor.ContiguousStrides(dt, ne), Data: tensor.Quantize(nil, dt, vals)}
				if pack {
					if err := b.Pack(w, false); err != nil {
						t.Fatal(err)
					}
				}
				return w
			}
			for _, c := range []struct {
				name  string
				types []tensor.DType
				rows  []int
				pack  []bool
				n     int
				k     int
			}{
				{"q4_K qkv", []tensor.DType{tensor.Q4_K, tensor.Q4_K, tensor.Q4_K}, []int{40, 24, 24}, []bool{true, true, true}, 1, 512},
				{"q6_K gate up", []tensor.DType{tensor.Q6_K, tensor.Q6_K}, []int{77, 77}, []bool{true, true}, 1, 256},
				{"q4_0 qkv", []tensor.DType{tensor.Q4_0, tensor.Q4_0, tensor.Q4_0}, []int{40, 24, 24}, []bool{true, true, true}, 1, 96},
				{"q8_0 gate up", []tensor.DType{tensor.Q8_0, tensor.Q8_0}, []int{77, 77}, []bool{true, true}, 1, 96},
				{"mixed types", []tensor.DType{tensor.Q4_0, tensor.Q8_0}, []int{32, 32}, []bool{true, true}, 1, 96},
				{"one unpacked", []tensor.DType{tensor.Q4_0, tensor.Q4_0}, []int{32, 48}, []bool{true, false}, 1, 96},
				{"three columns", []tensor.DType{tensor.Q8_0, tensor.Q8_0}, []int{16, 33}, []bool{true, true}, 3, 96},
			} {
				x := tensor.NewTensor(tensor.F32, [4]int{c.k, c.n, 1, 1})
				for i := range x.F32s() {
					x.F32s()[i] = r.Float32()*2 - 1
				}
				var ps []engine.Product
				var want [][]float32
				for i, dt := range c.types {
					w := weight(dt, c.k, c.rows[i], c.pack[i])
					ref := tensor.NewTensor(tensor.F32, [4]int{c.rows[i], c.n, 1, 1})
					b.MulMat(&ref, w, &x, ops.MulMatParams{})
					want = append(want, slices.Clone(ref.F32s()))
					// The packed kernels against the rows kernels on the
					// weight as loaded (a copy of its data: not packed), in
					// another order: a sum's rounding apart.
					plain := *w
					plain.Data = slices.Clone(w.Data)
					b.MulMat(&ref, &plain, &x, ops.MulMatParams{})
					for j, v := range ref.F32s() {
						if d := math.Abs(float64(v - want[i][j])); d > 1e-5*(1+math.Abs(float64(v))) {
							t.Errorf("%s: product %d, value %d: MulMat %g, on the weight as loaded %g", c.name, i, j, want[i][j], v)
						}
					}
					dst := tensor.NewTensor(tensor.F32, [4]int{c.rows[i], c.n, 1, 1})
					if i == 1 && c.n == 1 { // a strided dst: every other float
						dst = tensor.Tensor{Type: tensor.F32, Ne: dst.Ne, Nb: [4]int{8, 8 * c.rows[i], 8 * c.rows[i], 8 * c.rows[i]}, Data: make([]byte, 8*c.rows[i])}
					}
					ps = append(ps, engine.Product{Dst: &dst, W: w})
				}
				b.MulMats(&x, ps...)
				for i, p := range ps {
					got := make([]float32, p.Dst.NElem())
					for j := range got {
						row, col := j%p.Dst.Ne[0], j/p.Dst.Ne[0]
						got[j] = p.Dst.F32s()[(row*p.Dst.Nb[0]+col*p.Dst.Nb[1])/4]
					}
					if fmt.Sprint(got) != fmt.Sprint(want[i]) {
						t.Errorf("%s: product %d: MulMats %v, MulMat %v", c.name, i, got, want[i])
					}
				}
			}
		})
	})
}
