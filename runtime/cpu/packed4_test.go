package cpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// TestPackedSmallPairs compares the small-panel kernels over two row
// groups with the Go loop run on each group: random quants and scales, a
// zero column (a padded panel), nb = 1, 3 and 64. The tile of the second
// group must follow the first's and nothing past them be written.
func TestPackedSmallPairs(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(9, 10))
		for _, c := range []struct {
			dt     tensor.DType
			pc, nb int
		}{
			{tensor.Q4_0, 4, 1}, {tensor.Q4_0, 4, 3}, {tensor.Q4_0, 4, 64}, {tensor.Q4_0, 2, 3}, {tensor.Q4_0, 2, 64},
			{tensor.Q8_0, 4, 1}, {tensor.Q8_0, 4, 3}, {tensor.Q8_0, 4, 64}, {tensor.Q8_0, 2, 3}, {tensor.Q8_0, 2, 64},
		} {
			dt, pc, nb := c.dt, c.pc, c.nb
			n := cpu.PackRows * pc
			name := fmt.Sprintf("%s/pc=%d/nb=%d", dt, pc, nb)
			pb := cpu.PackedBlockBytes(dt)
			var ws [2][]byte
			for i := range ws {
				ws[i] = make([]byte, nb*pb)
				for b := 0; b < nb; b++ {
					wb := ws[i][b*pb : (b+1)*pb]
					for row := 0; row < cpu.PackRows; row++ {
						d := tensor.F32ToF16(float32(r.Float64()*2 - 1))
						wb[2*row], wb[2*row+1] = byte(d), byte(d>>8)
					}
					for j := 32; j < pb; j++ {
						wb[j] = byte(r.Uint32())
					}
				}
			}
			xq, xd, xc := make([]byte, nb*pc*32), make([]float32, nb*pc), make([]int32, nb*pc)
			for b := 0; b < nb; b++ {
				for j := 0; j < pc-1; j++ { // the last column is padding
					var sum int32
					for i := 0; i < 32; i++ {
						q := int8(r.IntN(255) - 127)
						xq[(b*pc+j)*32+i] = byte(q)
						sum += int32(q)
					}
					xd[b*pc+j] = float32(r.Float64() * 0.1)
					xc[b*pc+j] = -8 * sum
					if dt == tensor.Q8_0 {
						xc[b*pc+j] = -128 * sum
					}
				}
			}
			buf := make([]float32, 3*n)
			guard := float32(-7.25)
			for i := range buf {
				buf[i] = guard
			}
			if asm := cpu.PackedSmall2Asm(dt, pc, ws[0], ws[1], xq, xd, xc, nb, buf[:2*n]); asm != (cpu.ISA() != "go") {
				t.Fatalf("%s: small kernel over two groups in assembly: %v at level %s", name, asm, cpu.ISA())
			} else if !asm {
				continue
			}
			for i, v := range buf[2*n:] {
				if v != guard {
					t.Fatalf("%s: wrote %g past the tiles at %d", name, v, i)
				}
			}
			for g := range ws {
				want := make([]float32, n)
				cpu.PackedKernelGo(dt, pc, ws[g], xq, xd, xc, nb, want)
				for i, w := range want {
					// Σ|terms| ≤ nb·|da|·|dx|·32·255·127 with |da| ≤ 1, |dx| ≤ 0.1
					tol := 1e-7 * float64(nb) * 0.1 * 32 * 255 * 127
					if got := buf[g*n+i]; math.IsNaN(float64(got)) || math.Abs(float64(got-w)) > tol {
						t.Fatalf("%s: group %d tile[col %d, row %d] = %g, Go loop %g", name, g, i/cpu.PackRows, i%cpu.PackRows, got, w)
					}
				}
			}
		}
	})
}
