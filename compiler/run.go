package compiler

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"github.com/graphc/graphc/codegen"
)

func cmdRun(e *env, args []string) error {
	fs := newFlags(e, "run")
	var tf targetFlags
	tf.register(fs)
	asJSON := fs.Bool("json", false, `print {"outputs":[{"name", "shape", "values"}]}`)
	fill := fs.String("fill", "ggml", "how weights, state and inputs are filled: ggml (the conformance traces' rule; inputs by their fill expressions)")
	threads := fs.Int("threads", 0, "worker threads (0: every core)")
	stats := fs.Bool("stats", false, "print the evaluation's statistics to stderr: per split its backend, nodes, bytes copied in, copy and compute time")
	dims := dimFlags{}
	fs.Var(dims, "dim", "value of a bounded dim, NAME=VALUE (repeatable; default: its bound)")
	files, err := parseFlags(fs, args, 1)
	if err != nil {
		return err
	}
	if *fill != "ggml" {
		return &usageError{fmt.Sprintf("-fill %s: only ggml is supported", *fill)}
	}
	src, err := readModel(files[0])
	if err != nil {
		return err
	}
	cfg, err := tf.configWithWeights()
	if err != nil {
		return err
	}
	cfg.ThisMachine = true
	res, err := Compile(files[0], src, cfg)
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(e.stderr, "graphc: warning:", w)
	}
	var runArgs []string
	if *asJSON {
		runArgs = append(runArgs, "-json")
	}
	if *stats {
		runArgs = append(runArgs, "-stats")
	}
	runArgs = append(runArgs, fmt.Sprintf("-threads=%d", *threads))
	if tf.weights != "" {
		abs, err := filepath.Abs(tf.weights)
		if err != nil {
			return &UserError{err.Error()}
		}
		runArgs = append(runArgs, "-weights="+abs)
	}
	known := map[string]bool{}
	for _, d := range res.Graph.Dims {
		if d.Bounded {
			known[d.Name] = true
		}
	}
	for _, name := range strings.Split(dims.String(), ",") {
		if name == "" {
			continue
		}
		k, v, _ := strings.Cut(name, "=")
		if !known[k] {
			return &UserError{fmt.Sprintf("-dim %s: %s has no bounded dim %s", name, files[0], k)}
		}
		runArgs = append(runArgs, "-"+k+"="+v)
	}
	code, err := Generate(res, codegen.Options{PkgName: "main", Main: true, Source: filepath.Base(files[0])})
	if err != nil {
		return err
	}
	bin, cleanup, err := BuildMain(code)
	if err != nil {
		return err
	}
	defer cleanup()
	cmd := exec.Command(bin, runArgs...)
	cmd.Stdout, cmd.Stderr = e.stdout, e.stderr
	if err := cmd.Run(); err != nil {
		return &UserError{fmt.Sprintf("running the compiled model: %v", err)}
	}
	return nil
}

// BuildMain builds generated main-package source into a binary, in a
// temporary module whose graphc dependency is replaced by this repository.
// cleanup removes the temporary files.
func BuildMain(code []byte) (bin string, cleanup func(), err error) {
	dir, cleanup, err := TempModule(map[string][]byte{"model_gen.go": code})
	if err != nil {
		return "", nil, err
	}
	bin = filepath.Join(dir, "model")
	cmd := exec.Command("go", "build", "-mod=mod", "-o", bin, ".")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		cleanup()
		return "", nil, &InternalError{Msg: fmt.Sprintf("generated code does not build: %v\n%s", err, out.String())}
	}
	return bin, cleanup, nil
}

// TempModule writes files (paths relative to the module root) into a new
// temporary module, graphcrun, whose graphc dependency is replaced by this
// repository. cleanup removes it.
func TempModule(files map[string][]byte) (dir string, cleanup func(), err error) {
	root, err := RepoRoot()
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

// RepoRoot finds the graphc module's source: $GRAPHC_ROOT, the module this
// binary was built from, or a parent of the working directory.
func RepoRoot() (string, error) {
	isRoot := func(dir string) bool {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		return err == nil && bytes.HasPrefix(b, []byte("module github.com/graphc/graphc\n"))
	}
	if r := os.Getenv("GRAPHC_ROOT"); r != "" && isRoot(r) {
		return r, nil
	}
	if _, file, _, ok := goruntime.Caller(0); ok {
		if dir := filepath.Dir(filepath.Dir(file)); isRoot(dir) {
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
	return "", &UserError{"cannot find graphc's source to build against: set GRAPHC_ROOT to the repository"}
}
