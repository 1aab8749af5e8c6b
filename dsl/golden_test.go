package dsl

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// runArchives runs fn on each testdata/<dir>/*.txtar archive as a subtest.
// fn returns the sections it computed; each is compared with the archive's
// section of that name, or written into the archive under -update.
func runArchives(t *testing.T, dir string, fn func(t *testing.T, a *archive) map[string]string) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no archives in testdata/%s", dir)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".txtar")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			a := parseArchive(data)
			got := fn(t, a)
			if *update {
				for _, sec := range sortedKeys(got) {
					a.set(sec, []byte(got[sec]))
				}
				if err := os.WriteFile(path, a.format(), 0o666); err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, sec := range sortedKeys(got) {
				var want string
				if f := a.file(sec); f != nil {
					want = string(f.data)
				}
				if string(fixNL([]byte(got[sec]))) != want {
					t.Errorf("%s: %s mismatch (-want +got):\n%s\nrun: go test ./dsl -run '%s' -update",
						path, sec, cmp.Diff(want, got[sec]), t.Name())
				}
			}
		})
	}
}

// checkGolden compares got with the file at path, or writes it under
// -update.
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o666); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run: go test ./dsl -run '%s' -update)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("%s mismatch (-want +got):\n%s\nrun: go test ./dsl -run '%s' -update", path, cmp.Diff(string(want), got), t.Name())
	}
}

func sortedKeys(m map[string]string) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
