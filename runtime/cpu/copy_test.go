package cpu_test

import (
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// Tolerance: exact (f32→f16 rounds to nearest even, as tensor.F32ToF16).
func TestCpy(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		pairs := [][2]tensor.DType{
			{tensor.F32, tensor.F32}, {tensor.F32, tensor.F16}, {tensor.F16, tensor.F32},
			{tensor.F16, tensor.F16}, {tensor.I32, tensor.I32},
		}
		forBackends(t, func(t *testing.T, b *cpu.Backend, r *rand.Rand) {
			for i := 0; i < 30; i++ {
				pr := pairs[i%len(pairs)]
				sne := randShape(r, [4]int{30, 6, 4, 3})
				dne := sne
				switch i % 3 {
				case 1: // same element count, other shape (ggml_cpy copies in flat order)
					n := sne[0] * sne[1] * sne[2] * sne[3]
					dne = [4]int{n, 1, 1, 1}
					for _, f := range []int{2, 3, 5} {
						if dne[0]%f == 0 && r.IntN(2) == 0 {
							dne[0] /= f
							dne[1+r.IntN(3)] *= f
						}
					}
				case 2: // a transposed copy: permuted source into a dense dst (cont)
					dne = sne
				}
				s := mk(r, pr[0], sne, layout(r.IntN(int(nLayouts))))
				if pr[0] == tensor.I32 {
					for k := 0; k < s.NElem(); k++ {
						s.set(k, float64(r.Int32()))
					}
				}
				l := layout(r.IntN(int(nLayouts)))
				if i%3 == 2 {
					l = dense
				}
				d := mkOut(r, pr[1], dne, l)
				want := s.values()
				for k := range want {
					if pr[1] != tensor.I32 {
						want[k] = roundTo(pr[1], want[k])
					}
				}
				before, inputs := d.snapshot(), readOnly(t, s)
				b.Cpy(d.Tensor, s.Tensor)
				checkUntouched(t, d, before)
				inputs()
				expectClose(t, d, want, exact)
			}
		})
	})
}

// Tolerance: exact (rows are copied or converted f16→f32 exactly).
func TestGetRows(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		forBackends(t, func(t *testing.T, b *cpu.Backend, r *rand.Rand) {
			for i := 0; i < 12; i++ {
				tt := []tensor.DType{tensor.F32, tensor.F16, tensor.I32}[i%3]
				ine := [4]int{1 + r.IntN(9), 1, 1, 1}
				if i%4 == 3 {
					ine[1], ine[2] = 1+r.IntN(3), 1+r.IntN(2)
				}
				tne := [4]int{1 + r.IntN(300), 1 + r.IntN(20), ine[1], ine[2]}
				table := mk(r, tt, tne, layout(r.IntN(int(nLayouts))))
				if tt == tensor.I32 {
					for k := 0; k < table.NElem(); k++ {
						table.set(k, float64(r.Int32()))
					}
				}
				idx := mk(r, tensor.I32, ine, layout(r.IntN(int(nLayouts))))
				for k := 0; k < idx.NElem(); k++ {
					idx.set(k, float64(r.IntN(tne[1])))
				}
				dt := tensor.F32
				if tt == tensor.I32 {
					dt = tensor.I32
				}
				dne := [4]int{tne[0], ine[0], ine[1], ine[2]}
				d := mkOut(r, dt, dne, layout(r.IntN(int(nLayouts))))
				want := make([]float64, d.NElem())
				rowsOf(dne, func(i1, i2, i3, k0 int) {
					row := int(idx.at4(i1, i2, i3, 0))
					for j := 0; j < dne[0]; j++ {
						want[k0+j] = table.at4(j, row, i2, i3)
					}
				})
				before, inputs := d.snapshot(), readOnly(t, table, idx)
				b.GetRows(d.Tensor, table.Tensor, idx.Tensor)
				checkUntouched(t, d, before)
				inputs()
				expectClose(t, d, want, exact)
			}
		})
	})
}

// TestCpyTransposed is the llama V-cache copy: the transpose of an
// [nEmbd, nTok] f32 matrix (contiguous along dim 1) into f16 rows of a cache
// with a row stride, and the f32, f16 and same-type variants; columns of
// one piece, of several and a partial one, one token (generation) and more.
func TestCpyTransposed(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		forBackends(t, func(t *testing.T, b *cpu.Backend, r *rand.Rand) {
			for _, c := range []struct {
				pr          [2]tensor.DType
				nEmbd, nTok int
			}{
				{[2]tensor.DType{tensor.F32, tensor.F16}, 64, 8}, {[2]tensor.DType{tensor.F32, tensor.F32}, 64, 8},
				{[2]tensor.DType{tensor.F16, tensor.F32}, 64, 8}, {[2]tensor.DType{tensor.F32, tensor.F16}, 150, 1},
				{[2]tensor.DType{tensor.F32, tensor.F16}, 150, 3},
			} {
				pr, nEmbd, nTok, nCtx := c.pr, c.nEmbd, c.nTok, 19
				v := mk(r, pr[0], [4]int{nEmbd, nTok, 1, 1}, dense)
				vt := &tt{Tensor: &tensor.Tensor{Type: pr[0], Ne: [4]int{nTok, nEmbd, 1, 1},
					Nb: [4]int{v.Nb[1], v.Nb[0], v.Nb[2], v.Nb[3]}, Data: v.Data}, buf: v.buf, off: v.off}
				cache := mkOut(r, pr[1], [4]int{nCtx, nEmbd, 1, 1}, dense)
				dst := &tt{Tensor: &tensor.Tensor{Type: pr[1], Ne: [4]int{nTok, nEmbd, 1, 1},
					Nb: [4]int{cache.Nb[0], cache.Nb[1], cache.Nb[2], cache.Nb[3]}}, buf: cache.buf, off: cache.off + 3*pr[1].Size()}
				dst.Data = cache.buf[dst.off : dst.off+dst.Span()]
				want := vt.values()
				for k := range want {
					want[k] = roundTo(pr[1], want[k])
				}
				before := dst.snapshot()
				b.Cpy(dst.Tensor, vt.Tensor)
				checkUntouched(t, dst, before)
				expectClose(t, dst, want, exact)
			}
		})
	})
}
