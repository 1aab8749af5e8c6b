package cpu

import (
	"sync/atomic"
	"testing"
	"time"
)

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

// countRanges counts the runs of each unit and checks every batch.
type countRanges struct {
	t     *testing.T
	units int
	runs  []atomic.Int32
	block func(lo, hi int)
}

func (c *countRanges) runRange(lo, hi, _ int) {
	if lo < 0 || hi > c.units || lo >= hi {
		c.t.Errorf("batch [%d, %d) of %d units", lo, hi, c.units)
		return
	}
	if c.block != nil {
		c.block(lo, hi)
	}
	for u := lo; u < hi; u++ {
		c.runs[u].Add(1)
	}
}

// TestStealingRunsEveryUnitOnce runs stealing tasks of every shape and
// checks that each unit ran exactly once.
func TestStealingRunsEveryUnitOnce(t *testing.T) {
	for _, threads := range []int{1, 2, 3, 8} {
		p := newPool(threads)
		var s stealing
		for _, units := range []int{1, 2, 7, 100, 1001} {
			for _, batch := range []int{0, 1, 3, 64, 1 << 20} {
				for nth := 1; nth <= threads+1; nth++ {
					for rep := 0; rep < 3; rep++ {
						c := &countRanges{t: t, units: units, runs: make([]atomic.Int32, units)}
						p.runStealing(&s, c, units, batch, nth)
						for u := range c.runs {
							if n := c.runs[u].Load(); n != 1 {
								t.Fatalf("threads %d nth %d, %d units in batches of %d: unit %d ran %d times", threads, nth, units, batch, u, n)
							}
						}
					}
				}
			}
		}
		p.close()
	}
}

// TestStealingTakesAStalledRange stalls the thread on the first batch of
// the second range until every other unit has run: the other thread has
// to take the rest of that range from its back.
func TestStealingTakesAStalledRange(t *testing.T) {
	p := newPool(2)
	defer p.close()
	const units = 100
	var stalled atomic.Bool
	c := &countRanges{t: t, units: units, runs: make([]atomic.Int32, units)}
	c.block = func(lo, hi int) {
		if lo < units/2 || !stalled.CompareAndSwap(false, true) {
			return
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			done := 0
			for u := range c.runs {
				done += int(c.runs[u].Load())
			}
			if done == units-(hi-lo) {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("the batch [%d, %d) stalled and the other thread ran %d of the other %d units", lo, hi, done, units-(hi-lo))
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	var s stealing
	p.runStealing(&s, c, units, 1, 2)
	for u := range c.runs {
		if n := c.runs[u].Load(); n != 1 {
			t.Fatalf("unit %d ran %d times", u, n)
		}
	}
}
