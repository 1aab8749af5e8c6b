package cpu

import "testing"

// TestGuidedSplit checks that the shares tile [0, n) in order and shrink
// round by round, the last round's being the smallest.
func TestGuidedSplit(t *testing.T) {
	for _, c := range []struct{ n, k, nth int }{
		{512, 16, 2}, {32, 16, 2}, {8016, 16, 2}, {7, 16, 2}, {100, 5, 2},
		{1000, 24, 3}, {1 << 20, 64, 8}, {10, 1, 1}, {9, 8, 1},
	} {
		end := 0
		var sizes []int
		for i := 0; i < c.k; i++ {
			lo, hi := guidedSplit(c.n, i, c.k, c.nth)
			if lo != end || hi < lo {
				t.Fatalf("guidedSplit(%d, %d, %d, %d) = [%d, %d), want it to start at %d", c.n, i, c.k, c.nth, lo, hi, end)
			}
			end = hi
			sizes = append(sizes, hi-lo)
		}
		if end != c.n {
			t.Fatalf("n=%d k=%d nth=%d: shares end at %d", c.n, c.k, c.nth, end)
		}
		// Rounding moves a share by at most one unit against the halving.
		for i := c.nth; i < c.k; i++ {
			if sizes[i] > sizes[i-c.nth]/2+2 && c.k > c.nth {
				t.Fatalf("n=%d k=%d nth=%d: share %d has %d units, the one a round before %d: %v", c.n, c.k, c.nth, i, sizes[i], sizes[i-c.nth], sizes)
			}
		}
	}
}

// TestGuidedSplitWeights checks the closed form against the shares'
// weights summed one by one.
func TestGuidedSplitWeights(t *testing.T) {
	for nth := 1; nth <= 8; nth++ {
		for k := 1; k <= 8*nth; k++ {
			rounds := (k + nth - 1) / nth
			total := 0
			for j := 0; j < k; j++ {
				total += 1 << (rounds - 1 - j/nth)
			}
			const n = 1 << 20
			w := 0
			for i := 0; i < k; i++ {
				lo, hi := guidedSplit(n, i, k, nth)
				if want := n * w / total; lo != want {
					t.Fatalf("guidedSplit(%d, %d, %d, %d) starts at %d, want %d", n, i, k, nth, lo, want)
				}
				w += 1 << (rounds - 1 - i/nth)
				if want := n * w / total; hi != want {
					t.Fatalf("guidedSplit(%d, %d, %d, %d) ends at %d, want %d", n, i, k, nth, hi, want)
				}
			}
		}
	}
}
