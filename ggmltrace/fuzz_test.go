package ggmltrace_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/graphc/graphc/ggmltrace"
)

// FuzzParse feeds arbitrary trace JSON through what ggml-check does with
// it: parse, rebuild the graph, plan through split_graph, compare. Errors
// are fine; a panic is a failure.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"backends":[{"name":"CPU","buft":"CPU"}],"nodes":[null]}`))
	f.Add([]byte(`{"backends":[{"name":"CPU","buft":"CPU"}],"leafs":[{"index":0,"name":"a","op":"NONE","type":"f32","ne":[4,1,1,1],"nb":[4,16,16,16]}],` +
		`"nodes":[{"index":0,"name":"b","op":"SCALE","type":"f32","ne":[4,1,1,1],"nb":[4,16,16,16],"src":["a",null]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ggmltrace.Parse(data)
		if err != nil {
			return
		}
		g, _, err := tr.Plan("split_graph", 0)
		if err != nil {
			return
		}
		_ = ggmltrace.Compare(tr, g)
	})
}
