package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/internal/atomicfile"
)

// programsEnv names a directory of generated programs built beforehand,
// each named by the hash of its source (programKey): graphc runs the one
// there instead of building it, and puts each program it builds there.
// It lets a machine without Go run what one with Go built
// (scripts/cuda-check). The key is the generated source's, not the
// runtime's, so such a directory belongs to one checkout's state.
const programsEnv = "GRAPHC_PROGRAMS"

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
	programs := os.Getenv(programsEnv)
	key := programKey(files)
	if programs != "" {
		p := filepath.Join(programs, key)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, func() {}, nil
		}
		if !haveGo() {
			return "", nil, &compiler.UserError{Msg: fmt.Sprintf("no Go toolchain to build the generated program, and $%s (%s) has no program %s built from its source: "+
				"run the same command where Go is, with $%[1]s set to the directory, and copy it here", programsEnv, programs, key)}
		}
	}
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
	if programs != "" {
		if err := keepProgram(bin, filepath.Join(programs, key)); err != nil {
			cleanup()
			return "", nil, &compiler.UserError{Msg: fmt.Sprintf("$%s: %v", programsEnv, err)}
		}
	}
	return bin, cleanup, nil
}

// programKey names a program built from files for this GOOS/GOARCH: the
// SHA-256 of the platform and of the files' names and contents.
func programKey(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	fmt.Fprintf(h, "%s/%s\n", runtime.GOOS, runtime.GOARCH)
	for _, n := range names {
		fmt.Fprintf(h, "%q %d\n", n, len(files[n]))
		h.Write(files[n])
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// keepProgram copies the built binary bin to path, whole or not at all.
func keepProgram(bin, path string) error {
	data, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o755)
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
