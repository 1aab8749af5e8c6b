//go:build !noasm

package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/tensor"
)

// TestStreamAhead checks the vendor string CPUID gives and the distance
// picked from it (and the family CPUID gives): within the 2 KiB PREFETCH_HEAD covers, a whole number
// of cache lines.
func TestStreamAhead(t *testing.T) {
	b, d, c := cpuVendor()
	for _, r := range []uint32{b, d, c} {
		for i := 0; i < 4; i++ {
			if ch := byte(r >> (8 * i)); ch < ' ' || ch > '~' {
				t.Fatalf("CPUID vendor registers %#x %#x %#x: not a printable string", b, d, c)
			}
		}
	}
	if streamAhead <= 0 || streamAhead > 2048 || streamAhead%64 != 0 {
		t.Errorf("streamAhead %d: want whole cache lines, at most 2048", streamAhead)
	}
	if f := cpuFamily(); f < 6 {
		t.Errorf("CPUID family %#x: every amd64 processor's is at least 6", f)
	}
	if kColumnAhead != streamAhead && kColumnAhead != kStreamAhead {
		t.Errorf("kColumnAhead %d: want streamAhead's %d or kStreamAhead's %d", kColumnAhead, streamAhead, kStreamAhead)
	}
	if kColumnAheadAVX2 < kStreamAhead || kColumnAheadAVX2%64 != 0 {
		t.Errorf("kColumnAheadAVX2 %d: want whole cache lines, at least kStreamAhead's %d", kColumnAheadAVX2, kStreamAhead)
	}
}

// TestColumnL1Kernel checks that the one-column q4_K VNNI kernel that
// prefetches into L1 computes the same bits as the one that prefetches
// into L2, whichever of the two this machine's products use.
func TestColumnL1Kernel(t *testing.T) {
	if level < isaAVX512 || !hasVNNI {
		t.Skip("no AVX-512 VNNI")
	}
	const nb = 5
	r := rand.New(rand.NewPCG(5, 6))
	w := make([]byte, nb*packBlockBytes(tensor.Q4_K))
	xq := make([]byte, nb*qkK)
	for i := range w {
		w[i] = byte(r.Uint32())
	}
	for i := range nb {
		for j := range 32 {
			w[i*packBlockBytes(tensor.Q4_K)+2*j+1] = 0x3c // f16 d and dmin near 1
		}
	}
	for i := range xq {
		xq[i] = byte(r.Uint32())
	}
	xd := make([]float32, nb)
	xc := make([]int32, nb*4)
	for i := range xd {
		xd[i] = r.Float32()
	}
	for i := range xc {
		xc[i] = int32(r.Uint32())
	}
	var l2, l1 [packRows]float32
	packedQ4Kx1VNNI(&w[0], &xq[0], &xd[0], &xc[0], nb, &l2[0])
	packedQ4Kx1VNNIL1(&w[0], &xq[0], &xd[0], &xc[0], nb, &l1[0])
	if l1 != l2 {
		t.Errorf("prefetching into L1: %v\ninto L2: %v", l1, l2)
	}
	if l2 == ([packRows]float32{}) {
		t.Error("the kernels computed nothing")
	}
}
