package ggmltrace_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphc/graphc/ggmltrace"
)

func traces(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no traces in testdata: %v", err)
	}
	return files
}

func load(t *testing.T, path string) *ggmltrace.Trace {
	t.Helper()
	tr, err := ggmltrace.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestTracesMatchGGML: graphc's scheduling passes decide exactly as ggml
// did on every recorded trace.
func TestTracesMatchGGML(t *testing.T) {
	for _, path := range traces(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			tr := load(t, path)
			g, _, err := tr.Plan("split_graph", 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ggmltrace.Compare(tr, g) {
				t.Error(d)
			}
		})
	}
}
