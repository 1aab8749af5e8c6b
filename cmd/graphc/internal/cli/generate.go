package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/graphc/graphc/codegen"
	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/examples"
	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/runtime/lm/lmcli"
)

// Defaults of the text commands' plan: llama.cpp's n_ctx and n_ubatch.
const (
	defaultGenCtx   = 4096
	defaultGenBatch = 512
)

// cmdText makes generate, chat and serve: each compiles the DSL file for
// the -m file's architecture (or -model's) into a program for that file,
// builds it once into graphc's cache and runs its command of the same
// name (runtime/lm/lmcli), which does the work.
func cmdText(name string) func(e *env, args []string) error {
	return func(e *env, args []string) error {
		fs := newFlags(e, name)
		var tf targetFlags
		tf.registerText(fs)
		model := fs.String("model", "", "compile this DSL file instead of the one built in for the file's general.architecture ("+strings.Join(examples.Archs(), ", ")+")")
		var lf lmcli.Flags
		lf.Register(fs, name)
		if _, err := parseFlags(fs, args, 0, 0); err != nil {
			return err
		}
		if lf.Model == "" {
			return &usageError{"-m FILE.gguf: the model's weights are needed"}
		}
		if err := lf.Sampling.Check(); err != nil {
			return &usageError{err.Error()}
		}
		bin, err := textProgram(e, &tf, lf.Model, *model)
		if err != nil {
			return err
		}
		// The program takes the command's own flags, as given.
		progArgs := []string{name}
		fs.Visit(func(f *flag.Flag) {
			if !slices.Contains(textFlags, f.Name) && f.Name != "model" {
				progArgs = append(progArgs, "-"+f.Name+"="+f.Value.String())
			}
		})
		return runProgram(e, bin, progArgs)
	}
}

// textFlags are the compile flags generate, chat and serve take.
var textFlags = []string{"ctx", "batch", "fa", "ctk", "ctv", "backends", "ngl", "ot", "cpu-moe", "n-cpu-moe", "op-offload"}

// registerText registers the compile flags of the text commands, the
// rest of targetFlags at their defaults.
func (t *targetFlags) registerText(fs *flag.FlagSet) {
	all := flag.NewFlagSet("", flag.ContinueOnError)
	t.register(all)
	t.fs = fs
	for _, n := range textFlags {
		f := all.Lookup(n)
		if f == nil {
			panic("BUG: no target flag -" + n)
		}
		usage := f.Usage
		switch n {
		case "ctx":
			usage = fmt.Sprintf(`the KV cache's size in tokens (llama.cpp's -c; default %d, at most the file's <arch>.context_length)`, defaultGenCtx)
		case "batch":
			usage = fmt.Sprintf(`the most tokens in one evaluation (llama.cpp's -ub; default %d)`, defaultGenBatch)
		}
		fs.Var(f.Value, n, usage)
	}
}

// textProgram compiles the model for the file at path and builds its
// program, or finds it in graphc's cache: the key is the model's source,
// the compile flags, the file's metadata and tensors and the checkout's
// code, so neither compiling nor building runs again for the same file.
func textProgram(e *env, tf *targetFlags, path, modelFile string) (string, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return "", &compiler.UserError{Msg: err.Error()}
	}
	defer f.Close()
	name, src := modelFile, []byte(nil)
	if modelFile != "" {
		if src, err = readModel(modelFile); err != nil {
			return "", err
		}
	} else {
		arch, _ := f.MetaString("general.architecture")
		var ok bool
		if name, src, ok = examples.ForArch(arch); !ok {
			return "", &compiler.UserError{Msg: fmt.Sprintf("%s: architecture %q has no built-in model (graphc has %s); write one and give it with -model FILE.g", path, arch, strings.Join(examples.Archs(), ", "))}
		}
	}
	given := map[string]bool{}
	tf.fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	if !given["ctx"] {
		tf.ctx = defaultGenCtx
		if n, ok := contextLength(f.File); ok && n < int64(tf.ctx) {
			tf.ctx = int(n)
		}
	}
	if !given["batch"] {
		tf.batch = min(defaultGenBatch, tf.ctx)
	}
	if err := tf.check(); err != nil {
		return "", err
	}
	file, err := compiler.ReadWeightsFile(path)
	if err != nil {
		return "", err
	}
	key, err := textKey(name, src, tf, file)
	if err != nil {
		return "", err
	}
	dir, err := programCache()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, key)
	if st, err := os.Stat(bin); err == nil && st.Mode().IsRegular() {
		now := time.Now()
		os.Chtimes(bin, now, now) // the newest used, for pruneCache
		return bin, nil
	}
	fmt.Fprintf(e.stderr, "graphc: compiling %s for %s (once; cached in %s)\n", name, filepath.Base(path), dir)
	cfg := tf.config()
	cfg.File = file
	cfg.ThisMachine = true
	res, err := compiler.Compile(name, src, cfg)
	if err != nil {
		return "", err
	}
	warn(e, res)
	if err := fitsHost(res, tf.ctx); err != nil {
		return "", err
	}
	code, err := compiler.Generate(res, codegen.Options{PkgName: "main", Main: true, Source: filepath.Base(name)})
	if err != nil {
		return "", err
	}
	debug.FreeOSMemory()
	built, cleanup, err := buildMain(e.ctx, code)
	if err != nil {
		return "", err
	}
	defer cleanup()
	if err := keepProgram(built, bin); err != nil {
		return "", &compiler.UserError{Msg: fmt.Sprintf("caching the program: %v", err)}
	}
	pruneCache(dir, keptPrograms)
	return bin, nil
}

// keptPrograms is how many text programs the cache keeps, the most
// recently used: each is tens of megabytes, and every change of the
// checkout makes new ones.
const keptPrograms = 8

// pruneCache removes all but the keep most recently used programs in dir.
func pruneCache(dir string, keep int) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type prog struct {
		path string
		used time.Time
	}
	var progs []prog
	for _, e := range entries {
		if st, err := e.Info(); err == nil && st.Mode().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			progs = append(progs, prog{filepath.Join(dir, e.Name()), st.ModTime()})
		}
	}
	sort.Slice(progs, func(i, j int) bool { return progs[i].used.After(progs[j].used) })
	for _, p := range progs[min(keep, len(progs)):] {
		os.Remove(p.path)
	}
}

// contextLength is the file's <arch>.context_length.
func contextLength(f *gguf.File) (int64, bool) {
	arch, _ := f.MetaString("general.architecture")
	return f.MetaInt(arch + ".context_length")
}

// programCache is where built text programs are kept: $GRAPHC_CACHE, or
// graphc/programs in the user's cache directory.
func programCache() (string, error) {
	dir := os.Getenv("GRAPHC_CACHE")
	if dir == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return "", &compiler.UserError{Msg: fmt.Sprintf("no cache directory for the built program: %v; set $GRAPHC_CACHE", err)}
		}
		dir = filepath.Join(c, "graphc")
	}
	return filepath.Join(dir, "programs"), nil
}

// textKey names a text program: what it was compiled from — the model's
// source, the flags, the file's tensors and types and its metadata (an
// array by its length, all meta(…) reads of one: the tokenizer's
// vocabulary is read by the program, not compiled in) — and the state of
// the checkout it links (each Go file's name, size and modification time:
// the files the build reads, without reading them).
func textKey(name string, src []byte, tf *targetFlags, file *compiler.WeightsFile) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s/%s\n%q %d\n", runtime.GOOS, runtime.GOARCH, name, len(src))
	h.Write(src)
	fmt.Fprintf(h, "\nctx=%d batch=%d fa=%s ctk=%s ctv=%s backends=%s ngl=%d offload=%t\n", tf.ctx, tf.batch, tf.fa, tf.ctk, tf.ctv, tf.backends, tf.ngl, tf.offload)
	for _, o := range tf.overrides {
		fmt.Fprintf(h, "ot %q=%s\n", o.Pattern, o.Backend)
	}
	for _, n := range file.Names {
		fmt.Fprintf(h, "%q %v\n", n, file.Types[n])
	}
	for _, k := range slices.Sorted(maps.Keys(file.Meta)) {
		v := file.Meta[k]
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice {
			v = fmt.Sprintf("array of %d", rv.Len())
		}
		fmt.Fprintf(h, "%q %T %v\n", k, v, v)
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	var files []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".s") || strings.HasSuffix(p, ".h") || d.Name() == "go.mod" || d.Name() == "go.sum") {
			st, err := d.Info()
			if err != nil {
				return err
			}
			files = append(files, fmt.Sprintf("%s %d %d", p[len(root):], st.Size(), st.ModTime().UnixNano()))
		}
		return nil
	})
	if err != nil {
		return "", &compiler.UserError{Msg: fmt.Sprintf("reading the checkout %s: %v", root, err)}
	}
	sort.Strings(files)
	for _, l := range files {
		fmt.Fprintln(h, l)
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintln(h, bi.GoVersion)
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// runProgram runs the built program with args, its streams and signals
// graphc's. Ctrl-C reaches the program from the terminal as it reaches
// graphc, which does not end it: chat stops an answer with it. A
// termination signal sent to graphc alone (kill PID, a service manager
// stopping serve) is passed on, so that the program shuts down as it
// would run directly. Its exit status becomes graphc's.
func runProgram(e *env, bin string, args []string) error {
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, e.stdout, e.stderr
	sigs := make(chan os.Signal, 1)
	if len(forwardedSignals) > 0 { // Notify with none would take them all
		signal.Notify(sigs, forwardedSignals...)
		defer signal.Stop(sigs)
	}
	if err := cmd.Start(); err != nil {
		return &compiler.UserError{Msg: fmt.Sprintf("running the compiled model: %v", err)}
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exitStatus(exit.ExitCode())
	}
	if err != nil {
		return &compiler.UserError{Msg: fmt.Sprintf("running the compiled model: %v", err)}
	}
	return nil
}

// exitStatus is a program's exit status, which graphc passes on: the
// program has said what went wrong.
type exitStatus int

func (s exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(s)) }
