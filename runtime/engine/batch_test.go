package engine

import (
	"math"
	"testing"
)

func TestParallelBatch(t *testing.T) {
	const seqs, step = 3, 4
	pos, mask := ParallelBatch(seqs, step)
	nKV := (step + 1) * seqs
	if len(pos) != seqs || len(mask) != seqs*nKV {
		t.Fatalf("%d positions, %d mask values", len(pos), len(mask))
	}
	for s := range seqs {
		if pos[s] != step {
			t.Errorf("sequence %d at position %d, want %d", s, pos[s], step)
		}
		for j := range nKV {
			open := mask[s*nKV+j] == 0
			if want := j%seqs == s; open != want || (!open && !math.IsInf(float64(mask[s*nKV+j]), -1)) {
				t.Errorf("sequence %d, slot %d: mask %v", s, j, mask[s*nKV+j])
			}
		}
	}
}

// TestSlidingWindowMask: a token sees its own slot and the window-1
// before it, none later and none further back.
func TestSlidingWindowMask(t *testing.T) {
	const n, pos, window = 3, 5, 4
	mask := SlidingWindowMask(n, pos, window)
	nKV := pos + n
	if len(mask) != n*nKV {
		t.Fatalf("%d mask values", len(mask))
	}
	for tok := range n {
		p := pos + tok
		for j := range nKV {
			open := mask[tok*nKV+j] == 0
			if want := j <= p && p-j < window; open != want || (!open && !math.IsInf(float64(mask[tok*nKV+j]), -1)) {
				t.Errorf("token %d, slot %d: mask %v", tok, j, mask[tok*nKV+j])
			}
		}
	}
}
