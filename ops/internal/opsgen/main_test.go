package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGenerated: every generated file is what the op table implies now.
func TestGenerated(t *testing.T) {
	for _, f := range files() {
		want, err := f.render()
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("..", "..", "..", f.path))
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(string(want), string(got)); d != "" {
			t.Errorf("%s is out of date with the op table; run go generate ./ops (-want +got):\n%s", f.path, d)
		}
	}
}
