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
