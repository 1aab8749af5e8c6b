//go:build !noasm

package cpu

import "testing"

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
