package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestGGMLCheckTraces runs `graphc ggml-check -run -json` on every trace
// recorded from ggml: identical decisions, output within 1e-4, and compute
// buffers no larger than ggml's.
func TestGGMLCheckTraces(t *testing.T) {
	traces, _ := filepath.Glob("../../ggmltrace/testdata/*.json")
	if len(traces) == 0 {
		t.Fatal("no traces")
	}
	for _, path := range traces {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
			args := []string{"ggml-check", "-json", path}
			if !testing.Short() {
				args = []string{"ggml-check", "-run", "-json", path}
			}
			code, out, stderr := runCLI(args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
			}
			var r ggmlCheckReport
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			if !r.Identical {
				t.Errorf("differences: %v", r.Differences)
			}
			for _, b := range r.Plan.Buffers {
				for be, size := range r.GGMLComputeBuffer {
					if strings.HasPrefix(be, b.BufferType) || (be == "BLAS" && b.BufferType == "CPU") {
						if size > 0 && b.Bytes > size {
							t.Errorf("buffer %s: graphc %d bytes > ggml %d", b.BufferType, b.Bytes, size)
						}
					}
				}
			}
			if r.MaxAbsDiff != nil {
				t.Logf("max |graphc - ggml| = %.3g", *r.MaxAbsDiff)
			}
		})
	}
}

func TestGGMLCheckReportsDifferences(t *testing.T) {
	code, _, stderr := runCLI("ggml-check", "testdata/not_a_trace.json")
	if code != ExitUser || !strings.Contains(stderr, "not_a_trace.json") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
