package dsl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks that Parse and Check never panic, that every error is
// a positioned ErrorList, and that Format is stable on whatever parses.
// The seeds are the testdata programs and the inputs of the golden
// archives; testdata/fuzz/FuzzParse holds more.
//
//	go test -fuzz=FuzzParse -fuzztime=60s ./dsl
func FuzzParse(f *testing.F) {
	for _, path := range testdataFiles(f) {
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	archives, _ := filepath.Glob(filepath.Join("testdata", "*", "*.txtar"))
	for _, path := range archives {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		if in := parseArchive(data).file("input.g"); in != nil {
			f.Add(in.data)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := Parse("fuzz.g", src)
		if err != nil {
			checkErrorList(t, err, src)
			return
		}
		Inspect(file, func(n Node) bool {
			if n, ok := n.(*Name); ok {
				var b strings.Builder
				for _, p := range n.Parts {
					if p.Var != "" {
						b.WriteString("{" + p.Var + "}")
					} else {
						b.WriteString(p.Lit)
					}
				}
				if b.String() != n.Text {
					t.Fatalf("name %q has parts %v", n.Text, n.Parts)
				}
			}
			return true
		})
		if err := Check(file); err != nil {
			checkErrorList(t, err, src)
		}
		roundTrip(t, "fuzz.g", src)
	})
}

// checkErrorList checks that err is a non-empty ErrorList of positioned
// errors that are not internal errors, and that it renders.
func checkErrorList(t *testing.T, err error, src []byte) {
	t.Helper()
	var list ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		t.Fatalf("error %T %v is not a non-empty ErrorList", err, err)
	}
	for _, e := range list {
		if e.Pos.Line == 0 || strings.Contains(e.Msg, "internal error") || strings.HasPrefix(e.Msg, "BUG") {
			t.Fatalf("bad error %v\ninput: %q", e, src)
		}
	}
	_ = Render(err, src)
}
