package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGGMLCheckTraces runs `graphc ggml-check -run -json` on every trace
// recorded from ggml: identical decisions, output within 1e-4, and compute
// buffers no larger than ggml's.
func TestGGMLCheckTraces(t *testing.T) {
	traces, _ := filepath.Glob("../../../../ggmltrace/testdata/*.json")
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

// TestGGMLCheckSeveralTraces: one summary line (or -json object) per
// trace, in argument order; a trace that cannot be checked is reported on
// stderr, the others still are, and the exit code is 1.
func TestGGMLCheckSeveralTraces(t *testing.T) {
	traces, _ := filepath.Glob("../../../../ggmltrace/testdata/*.json")
	if len(traces) < 2 {
		t.Fatal("fewer than two traces")
	}
	code, out, stderr := runCLI(append([]string{"ggml-check"}, traces...)...)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != ExitOK || len(lines) != len(traces) {
		t.Fatalf("exit %d, %d lines for %d traces:\n%s\n%s", code, len(lines), len(traces), out, stderr)
	}
	for i, line := range lines {
		if !strings.HasPrefix(line, traces[i]+": identical; compute buffers ") {
			t.Errorf("line %d: %s", i, line)
		}
	}

	bad := "testdata/not_a_trace.json"
	args := []string{"ggml-check", "-json", traces[0], bad, traces[1]}
	code, out, stderr = runCLI(args...)
	if code != ExitUser || strings.Count(stderr, bad) != 1 {
		t.Errorf("with %s: exit %d, stderr %q", bad, code, stderr)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var got []string
	for dec.More() {
		var r ggmlCheckReport
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r.Trace)
	}
	if len(got) != 2 || got[0] != traces[0] || got[1] != traces[1] {
		t.Errorf("-json reports for %v, want %s and %s", got, traces[0], traces[1])
	}
}

// TestGGMLCheckNullNode: a trace whose nodes include null is a user error
// naming the file and the node, not a nil dereference (exit 2).
func TestGGMLCheckNullNode(t *testing.T) {
	b, err := os.ReadFile("../../../../ggmltrace/testdata/mlp.json")
	if err != nil {
		t.Fatal(err)
	}
	var tr map[string]any
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	tr["nodes"].([]any)[3] = nil
	if b, err = json.Marshal(tr); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "null_node.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI("ggml-check", path)
	if code != ExitUser || !strings.Contains(stderr, path+": nodes[3]: null") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
