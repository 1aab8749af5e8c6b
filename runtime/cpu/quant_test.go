package cpu_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// TestMulMatBlocks checks quantized and bf16 weights against a float64
// reference that follows ggml's recipe: x rounded to the weight type's
// vec_dot_type, exact products of the stored values. The only difference
// left is float32 accumulation: 1e-5 relative to the row's magnitude.
func TestMulMatBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, dt := range []tensor.DType{tensor.Q8_0, tensor.Q4_0, tensor.BF16} {
		for _, c := range []struct {
			threads, k int
			strided    bool
		}{{1, 64, false}, {2, 64, false}, {1, 32 * 37, true}, {2, 32 * 37, false}} {
			// 37 blocks: the assembly's groups of 8 and a tail; strided:
			// x's columns not contiguous (the transpose of a dense x).
			threads, k, m, n, ne2 := c.threads, c.k, 37, 5, 2
			vals := make([]float32, k*m)
			for i := range vals {
				vals[i] = float32(r.NormFloat64())
			}
			a := tensor.Tensor{Type: dt, Ne: [4]int{k, m, 1, 1}, Nb: tensor.ContiguousStrides(dt, [4]int{k, m, 1, 1}), Data: tensor.Quantize(nil, dt, vals)}
			x := tensor.NewTensor(tensor.F32, [4]int{k, n, ne2, 1})
			if c.strided {
				x.Nb = [4]int{4 * n, 4, 4 * n * k, 4 * n * k * ne2}
			}
			for i := range x.F32s() {
				x.F32s()[i] = float32(r.NormFloat64())
			}
			dst := tensor.NewTensor(tensor.F32, [4]int{m, n, ne2, 1})
			be := cpu.New(threads)
			be.MulMat(&dst, &a, &x, ops.MulMatParams{})
			be.Close()

			aw := tensor.Dequantize(nil, dt, a.Data, k*m)
			dot := tensor.Q8_0
			if dt == tensor.BF16 {
				dot = tensor.BF16
			}
			for b := 0; b < n*ne2; b++ {
				xr := make([]float32, k)
				for j := range xr {
					xr[j] = x.F32s()[(j*x.Nb[0]+(b%n)*x.Nb[1]+(b/n)*x.Nb[2])/4]
				}
				// Rounded like ggml's activations (q8_0 rounds half to
				// even there; ties are measure-zero for random data).
				xq := tensor.Dequantize(nil, dot, tensor.Quantize(nil, dot, xr), k)
				for i := 0; i < m; i++ {
					var want, mag float64
					for j := 0; j < k; j++ {
						p := float64(aw[i*k+j]) * float64(xq[j])
						want += p
						mag += math.Abs(p)
					}
					got := float64(dst.F32s()[b*m+i])
					if math.Abs(got-want) > 1e-5*mag {
						t.Fatalf("%s, %d threads: dst[%d, %d] = %g, want %g", dt, threads, i, b, got, want)
					}
				}
			}
		}
	}
}

func TestGetRowsBlocks(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Q8_0, tensor.Q4_0, tensor.BF16} {
		vals := make([]float32, 64*10)
		for i := range vals {
			vals[i] = float32(math.Sin(float64(i)))
		}
		table := tensor.Tensor{Type: dt, Ne: [4]int{64, 10, 1, 1}, Nb: tensor.ContiguousStrides(dt, [4]int{64, 10, 1, 1}), Data: tensor.Quantize(nil, dt, vals)}
		idx := tensor.NewTensor(tensor.I32, [4]int{3, 1, 1, 1})
		copy(idx.I32s(), []int32{7, 0, 7})
		dst := tensor.NewTensor(tensor.F32, [4]int{64, 3, 1, 1})
		be := cpu.New(1)
		be.GetRows(&dst, &table, &idx)
		be.Close()
		rows := tensor.Dequantize(nil, dt, table.Data, 64*10)
		for r, want := range []int{7, 0, 7} {
			for j := 0; j < 64; j++ {
				if dst.F32s()[r*64+j] != rows[want*64+j] {
					t.Fatalf("%s: row %d element %d = %g, want %g", dt, r, j, dst.F32s()[r*64+j], rows[want*64+j])
				}
			}
		}
	}
}
