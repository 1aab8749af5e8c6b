package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/graphc/graphc/compiler"
)

// buildMain builds generated main-package source into a binary, in a
// temporary module whose graphc dependency is replaced by this repository.
// cleanup removes the temporary files.
func buildMain(ctx context.Context, code []byte) (bin string, cleanup func(), err error) {
	return buildModule(ctx, map[string][]byte{"model_gen.go": code})
}

// buildModule builds the main package at the root of a temporary module
// holding files (see tempModule). cleanup removes the module, binary
// included.
func buildModule(ctx context.Context, files map[string][]byte) (bin string, cleanup func(), err error) {
	dir, cleanup, err := tempModule(files)
	if err != nil {
		return "", nil, err
	}
	bin = filepath.Join(dir, "model")
	cmd := exec.CommandContext(ctx, "go", "build", "-mod=mod", "-o", bin, ".")
	killGroupOnCancel(cmd)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		cleanup()
		return "", nil, &compiler.InternalError{Msg: fmt.Sprintf("generated code does not build: %v\n%s", err, out.String())}
	}
	return bin, cleanup, nil
}

// tempModule writes files (paths relative to the module root) into a new
// temporary module, graphcrun, whose graphc dependency is replaced by this
// repository. cleanup removes it.
func tempModule(files map[string][]byte) (dir string, cleanup func(), err error) {
	root, err := repoRoot()
	if err != nil {
		return "", nil, err
	}
	dir, err = os.MkdirTemp("", "graphc-run-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	gomod := fmt.Sprintf("module graphcrun\n\ngo 1.26\n\nrequire github.com/graphc/graphc v0.0.0\n\nreplace github.com/graphc/graphc => %s\n", root)
	sum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	all := map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum}
	for name, data := range files {
		all[name] = data
	}
	for name, data := range all {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			cleanup()
			return "", nil, err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			cleanup()
			return "", nil, err
		}
	}
	return dir, cleanup, nil
}

// repoRoot finds the graphc module's source: $GRAPHC_ROOT, the module this
// binary was built from, or a parent of the working directory.
func repoRoot() (string, error) {
	isRoot := func(dir string) bool {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		return err == nil && bytes.HasPrefix(b, []byte("module github.com/graphc/graphc\n"))
	}
	if r := os.Getenv("GRAPHC_ROOT"); r != "" {
		// A wrong setting is an error, not a reason to build against
		// whatever checkout the fallbacks find.
		if !isRoot(r) {
			return "", &compiler.UserError{Msg: fmt.Sprintf("GRAPHC_ROOT=%s has no go.mod of module github.com/graphc/graphc: set it to graphc's checkout", r)}
		}
		return r, nil
	}
	if _, file, _, ok := runtime.Caller(0); ok { // file is cmd/graphc/internal/cli/build.go
		if dir := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(file))))); isRoot(dir) {
			return dir, nil
		}
	}
	wd, _ := os.Getwd()
	for dir := wd; ; dir = filepath.Dir(dir) {
		if isRoot(dir) {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	return "", &compiler.UserError{Msg: "cannot find graphc's source to build against: set GRAPHC_ROOT to the repository"}
}
