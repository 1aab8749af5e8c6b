// Package golden runs golden-file tests stored as txtar archives: each
// archive holds a test's input sections and its expected output sections.
// A test computes the outputs from the inputs; a mismatch is reported as a
// go-cmp diff, and `go test -update` rewrites the expected sections.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// Updating reports whether -update was given.
func Updating() bool { return *update }

// Run runs fn on every archive matching pattern, one subtest each, named
// after the file. fn gets the archive's sections by name and returns the
// output sections it computed; those are compared with (or, under -update,
// written over) the archive's sections of the same names. An output that
// is empty stands for a section the archive must not have (-update removes
// it).
func Run(t *testing.T, pattern string, fn func(t *testing.T, comment string, in map[string]string) map[string]string) {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no golden files match %s", pattern)
	}
	for _, file := range files {
		name := filepath.Base(file)
		name = name[:len(name)-len(filepath.Ext(name))]
		t.Run(name, func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			in := map[string]string{}
			for _, f := range ar.Files {
				in[f.Name] = string(f.Data)
			}
			got := fn(t, string(ar.Comment), in)
			if t.Failed() {
				return
			}
			Check(t, file, ar, got)
		})
	}
}

// Check compares the sections got with those of archive ar stored in file,
// or rewrites file under -update.
func Check(t *testing.T, file string, ar *txtar.Archive, got map[string]string) {
	t.Helper()
	names := make([]string, 0, len(got))
	for n := range got {
		names = append(names, n)
	}
	sort.Strings(names)
	if *update {
		for _, n := range names {
			set(ar, n, got[n])
		}
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, n := range names {
		want, ok := section(ar, n)
		if !ok && got[n] == "" {
			continue
		}
		if !ok {
			t.Errorf("%s: no section %q; run: go test -run '%s' -update", file, n, t.Name())
			continue
		}
		if want != got[n] {
			t.Errorf("%s: section %s differs (-want +got):\n%s\nrun: go test -run '%s' -update", file, n, cmp.Diff(want, got[n]), t.Name())
		}
	}
}

func section(ar *txtar.Archive, name string) (string, bool) {
	for _, f := range ar.Files {
		if f.Name == name {
			return string(f.Data), true
		}
	}
	return "", false
}

func set(ar *txtar.Archive, name, data string) {
	if data == "" {
		for i := range ar.Files {
			if ar.Files[i].Name == name {
				ar.Files = append(ar.Files[:i], ar.Files[i+1:]...)
				return
			}
		}
		return
	}
	if data[len(data)-1] != '\n' {
		data += "\n"
	}
	for i := range ar.Files {
		if ar.Files[i].Name == name {
			ar.Files[i].Data = []byte(data)
			return
		}
	}
	ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(data)})
}
