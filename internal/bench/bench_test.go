package bench_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/graphc/graphc/backend"
	. "github.com/graphc/graphc/internal/bench"
	"github.com/graphc/graphc/tensor"
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

// TestGGMLCases: -ggml compares the plain quantized products at every
// column count and thread count, and Cases has a packed twin of each
// whose type runtime/cpu packs.
func TestGGMLCases(t *testing.T) {
	names := map[string]bool{}
	for _, n := range Names([]int{1, 2}) {
		names[n] = true
	}
	var got []string
	for _, c := range GGMLCases([]int{1, 2}) {
		got = append(got, c.Name())
		packed := strings.Replace(c.Name(), c.Kernel+"/", c.Kernel+"_packed/", 1)
		dt, _ := tensor.ParseDType(c.DType)
		if names[packed] != backend.CPUPackable(dt) {
			t.Errorf("%s: packed case %s %v, want %v", c.Name(), packed, names[packed], backend.CPUPackable(dt))
		}
	}
	for _, want := range []string{
		"matvec/q4_0/m=4096,n=1,k=4096/threads=1", "gemm/q8_0/m=4096,n=8,k=4096/threads=2",
		"gemm/q4_0/m=4096,n=32,k=4096/threads=1", "gemm/q8_0/m=4096,n=512,k=4096/threads=2",
		"matvec/q4_K/m=8192,n=1,k=2048/threads=1", "gemm/q6_K/m=8192,n=512,k=2048/threads=2",
		"matvec/q5_0/m=8192,n=1,k=2048/threads=1", "gemm/iq4_xs/m=8192,n=8,k=2048/threads=2",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("no case %s in %v", want, got)
		}
	}
	if len(got) != 12*2*4 {
		t.Errorf("%d cases, want 96 (12 types, 4 column counts, 2 thread counts): %v", len(got), got)
	}
}
