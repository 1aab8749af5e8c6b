package cpu_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// rowsOf calls f for every row of a tensor of shape ne with the row's
// indices and the flat index of its first element.
func rowsOf(ne [4]int, f func(i1, i2, i3, k0 int)) {
	k := 0
	for i3 := 0; i3 < ne[3]; i3++ {
		for i2 := 0; i2 < ne[2]; i2++ {
			for i1 := 0; i1 < ne[1]; i1++ {
				f(i1, i2, i3, k)
				k += ne[0]
			}
		}
	}
}

// Tolerance: 1e-6 relative to the row's scale (float32 rounding of the
// scale and the products; the sums run in float64 on both sides).
func TestNorms(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		const eps = 1e-5
		forBackends(t, func(t *testing.T, b *cpu.Backend, r *rand.Rand) {
			for i := 0; i < 16; i++ {
				rms := i%2 == 0
				ne := randShape(r, [4]int{300, 5, 3, 2})
				a := mk(r, tensor.F32, ne, layout(r.IntN(int(nLayouts))))
				for k := 0; k < a.NElem(); k++ {
					a.set(k, 3*a.at(k)+0.7) // an offset for Norm to remove
				}
				want := make([]float64, a.NElem())
				rowsOf(ne, func(_, _, _, k0 int) {
					n := ne[0]
					var mean, ss float64
					for j := 0; j < n; j++ {
						mean += a.at(k0 + j)
					}
					mean /= float64(n)
					for j := 0; j < n; j++ {
						v := a.at(k0 + j)
						if !rms {
							v -= mean
						}
						ss += v * v
					}
					scale := 1 / math.Sqrt(ss/float64(n)+eps)
					for j := 0; j < n; j++ {
						v := a.at(k0 + j)
						if !rms {
							v -= mean
						}
						want[k0+j] = v * scale
					}
				})
				d := a
				if i%3 != 0 {
					d = mkOut(r, tensor.F32, ne, layout(r.IntN(int(nLayouts))))
				}
				before := d.snapshot()
				if rms {
					b.RMSNorm(d.Tensor, a.Tensor, ops.NormParams{Eps: eps})
				} else {
					b.Norm(d.Tensor, a.Tensor, ops.NormParams{Eps: eps})
				}
				checkUntouched(t, d, before)
				expectClose(t, d, want, func(k int) float64 { return 1e-6 * (1 + math.Abs(want[k])) })
			}
		})
	})
}

// Tolerance: 1e-6 absolute on probabilities (float32 rounding of x·scale +
// mask, of exp and of 1/sum; the sum is float64 on both sides).
func TestSoftMax(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		forBackends(t, func(t *testing.T, b *cpu.Backend, r *rand.Rand) {
			for i := 0; i < 16; i++ {
				ne := randShape(r, [4]int{200, 6, 4, 2})
				a := mk(r, tensor.F32, ne, layout(r.IntN(int(nLayouts))))
				for k := 0; k < a.NElem(); k++ {
					a.set(k, 8*a.at(k))
				}
				scale := float32(0.125 + r.Float64())
				maxBias := float32(0)
				if i%4 == 2 {
					maxBias = 8
				}
				var mask *tt
				if i%4 != 0 {
					mne := [4]int{ne[0], ne[1] + r.IntN(3), 1, 1}
					if i%2 == 1 {
						mne[2], mne[3] = ne[2], ne[3]
					}
					mt := tensor.F32
					if i%3 == 0 {
						mt = tensor.F16
					}
					mask = mk(r, mt, mne, layout(r.IntN(int(nLayouts))))
					rowsOf(mne, func(i1, _, _, k0 int) { // causal: -inf above the diagonal
						for j := 0; j < mne[0]; j++ {
							if j > i1+mne[0]/2 {
								mask.set(k0+j, math.Inf(-1))
							}
						}
					})
				}
				want := make([]float64, a.NElem())
				nHead := ne[2]
				nHeadLog2 := 1 << int(math.Floor(math.Log2(float64(nHead))))
				m0 := math.Pow(2, -float64(maxBias)/float64(nHeadLog2))
				m1 := math.Pow(2, -float64(maxBias)/2/float64(nHeadLog2))
				rowsOf(ne, func(i1, i2, i3, k0 int) {
					slope := 1.0
					if maxBias > 0 {
						if i2 < nHeadLog2 {
							slope = math.Pow(m0, float64(i2+1))
						} else {
							slope = math.Pow(m1, float64(2*(i2-nHeadLog2)+1))
						}
					}
					w := make([]float64, ne[0])
					mx := math.Inf(-1)
					for j := range w {
						w[j] = a.at(k0+j) * float64(scale)
						if mask != nil {
							w[j] += slope * mask.at4(j, i1%mask.Ne[1], i2%mask.Ne[2], i3%mask.Ne[3])
						}
						mx = math.Max(mx, w[j])
					}
					var sum float64
					for j := range w {
						w[j] = math.Exp(w[j] - mx)
						sum += w[j]
					}
					for j := range w {
						want[k0+j] = w[j] / sum
					}
				})
				d := a
				if i%3 != 2 {
					d = mkOut(r, tensor.F32, ne, layout(r.IntN(int(nLayouts))))
				}
				var mt *tensor.Tensor
				if mask != nil {
					mt = mask.Tensor
				}
				ro := []*tt{}
				if mask != nil {
					ro = append(ro, mask)
				}
				if d != a {
					ro = append(ro, a)
				}
				before, inputs := d.snapshot(), readOnly(t, ro...)
				b.SoftMax(d.Tensor, a.Tensor, mt, ops.SoftMaxParams{Scale: scale, MaxBias: maxBias})
				checkUntouched(t, d, before)
				inputs()
				expectClose(t, d, want, func(int) float64 { return 1e-6 })
			}
		})
	})
}
