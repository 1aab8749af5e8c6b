//go:build !noasm

package cpu

import "testing"

// TestStreamAhead checks the vendor string CPUID gives and the distance
// picked from it: within the 2 KiB PREFETCH_HEAD covers, a whole number
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
}
