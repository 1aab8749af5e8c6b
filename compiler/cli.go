package compiler

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/graphc/graphc/codegen"
	"github.com/graphc/graphc/dsl"
	"github.com/graphc/graphc/passes"
)

// Exit codes.
const (
	ExitOK       = 0
	ExitUser     = 1 // the model or the options have a problem the user can fix
	ExitUsage    = 2 // the command line is malformed
	ExitInternal = 3 // a bug in graphc
)

type command struct {
	name    string
	args    string
	summary string
	run     func(e *env, args []string) error
}

// env is one CLI invocation's streams.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// usageError is a malformed command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

var commands []*command

// The command table is filled in init, not in its declaration: the
// commands' own help reads it, which a declaration would make an
// initialization cycle.
func init() {
	commands = []*command{
		{"compile", "[-o DIR] [-pkg NAME] [-main] [-backends LIST] model.g", "generate the model's Go package", cmdCompile},
		{"plan", "[-backends LIST] [-json | -debug | -dot | -svg] [-through PASS] model.g", "print the plan: nodes with backends, splits, buffer offsets", cmdPlan},
		{"run", "[-json] [-stats] [-fill ggml] [-weights FILE.gguf] [-backends LIST] [-threads N] [-dim NAME=VALUE] model.g", "compile, build and run the model, print its outputs", cmdRun},
		{"ggml-check", "[-run [-sim]] [-json] TRACE.json", "compare graphc's plan for a graph recorded from ggml with ggml's decisions", cmdGGMLCheck},
		{"gguf", "new [-fill ggml|random] [-seed N] [-type TYPE] model.g out.gguf | info file.gguf", "write a GGUF file with a model's weights, or list a GGUF file's metadata and tensors", cmdGGUF},
		{"bench", "[-json] [-run REGEX] [-threads LIST] [-time DUR]", "measure the CPU kernels: GEMM and matvec GFLOP/s, bandwidth-bound ops GB/s", cmdBench},
		{"fmt", "[-w] model.g", "print the model in canonical form (-w: rewrite the file)", cmdFmt},
		{"help", "[command]", "show help", nil},
	}
}

// Main runs the graphc command line and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin, stdout, stderr}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		if len(args) > 1 {
			if c := lookup(args[1]); c != nil {
				fmt.Fprintf(stdout, "usage: graphc %s %s\n\n%s\n", c.name, c.args, c.summary)
				return ExitOK
			}
		}
		if len(args) == 0 {
			usage(stderr)
			return ExitUsage
		}
		usage(stdout)
		return ExitOK
	}
	c := lookup(args[0])
	if c == nil || c.run == nil {
		fmt.Fprintf(stderr, "graphc: unknown command %q\n", args[0])
		usage(stderr)
		return ExitUsage
	}
	err := c.run(e, args[1:])
	var ue *usageError
	var ie *InternalError
	var user *UserError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "graphc %s: %s\nusage: graphc %s %s\n", c.name, ue.msg, c.name, c.args)
		return ExitUsage
	case errors.As(err, &ie):
		fmt.Fprintf(stderr, "graphc: internal error: %s\n%s\nPlease report this with the model that triggered it.\n", ie.Msg, ie.Stack)
		return ExitInternal
	case errors.As(err, &user):
		fmt.Fprintln(stderr, strings.TrimRight(user.Msg, "\n"))
		return ExitUser
	default:
		fmt.Fprintf(stderr, "graphc: %v\n", err)
		return ExitUser
	}
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "graphc compiles graph DSL models into Go programs that run their plan.\n\nusage: graphc <command> [flags] model.g\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun 'graphc help <command>' for a command's flags.\n")
}

// flags builds a command's flag set; parse errors become usage errors.
func newFlags(e *env, c string) *flag.FlagSet {
	fs := flag.NewFlagSet(c, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string, nargs int) ([]string, error) {
	out := fs.Output()
	fs.SetOutput(io.Discard) // parse errors are reported as usage errors
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(out, "usage: graphc %s\n\nflags:\n", usageLine(fs.Name()))
			fs.SetOutput(out)
			fs.PrintDefaults()
			return nil, err
		}
		return nil, &usageError{err.Error()}
	}
	if fs.NArg() != nargs {
		return nil, &usageError{fmt.Sprintf("want %d file argument(s), got %d", nargs, fs.NArg())}
	}
	return fs.Args(), nil
}

// usageLine is a command's name and arguments, for help.
func usageLine(name string) string {
	first, _, _ := strings.Cut(name, " ")
	if c := lookup(first); c != nil {
		return c.name + " " + c.args
	}
	return name
}

// targetFlags are the planning flags several commands share.
type targetFlags struct {
	backends     string
	ncopies      int
	offload      bool
	regions      bool
	offloadBatch int
	overrides    overrideFlags
	ngl          int
	memory       string
	weights      string
	maxCopies    int
}

func (t *targetFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.backends, "backends", "", "comma-separated backends in priority order, the cpu last (default: the model's backends statement, or cpu)")
	fs.IntVar(&t.ncopies, "n-copies", 0, "pipeline copies of split inputs (ggml's n_copies), at most 4 (default: the model's set n_copies, or 1)")
	fs.BoolVar(&t.offload, "op-offload", false, "let GPU backends take big-batch ops whose weights are in host memory (ggml's op_offload)")
	fs.BoolVar(&t.regions, "regions", false, "run runs of per-token CPU nodes as parallel regions, one part per thread, without a barrier between nodes (graphc's own; larger compute buffer)")
	fs.IntVar(&t.maxCopies, "max-copies", DefaultMaxCopies, "the most pipeline copies -n-copies may ask for (ggml's GGML_SCHED_MAX_COPIES)")
	fs.IntVar(&t.offloadBatch, "offload-batch", 0, "minimum batch for -op-offload (default: each backend's, 32 for cuda)")
	fs.Var(&t.overrides, "ot", "place weights and state matching REGEX on BACKEND: REGEX=BACKEND (repeatable; first match wins; like llama.cpp's -ot)")
	fs.IntVar(&t.ngl, "ngl", -1, "put the last N layers' weights and state on the first backend (like llama.cpp's -ngl)")
	fs.StringVar(&t.weights, "weights", "", "a GGUF file the model is compiled for: its weights' types (q8_0, f16, …) replace the declared ones; run loads it by mmap")
	fs.StringVar(&t.memory, "memory", "best", "compute buffer planner: "+strings.Join(passes.MemoryStrategies(), ", ")+" (best keeps the smallest per buffer; ggml reproduces ggml-alloc)")
}

// overrideFlags collects repeated -ot flags.
type overrideFlags []Override

func (o *overrideFlags) String() string {
	var s []string
	for _, x := range *o {
		s = append(s, x.Pattern.String()+"="+x.Backend)
	}
	return strings.Join(s, " ")
}

func (o *overrideFlags) Set(v string) error {
	x, err := ParseOverride(v)
	if err != nil {
		return err
	}
	*o = append(*o, x)
	return nil
}

// configWithWeights is config plus the weight types of the -weights file.
func (t *targetFlags) configWithWeights() (Config, error) {
	cfg := t.config()
	if t.weights != "" {
		types, err := WeightTypesOf(t.weights)
		if err != nil {
			return cfg, err
		}
		cfg.WeightTypes = types
	}
	return cfg, nil
}

func (t *targetFlags) config() Config {
	var cfg Config
	cfg.OffloadMinBatch = t.offloadBatch
	cfg.MaxCopies = t.maxCopies
	cfg.Placement.Overrides = t.overrides
	if t.ngl >= 0 {
		ngl := t.ngl
		cfg.Placement.GPULayers = &ngl
	}
	if t.backends != "" {
		for _, b := range strings.Split(t.backends, ",") {
			cfg.Backends = append(cfg.Backends, strings.TrimSpace(b))
		}
	}
	cfg.Options.NCopies = t.ncopies
	cfg.Options.OpOffload = t.offload
	cfg.Options.Regions = t.regions
	cfg.Options.MemoryStrategy = t.memory
	cfg.Verify = true
	return cfg
}

func readModel(path string) ([]byte, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, &UserError{err.Error()}
	}
	return src, nil
}

func cmdFmt(e *env, args []string) error {
	fs := newFlags(e, "fmt")
	write := fs.Bool("w", false, "rewrite the file in place")
	files, err := parseFlags(fs, args, 1)
	if err != nil {
		return err
	}
	src, err := readModel(files[0])
	if err != nil {
		return err
	}
	f, err := dsl.Parse(files[0], src)
	if err != nil {
		return &UserError{dsl.Render(err, src)}
	}
	out := dsl.Format(f)
	if *write {
		if bytes.Equal(out, src) {
			return nil
		}
		return os.WriteFile(files[0], out, 0o644)
	}
	_, err = e.stdout.Write(out)
	return err
}

func cmdPlan(e *env, args []string) error {
	fs := newFlags(e, "plan")
	var tf targetFlags
	tf.register(fs)
	asJSON := fs.Bool("json", false, "print the plan as JSON (schema: docs/plan-json.md)")
	debug := fs.Bool("debug", false, "explain every split and node, like GGML_SCHED_DEBUG=2")
	dot := fs.Bool("dot", false, "print the plan as a Graphviz graph: splits as clusters per backend, parallel regions as dashed clusters, copies as labelled edges")
	svg := fs.Bool("svg", false, "render the -dot graph as SVG (needs Graphviz's dot)")
	through := fs.String("through", "", "stop after this pass and print the graph as it is then ("+strings.Join(passes.Passes(), ", ")+")")
	files, err := parseFlags(fs, args, 1)
	if err != nil {
		return err
	}
	src, err := readModel(files[0])
	if err != nil {
		return err
	}
	cfg, err := tf.configWithWeights()
	if err != nil {
		return err
	}
	if *debug {
		cfg.Debug = 1
	}
	if *through != "" && !slices.Contains(passes.Passes(), *through) {
		return &usageError{fmt.Sprintf("-through %s: no such pass (passes: %s)", *through, strings.Join(passes.Passes(), ", "))}
	}
	cfg.Through = *through
	res, err := Compile(files[0], src, cfg)
	if err != nil {
		return err
	}
	switch {
	case *asJSON:
		return writeJSON(e.stdout, PlanJSON(res.Graph))
	case *dot:
		_, err = io.WriteString(e.stdout, Dot(res.Graph))
		return err
	case *svg:
		b, err := SVG(res.Graph)
		if err != nil {
			return err
		}
		_, err = e.stdout.Write(b)
		return err
	case *debug:
		_, err = io.WriteString(e.stdout, DebugReport(res.Graph))
		return err
	}
	_, err = io.WriteString(e.stdout, res.Graph.Format())
	return err
}

func cmdCompile(e *env, args []string) error {
	fs := newFlags(e, "compile")
	var tf targetFlags
	tf.register(fs)
	out := fs.String("o", "", "output directory (default: the model's directory)")
	pkg := fs.String("pkg", "", "package name (default: the output directory's name; main with -main)")
	withMain := fs.Bool("main", false, "also emit a runnable main that fills weights deterministically and prints the outputs")
	files, err := parseFlags(fs, args, 1)
	if err != nil {
		return err
	}
	cfg, err := tf.configWithWeights()
	if err != nil {
		return err
	}
	path, err := CompileFile(files[0], *out, *pkg, *withMain, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stderr, "graphc: wrote", path)
	return nil
}

// CompileFile compiles model into a Go file in dir (default: the model's
// directory) and returns its path.
func CompileFile(model, dir, pkg string, withMain bool, cfg Config) (string, error) {
	src, err := readModel(model)
	if err != nil {
		return "", err
	}
	if dir == "" {
		dir = filepath.Dir(model)
	}
	code, err := GenerateFile(model, src, dir, pkg, withMain, cfg)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", &UserError{err.Error()}
	}
	base := strings.TrimSuffix(filepath.Base(model), filepath.Ext(model))
	path := filepath.Join(dir, base+"_gen.go")
	if err := os.WriteFile(path, code, 0o644); err != nil {
		return "", &UserError{err.Error()}
	}
	return path, nil
}

// GenerateFile compiles the model source src and returns the Go file that
// CompileFile would write into dir: the package is named pkg, or after dir.
func GenerateFile(model string, src []byte, dir, pkg string, withMain bool, cfg Config) ([]byte, error) {
	res, err := Compile(model, src, cfg)
	if err != nil {
		return nil, err
	}
	if pkg == "" {
		pkg = packageName(dir, withMain)
	}
	return Generate(res, codegen.Options{PkgName: pkg, Main: withMain, Source: filepath.Base(model)})
}

func packageName(dir string, withMain bool) string {
	if withMain {
		return "main"
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	var b strings.Builder
	for _, r := range strings.ToLower(filepath.Base(abs)) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' && b.Len() > 0 {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "model"
	}
	return b.String()
}

// dimFlags collects repeated -dim NAME=VALUE flags.
type dimFlags map[string]string

func (d dimFlags) String() string {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+"="+d[k])
	}
	return strings.Join(parts, ",")
}

func (d dimFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" || v == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", s)
	}
	d[k] = v
	return nil
}
