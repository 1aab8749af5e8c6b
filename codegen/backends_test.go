package codegen_test

import (
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/codegen"
	"github.com/graphc/graphc/compiler"
)

// TestEveryBackendKind: codegen drives every kind of the registry, by the
// row's package and constructor, and rejects what the registry rejects,
// with its error.
func TestEveryBackendKind(t *testing.T) {
	for _, k := range backend.Kinds {
		t.Run(k.Name, func(t *testing.T) {
			target := []string{k.Name, "cpu"}
			if k.Indexed {
				target[0] += "1"
			}
			if k.Name == "cpu" {
				target = target[1:]
			}
			res, err := compiler.Compile("model.g", []byte(model), compiler.Config{Backends: target, Verify: true})
			if err != nil {
				t.Fatal(err)
			}
			src, err := codegen.Generate(res.Graph, codegen.Options{PkgName: "model", Source: "model.g"})
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(token.NewFileSet(), "model_gen.go", src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			imported := false
			for _, imp := range f.Imports {
				imported = imported || imp.Path.Value == strconv.Quote(k.Package) && imp.Name == nil
			}
			if !imported {
				t.Errorf("%s is not imported under its own name", k.Package)
			}
			call := k.PackageName() + "." + k.New + "("
			if k.Indexed {
				call += "1, "
			}
			if !strings.Contains(string(src), call) {
				t.Errorf("no call %s…)", call)
			}
		})
	}

	res, err := compiler.Compile("model.g", []byte(model), compiler.Config{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cuda00", "cuda-1", "cuda", "cpu0", "tpu0"} {
		res.Graph.Backends[0].Name = name
		_, err := codegen.Generate(res.Graph, codegen.Options{PkgName: "model", Source: "model.g"})
		_, _, want := backend.Parse(name)
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("backend %s: %v, want %v", name, err, want)
		}
	}
}
