package compiler

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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
	Offload  bool     `json:"op_offload"`
}

func goldenConfig(t *testing.T, comment string) Config {
	var opts goldenOptions
	if first, _, _ := strings.Cut(comment, "\n"); strings.HasPrefix(first, "{") {
		if err := json.Unmarshal([]byte(first), &opts); err != nil {
			t.Fatalf("options: %v", err)
		}
	}
	cfg := Config{Backends: opts.Backends, Options: passes.Options{NCopies: opts.NCopies, OpOffload: opts.Offload}, Verify: true}
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
// and generated code (or the errors) with the archive. The code of plans
// of more than goldenCodeNodes nodes is generated (and vetted, by
// TestGoldenCodeVets) but not kept: the archive is for what a reviewer
// reads, and the examples hold the large models' code.
func TestGolden(t *testing.T) {
	golden.Run(t, "../golden/*.txtar", func(t *testing.T, comment string, in map[string]string) map[string]string {
		out, code := compileCase(t, goldenConfig(t, comment), in["model.g"])
		out["gen.go"] = ""
		if len(strings.Split(out["plan"], "\n")) <= goldenCodeNodes {
			out["gen.go"] = string(code)
		}
		return out
	})
}

// goldenCodeNodes is the most plan lines a golden case keeps the code of.
const goldenCodeNodes = 80

// compileCase compiles a golden model: its archive sections, and the
// generated code (nil where there is none).
func compileCase(t *testing.T, cfg Config, src string) (map[string]string, []byte) {
	res, err := Compile("model.g", []byte(src), cfg)
	if err != nil {
		return map[string]string{"errors": err.Error() + "\n"}, nil
	}
	out := map[string]string{"plan": res.Graph.Format()}
	code, err := Generate(res, codegen.Options{PkgName: "model", Source: "model.g"})
	if err != nil {
		out["gen.err"] = err.Error() + "\n"
	}
	return out, code
}

// TestGoldenCodeVets type-checks and vets every golden model's generated
// code, for every target (cuda and metal included): one package each, in
// one temporary module that requires this checkout.
func TestGoldenCodeVets(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go vet")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	files := map[string][]byte{
		"go.mod": []byte("module goldens\n\ngo 1.26\n\nrequire github.com/graphc/graphc v0.0.0\n\nreplace github.com/graphc/graphc => " + root + "\n"),
		"go.sum": sum,
	}
	golden.Run(t, "../golden/*.txtar", func(t *testing.T, comment string, in map[string]string) map[string]string {
		if _, code := compileCase(t, goldenConfig(t, comment), in["model.g"]); code != nil {
			files[strings.ReplaceAll(t.Name(), "/", "_")+"/model_gen.go"] = code
		}
		return nil
	})
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "vet", "-mod=mod", "./...")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet of the goldens' generated code: %v\n%s", err, out)
	}
}

// TestDeterministic compiles every golden model and example twice and
// requires byte-identical plans and code.
func TestDeterministic(t *testing.T) {
	golden.Run(t, "../golden/*.txtar", func(t *testing.T, comment string, in map[string]string) map[string]string {
		cfg := goldenConfig(t, comment)
		a, codeA := compileCase(t, cfg, in["model.g"])
		b, codeB := compileCase(t, cfg, in["model.g"])
		for k := range a {
			if a[k] != b[k] {
				t.Errorf("section %s differs between two compilations", k)
			}
		}
		if string(codeA) != string(codeB) {
			t.Errorf("the generated code differs between two compilations")
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
