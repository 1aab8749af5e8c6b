package ggmltrace_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphc/graphc/ggmltrace"
)

// mutated writes testdata/mlp.json changed by edit to a file of the test's
// own and returns its path.
func mutated(t *testing.T, edit func(tr map[string]any)) string {
	t.Helper()
	b, err := os.ReadFile("testdata/mlp.json")
	if err != nil {
		t.Fatal(err)
	}
	var tr map[string]any
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	edit(tr)
	if b, err = json.Marshal(tr); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func jsonTensor(tr map[string]any, kind string, i int) map[string]any {
	return tr[kind].([]any)[i].(map[string]any)
}

// TestMalformedTraces: a trace JSON decodes but the importer cannot take
// is an error naming the file and the leaf or node, never a crash
// (ggml-check used to dereference a null node).
func TestMalformedTraces(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(tr map[string]any)
		want string
	}{
		{"null node", func(tr map[string]any) { tr["nodes"].([]any)[2] = nil }, "nodes[2]: null"},
		{"only a null node", func(tr map[string]any) { tr["nodes"] = []any{nil} }, "nodes[0]: null"},
		{"null leaf", func(tr map[string]any) { tr["leafs"].([]any)[1] = nil }, "leafs[1]: null"},
		{"null source first", func(tr map[string]any) { jsonTensor(tr, "nodes", 0)["src"] = []any{nil, "mlp_in"} }, "nodes[0]: fc0_mm: source 1 is mlp_in after a null one"},
		{"null source after scheduling", func(tr map[string]any) { jsonTensor(tr, "nodes", 1)["src_after_sched"] = []any{nil, "fc0.bias"} }, "nodes[1]: fc0_add: source 1 is fc0.bias after a null one"},
		{"no sources", func(tr map[string]any) { jsonTensor(tr, "nodes", 3)["src"] = []any{nil, nil} }, "node 3 fc1_mm"},
		{"unknown source", func(tr map[string]any) { jsonTensor(tr, "nodes", 3)["src"] = []any{"nowhere"} }, "node 3 fc1_mm: source nowhere is not defined before it"},
		{"unknown op", func(tr map[string]any) { jsonTensor(tr, "nodes", 3)["op"] = "FOO" }, "node 3 fc1_mm: op FOO"},
		{"no op", func(tr map[string]any) { delete(jsonTensor(tr, "nodes", 4), "op") }, "nodes[4]: fc1_add: no op"},
		{"no name", func(tr map[string]any) { delete(jsonTensor(tr, "nodes", 1), "name") }, "nodes[1]: no name"},
		{"no type", func(tr map[string]any) { delete(jsonTensor(tr, "leafs", 0), "type") }, "leafs[0]: fc2.weight: no type"},
		{"no ne", func(tr map[string]any) { delete(jsonTensor(tr, "nodes", 5), "ne") }, "nodes[5]: fc1_gelu: no ne"},
		{"no nb", func(tr map[string]any) { delete(jsonTensor(tr, "leafs", 2), "nb") }, "leafs[2]: fc0.weight: no nb"},
		{"no index", func(tr map[string]any) { delete(jsonTensor(tr, "nodes", 6), "index") }, "nodes[6]: fc2_mm: index 0"},
		{"node as a string", func(tr map[string]any) { tr["nodes"].([]any)[2] = "fc0_relu" }, "cannot unmarshal string"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := mutated(t, c.edit)
			_, _, _, err := ggmltrace.Check(path)
			if err == nil || !strings.Contains(err.Error(), "bad.json") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error naming bad.json and %q", err, c.want)
			}
		})
	}
}
