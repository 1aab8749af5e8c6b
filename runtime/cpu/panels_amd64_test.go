//go:build !noasm

package cpu

import (
	"testing"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/tensor"
)

// TestPanelsHaveKernels checks that every panel width a product picks for
// a packed weight type has an assembly kernel at each level with one, so
// that no batch size falls back to the Go loop.
func TestPanelsHaveKernels(t *testing.T) {
	defer SetISA(ISA())
	for _, isa := range ISAs() {
		if isa == "go" {
			continue
		}
		if err := SetISA(isa); err != nil {
			t.Fatal(err)
		}
		for _, typ := range []tensor.DType{tensor.Q4_0, tensor.Q8_0, tensor.Q4_K, tensor.Q6_K} {
			if !backend.CPUPackable(typ) {
				continue
			}
			be, cw := panelSizes(typ)
			for n := 1; n <= 9; n++ {
				pc := panelWidth(typ, n)
				nb := 2
				w := make([]byte, nb*packBlockBytes(typ))
				xq := make([]byte, nb*pc*be)
				xd := make([]float32, nb*pc)
				xc := make([]int32, nb*pc*cw)
				tile := make([]float32, packRows*panelCols)
				if !packedKernelAsm(typ, pc, w, xq, xd, xc, nb, tile) {
					t.Errorf("%s, %s: %d columns take panels of %d, which no assembly kernel computes", isa, typ, n, pc)
				}
			}
		}
	}
}
