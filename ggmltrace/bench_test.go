package ggmltrace_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphc/graphc/ggmltrace"
	"github.com/graphc/graphc/passes"
)

// BenchmarkTraceBuffers plans every recorded ggml graph and reports, per
// compute buffer, graphc's planned bytes next to ggml's compute_buffer_size
// for the same graph and the lower bound (the most bytes live at once):
// what graphc's planner saves over ggml-alloc, and what is left to save.
func BenchmarkTraceBuffers(b *testing.B) {
	paths, _ := filepath.Glob("testdata/*.json")
	for _, path := range paths {
		tr, err := ggmltrace.Load(path)
		if err != nil {
			b.Fatal(err)
		}
		for _, strategy := range []string{passes.StrategyBest, passes.StrategyGGML} {
			b.Run(strings.TrimSuffix(filepath.Base(path), ".json")+"/"+strategy, func(b *testing.B) {
				var planned, lower, ggml int64
				for b.Loop() {
					g, backends, opts, err := tr.Graph()
					if err != nil {
						b.Fatal(err)
					}
					opts.MemoryStrategy = strategy
					if err := passes.Run(g, &passes.Context{Backends: backends, Options: opts}, false, ""); err != nil {
						b.Fatal(err)
					}
					planned, lower, ggml = 0, 0, 0
					for _, buf := range g.Buffers {
						planned += buf.Size
						lower += buf.LowerBound
					}
				}
				for _, n := range tr.Result.ComputeBufferSize {
					ggml += n
				}
				b.ReportMetric(float64(planned), "bytes")
				b.ReportMetric(float64(ggml), "ggml-bytes")
				b.ReportMetric(float64(planned)/float64(ggml), "bytes/ggml")
				b.ReportMetric(float64(planned)/float64(lower), "bytes/lower")
			})
		}
	}
}
