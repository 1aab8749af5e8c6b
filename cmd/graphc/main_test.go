package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLinksNoGeneratedCode: graphc must build when generated code is stale
// or broken, because `go generate ./examples/...` runs it to repair that
// code.
func TestLinksNoGeneratedCode(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		// The examples package itself holds only the DSL sources graphc
		// embeds; its subpackages hold the generated code.
		if strings.HasPrefix(pkg, "github.com/graphc/graphc/examples/") {
			t.Errorf("graphc depends on %s, generated code", pkg)
		}
	}
}

// TestGenerateRepairsBrokenCode breaks every generated file of the examples
// in a copy of the module and runs the documented repair, go generate
// ./examples/..., there: it must rewrite the files as committed, and they
// must build.
func TestGenerateRepairsBrokenCode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds graphc in a copy of the module")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := copyModule(root, dir); err != nil {
		t.Fatal(err)
	}
	gens, _ := filepath.Glob(filepath.Join(dir, "examples", "*", "*_gen.go"))
	if len(gens) == 0 {
		t.Fatal("no generated files in examples/")
	}
	want := map[string][]byte{}
	for _, gen := range gens {
		b, err := os.ReadFile(gen)
		if err != nil {
			t.Fatal(err)
		}
		want[gen] = b
		// Broken as a bad merge or an old graphc leaves it: the generated
		// header (by which compile knows it may replace the file) stays.
		header, _, _ := bytes.Cut(b, []byte("\n"))
		pkg, _, _ := bytes.Cut(b[bytes.Index(b, []byte("\npackage "))+1:], []byte("\n"))
		if err := os.WriteFile(gen, []byte(string(header)+"\n\n"+string(pkg)+"\n\nfunc broken( {\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// -trimpath makes the copy's build actions the checkout's, so that
	// after the first run the build cache has graphc.
	goCmd := func(args ...string) {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-trimpath")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	goCmd("generate", "./examples/...")
	for _, gen := range gens {
		got, err := os.ReadFile(gen)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want[gen]) {
			t.Errorf("go generate wrote %s differently from the committed file", gen)
		}
	}
	goCmd("build", "./examples/...")
}

// copyModule copies the module's go.mod, go.sum and source tree, without
// version control, from src to dst.
func copyModule(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil // a worktree's .git file
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
