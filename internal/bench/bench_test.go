package bench_test

import (
	"testing"

	. "github.com/graphc/graphc/internal/bench"
)

// TestCasesRun runs every case once on a short clock: the setups are
// valid and the results well-formed.
func TestCasesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every kernel")
	}
	for _, c := range Cases([]int{2}) {
		if c.M*c.N*c.K >= 1<<30 {
			continue // 2048³ takes too long for a test
		}
		op, cleanup := c.Setup(c.Threads)
		op()
		cleanup()
	}
}

// Benchmark runs every case as a Go benchmark, reporting GFLOP/s or GB/s
// as the case measures.
func Benchmark(b *testing.B) {
	for _, c := range Cases(nil) {
		b.Run(c.Name(), func(b *testing.B) {
			op, cleanup := c.Setup(c.Threads)
			defer cleanup()
			op()
			for b.Loop() {
				op()
			}
			r := c.Result(float64(b.Elapsed().Nanoseconds()) / float64(b.N))
			if r.GFLOPS > 0 {
				b.ReportMetric(r.GFLOPS, "GFLOP/s")
			}
			if r.GBps > 0 {
				b.ReportMetric(r.GBps, "GB/s")
			}
		})
	}
}
