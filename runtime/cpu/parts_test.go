package cpu_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/graphc/graphc/runtime/cpu"
)

// recordParts records every part RunParts runs.
type recordParts struct {
	mu    sync.Mutex
	parts [][2]int
	lanes []*cpu.Backend
}

func (r *recordParts) RunPart(lane *cpu.Backend, lo, hi int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.parts = append(r.parts, [2]int{lo, hi})
	r.lanes = append(r.lanes, lane)
}

// TestRunParts: the units are cut into one part per thread, each run on
// the single-threaded lane of the thread that claims it (a thread slow to
// wake leaves its part to the other); fewer units than threads, or one
// thread, run as a single part on the backend itself.
func TestRunParts(t *testing.T) {
	for _, c := range []struct {
		threads, units int
		want           [][2]int
		onItself       bool
	}{
		{2, 8, [][2]int{{0, 4}, {4, 8}}, false},
		{2, 3, [][2]int{{0, 1}, {1, 3}}, false},
		{3, 2, [][2]int{{0, 1}, {1, 2}}, false},
		{2, 1, [][2]int{{0, 1}}, true},
		{2, 0, [][2]int{{0, 0}}, true},
		{1, 8, [][2]int{{0, 8}}, true},
	} {
		be := cpu.New(c.threads)
		var r recordParts
		be.RunParts(&r, c.units)
		be.Close()
		got := slices.Clone(r.parts)
		slices.SortFunc(got, func(a, b [2]int) int { return a[0] - b[0] })
		if !slices.Equal(got, c.want) {
			t.Errorf("%d threads, %d units: parts %v, want %v", c.threads, c.units, got, c.want)
		}
		for i, l := range r.lanes {
			if (l == be) != c.onItself {
				t.Errorf("%d threads, %d units: part %v ran on the backend itself: %v", c.threads, c.units, r.parts[i], l == be)
			}
			if l.Threads() != 1 && !c.onItself {
				t.Errorf("lane with %d threads", l.Threads())
			}
		}
	}
}

type panicPart struct{}

func (panicPart) RunPart(_ *cpu.Backend, lo, _ int) {
	if lo > 0 {
		panic("part failed")
	}
}

// TestRunPartsPanic: a part's panic reaches the caller once all parts are
// done, and the backend stays usable.
func TestRunPartsPanic(t *testing.T) {
	be := cpu.New(2)
	defer be.Close()
	func() {
		defer func() {
			if v := recover(); v != "part failed" {
				t.Errorf("recovered %v", v)
			}
		}()
		be.RunParts(panicPart{}, 4)
	}()
	var r recordParts
	be.RunParts(&r, 4)
	if len(r.parts) != 2 {
		t.Errorf("after a panic: parts %v", r.parts)
	}
}
