package compiler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/graphc/graphc/codegen"
	"github.com/graphc/graphc/internal/planview"
)

// FuzzCompile feeds arbitrary models through the whole pipeline: every
// input must end in a plan and generated code, or in user errors; an
// internal error (a BUG: panic) is a failure.
func FuzzCompile(f *testing.F) {
	for _, pattern := range []string{"../golden/*.txtar", "testdata/errors/*.txtar"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				f.Fatal(err)
			}
			for _, s := range ar.Files {
				if s.Name == "model.g" {
					f.Add(string(s.Data))
				}
			}
		}
	}
	for _, file := range []string{"../examples/llama/llama.g", "../examples/mlp/mlp.g"} {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, src string) {
		res, err := Compile("fuzz.g", []byte(src), Config{Verify: true})
		if err != nil {
			if ie, ok := err.(*InternalError); ok {
				t.Fatalf("internal error: %s\n%s", ie.Msg, ie.Stack)
			}
			if !strings.Contains(err.Error(), "fuzz.g") && !strings.Contains(err.Error(), "backend") {
				t.Errorf("error without a position: %v", err)
			}
			return
		}
		if _, err := Generate(res, codegen.Options{PkgName: "m", Source: "fuzz.g"}); err != nil {
			if _, ok := err.(*InternalError); ok {
				t.Fatalf("codegen: %v", err)
			}
		}
		_ = planview.Dot(res.Graph)
		_ = planview.DebugReport(res.Graph)
		_ = planview.JSON(res.Graph)
	})
}
