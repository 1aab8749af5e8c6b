//go:build !noasm

package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/tensor"
)

// TestColumnKernelsQ4_K checks both one-column q4_K kernels the machine
// can run, whichever of them its products take (kColumnVNNI) and at any
// GRAPHC_CPU_ISA, against the Go loop: the same integer sums, the float
// terms within rounding.
func TestColumnKernelsQ4_K(t *testing.T) {
	if bestISA() < isaAVX2 {
		t.Skip("no AVX2")
	}
	const nb = 5
	pb := packBlockBytes(tensor.Q4_K)
	r := rand.New(rand.NewPCG(5, 6))
	w := make([]byte, nb*pb)
	for i := range w {
		w[i] = byte(r.Uint32())
	}
	for b := range nb {
		blk := w[b*pb:]
		for j := range 32 { // f16 d and dmin in [0.5, 1)
			blk[2*j] = byte(r.Uint32())
			blk[2*j+1] = 0x38 + byte(r.IntN(4))
		}
		for i := 64; i < 320; i++ { // scales and mins: 6 bits
			blk[i] &= 0x3f
		}
	}
	xq := make([]byte, nb*qkK)
	for i := range xq {
		xq[i] = byte(r.Uint32())
	}
	xd := make([]float32, nb)
	for i := range xd {
		xd[i] = r.Float32()
	}
	xc := make([]int32, nb*4)
	for i := range xc {
		xc[i] = int32(uint16(r.IntN(8192)-4096)) | int32(r.IntN(8192)-4096)<<16
	}
	var want [packRows]float32
	packedKernelKGo(1, w, xq, xd, xc, nb, want[:])
	var peak float32
	for _, v := range want {
		peak = max(peak, v, -v)
	}
	if peak == 0 {
		t.Fatal("the Go loop computed nothing")
	}
	kernels := map[string]func(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32){"avx2": packedQ4Kx1AVX2}
	if bestISA() == isaAVX512 && hasVNNI {
		kernels["vnni"] = packedQ4Kx1VNNI
	}
	for name, k := range kernels {
		var got [packRows]float32
		k(&w[0], &xq[0], &xd[0], &xc[0], nb, &got[0])
		for i := range got {
			if d := got[i] - want[i]; d > 1e-5*peak || d < -1e-5*peak {
				t.Errorf("%s: row %d: %g, the Go loop %g", name, i, got[i], want[i])
			}
		}
	}
}
