package compiler

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/graphc/graphc/codegen"
	"github.com/graphc/graphc/internal/golden"
	"github.com/graphc/graphc/passes"
)

// goldenOptions are a golden case's options: the archive comment's first
// line, when it is a JSON object.
type goldenOptions struct {
	Backends []string `json:"backends"`
	NCopies  int      `json:"n_copies"`
	NGL      *int     `json:"ngl"` // -ngl
	OT       []string `json:"ot"`  // -ot rules
}

func goldenConfig(t *testing.T, comment string) Config {
	var opts goldenOptions
	if first, _, _ := strings.Cut(comment, "\n"); strings.HasPrefix(first, "{") {
		if err := json.Unmarshal([]byte(first), &opts); err != nil {
			t.Fatalf("options: %v", err)
		}
	}
	cfg := Config{Backends: opts.Backends, Options: passes.Options{NCopies: opts.NCopies}, Verify: true}
	cfg.Placement.GPULayers = opts.NGL
	for _, o := range opts.OT {
		r, err := ParseOverride(o)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Placement.Overrides = append(cfg.Placement.Overrides, r)
	}
	return cfg
}

// TestGolden compiles every ../golden/*.txtar model and compares its plan
// and generated code (or the errors) with the archive.
func TestGolden(t *testing.T) {
	golden.Run(t, "../golden/*.txtar", func(t *testing.T, comment string, in map[string]string) map[string]string {
		return compileCase(t, goldenConfig(t, comment), in["model.g"])
	})
}

func compileCase(t *testing.T, cfg Config, src string) map[string]string {
	res, err := Compile("model.g", []byte(src), cfg)
	if err != nil {
		return map[string]string{"errors": err.Error() + "\n"}
	}
	out := map[string]string{"plan": res.Graph.Format()}
	code, err := Generate(res, codegen.Options{PkgName: "model", Source: "model.g"})
	if err != nil {
		out["gen.err"] = err.Error() + "\n"
	} else {
		out["gen.go"] = string(code)
	}
	return out
}

// TestDeterministic compiles every golden model and example twice and
// requires byte-identical plans and code.
func TestDeterministic(t *testing.T) {
	golden.Run(t, "../golden/*.txtar", func(t *testing.T, comment string, in map[string]string) map[string]string {
		cfg := goldenConfig(t, comment)
		a := compileCase(t, cfg, in["model.g"])
		b := compileCase(t, cfg, in["model.g"])
		for k := range a {
			if a[k] != b[k] {
				t.Errorf("section %s differs between two compilations", k)
			}
		}
		return nil
	})
}

// TestErrors checks the rendered errors of broken models: positions, source
// lines, carets, every problem at once, and never a panic.
func TestErrors(t *testing.T) {
	golden.Run(t, "testdata/errors/*.txtar", func(t *testing.T, comment string, in map[string]string) map[string]string {
		_, err := Compile("model.g", []byte(in["model.g"]), Config{Verify: true})
		if err == nil {
			t.Fatal("compiled without errors")
		}
		if _, ok := err.(*UserError); !ok {
			t.Fatalf("got %T, want a user error: %v", err, err)
		}
		return map[string]string{"errors": err.Error() + "\n"}
	})
}
