package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/passes"
	"github.com/graphc/graphc/tensor"
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

// env is one CLI invocation's streams, and its context: ended by Ctrl-C
// or SIGTERM, which kills the builds and programs it started.
type env struct {
	ctx            context.Context
	stdout, stderr io.Writer
	flagSets       *[]*flag.FlagSet // when set, newFlags adds each command's flag set here (Reference)
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
		{"compile", "[-o DIR] [-pkg NAME] [-main] [-f] [-backends LIST] model.g", "generate the model's Go package", cmdCompile},
		{"plan", "[-backends LIST] [-json | -debug | -dot | -svg] [-through PASS] model.g", "print the plan: nodes with backends, splits, buffer offsets", cmdPlan},
		{"run", "[-json] [-stats] [-fill ggml] [-weights FILE.gguf] [-backends LIST] [-threads N] [-dim NAME=VALUE] model.g", "compile, build and run the model, print its outputs", cmdRun},
		{"generate", "-m FILE.gguf -p TEXT [-n N] [-temp T] [-top-k K] … [-ctx N]", "generate text after a prompt with the model built in for the file's architecture (compiled and built once, then cached)", cmdText("generate")},
		{"chat", "-m FILE.gguf [-sys TEXT] [sampling flags] [-ctx N]", "chat with the model through the file's chat template (Ctrl-C stops an answer)", cmdText("chat")},
		{"serve", "-m FILE.gguf [-host ADDR] [-port N] [-parallel N] [-ctx N]", "serve an OpenAI-compatible HTTP API (/v1/completions, /v1/chat/completions, …), decoding concurrent requests together", cmdText("serve")},
		{"ggml-check", "[-run [-sim] [-rpc]] [-json] TRACE.json...", "compare graphc's plans with ggml's recorded decisions, one line per trace", cmdGGMLCheck},
		{"gguf", "new [-fill ggml|random] [-seed N] [-type TYPE] model.g out.gguf | info file.gguf", "write a GGUF file with a model's weights, or list a GGUF file's metadata and tensors", cmdGGUF},
		{"bench", "[-ggml] [-json] [-run REGEX] [-threads LIST] [-time DUR] | -llama [-short] [-file F.gguf …] [-threads LIST]", "measure the CPU kernels: GEMM and matvec GFLOP/s, bandwidth-bound ops GB/s; -ggml: the q4_0/q8_0 products beside ggml's CPU mul_mat, plain and repacked; -llama: pp512/tg128 beside llama.cpp on the same files", cmdBench},
		{"calibrate", "[-o FILE] [-time DUR] [-threads N]", "measure the kernels and copies the cost model prices, for -placement cost -cost FILE", cmdCalibrate},
		{"devices", "", "list graphc's backends and the ggml devices this machine has (GPUs through $GRAPHC_GGML_PATH)", cmdDevices},
		{"fmt", "[-w] model.g", "print the model in canonical form (-w: rewrite the file)", cmdFmt},
		{"help", "[command]", "show help", nil},
	}
}

// ExitInterrupted is the exit code after Ctrl-C or SIGTERM, the shells'
// 128 + SIGINT.
const ExitInterrupted = 130

// Main runs the graphc command line and returns its exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e := &env{ctx: ctx, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		usage(stderr)
		return ExitUsage
	}
	if isHelp(args[0]) {
		if len(args) == 1 {
			usage(stdout)
			return ExitOK
		}
		if len(args) > 2 {
			fmt.Fprintf(stderr, "graphc help: want one command, got %d arguments\n", len(args)-1)
			return ExitUsage
		}
		c := lookup(args[1])
		if c == nil {
			fmt.Fprintf(stderr, "graphc help: unknown command %q (commands: %s)\n", args[1], commandNames())
			return ExitUsage
		}
		if c.run == nil {
			usage(stdout)
			return ExitOK
		}
		// help COMMAND is COMMAND -h, so that the two cannot drift apart.
		args = []string{c.name, "-h"}
	}
	c := lookup(args[0])
	if c == nil || c.run == nil {
		fmt.Fprintf(stderr, "graphc: unknown command %q\n", args[0])
		usage(stderr)
		return ExitUsage
	}
	err := c.run(e, args[1:])
	if err != nil && ctx.Err() != nil {
		// The temporary files are gone (deferred cleanups ran as the
		// command returned) and its children killed.
		fmt.Fprintf(stderr, "graphc %s: interrupted\n", c.name)
		return ExitInterrupted
	}
	var ue *usageError
	var es exitStatus
	var ie *compiler.InternalError
	var user *compiler.UserError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.Is(err, syscall.EPIPE):
		return ExitOK // stdout's reader went away (| head): nothing left to say
	case errors.As(err, &es):
		return int(es) // the program it ran has said why
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

func isHelp(arg string) bool {
	return arg == "help" || arg == "-h" || arg == "--help" || arg == "-help"
}

func commandNames() string {
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	return strings.Join(names, ", ")
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

// newFlags builds a command's flag set. Its output is -h's help, which the
// user asked for: stdout, so that it pipes into a pager.
func newFlags(e *env, c string) *flag.FlagSet {
	fs := flag.NewFlagSet(c, flag.ContinueOnError)
	fs.SetOutput(e.stdout)
	if e.flagSets != nil {
		*e.flagSets = append(*e.flagSets, fs)
	}
	return fs
}

// parseFlags parses a command's flags and wants at least min and at most
// max (-1: any number) file arguments. Parse errors become usage errors;
// -h prints the command's help and returns flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string, min, max int) ([]string, error) {
	out := fs.Output()
	fs.SetOutput(io.Discard) // parse errors are reported as usage errors
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(out, fs)
			return nil, err
		}
		return nil, &usageError{err.Error()}
	}
	switch n := fs.NArg(); {
	case min == max && n != min:
		return nil, &usageError{fmt.Sprintf("want %d file argument(s), got %d", min, n)}
	case n < min:
		return nil, &usageError{fmt.Sprintf("want at least %d file argument(s), got %d", min, n)}
	case max >= 0 && n > max:
		return nil, &usageError{fmt.Sprintf("want at most %d file argument(s), got %d", max, n)}
	}
	return fs.Args(), nil
}

// printHelp is a command's help: its usage line, what it does and its
// flags. A subcommand's flag set is named "command sub".
func printHelp(w io.Writer, fs *flag.FlagSet) {
	name, sub, _ := strings.Cut(fs.Name(), " ")
	c := lookup(name)
	fmt.Fprintf(w, "usage: graphc %s %s\n\n%s\n", c.name, c.args, c.summary)
	nflags := 0
	fs.VisitAll(func(*flag.Flag) { nflags++ })
	if nflags == 0 {
		return
	}
	if sub != "" {
		fmt.Fprintf(w, "\nflags of %s %s:\n", name, sub)
	} else {
		fmt.Fprintf(w, "\nflags:\n")
	}
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// targetFlags are the planning flags several commands share.
type targetFlags struct {
	backends     string
	ncopies      int
	offload      bool
	regions      bool
	pack         bool
	offloadBatch int
	overrides    overrideFlags
	ngl          int
	memory       string
	weights      string
	allowUnused  bool
	maxCopies    int
	fit          bool
	mem          string
	fitMargin    float64
	placement    string
	costFile     string
	ctx          int
	batch        int
	fa           string
	ctk, ctv     string
	fs           *flag.FlagSet // the flags' set, to see which were given
}

func (t *targetFlags) register(fs *flag.FlagSet) {
	t.fs = fs
	fs.StringVar(&t.backends, "backends", "", "comma-separated backends in priority order, the cpu last (default: the model's backends statement, or cpu)")
	fs.IntVar(&t.ncopies, "n-copies", 0, "pipeline copies of split inputs (ggml's n_copies), at most 4 (default: the model's set n_copies, or 1)")
	fs.BoolVar(&t.offload, "op-offload", false, "let GPU backends take big-batch ops whose weights are in host memory (ggml's op_offload)")
	fs.BoolVar(&t.regions, "regions", false, "run runs of per-token CPU nodes as parallel regions, one part per thread, without a barrier between nodes (graphc's own; larger compute buffer)")
	fs.BoolVar(&t.pack, "pack", true, "let the CPU's matrix products read q4_0, q8_0, q4_K and q6_K weights from a packed copy made when the model is made (llama.cpp's CPU_REPACK; that memory again); -pack=false, or the model's set pack_weights = 0, reads them as loaded (and runs each product on its own, not grouped)")
	fs.IntVar(&t.maxCopies, "max-copies", compiler.DefaultMaxCopies, "the most pipeline copies -n-copies may ask for (ggml's GGML_SCHED_MAX_COPIES)")
	fs.IntVar(&t.offloadBatch, "offload-batch", 0, "minimum batch for -op-offload (default: each backend's, 32 for cuda)")
	fs.Var(&t.overrides, "ot", "place weights and state matching REGEX on BACKEND: REGEX=BACKEND (repeatable; first match wins; like llama.cpp's -ot)")
	fs.BoolFunc("cpu-moe", "keep every expert weight of a mixture of experts on the cpu: llama.cpp's --cpu-moe, the rule -ot "+compiler.CPUMoE().Pattern.String()+"=cpu in its place among the -ot rules", func(v string) error {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want true or false")
		}
		if on {
			t.overrides = append(t.overrides, compiler.CPUMoE())
		}
		return nil
	})
	fs.Func("n-cpu-moe", "keep the expert weights of the first `N` layers on the cpu: llama.cpp's --n-cpu-moe N, a rule -ot "+compiler.NCPUMoE(1)[0].Pattern.String()+"=cpu for each layer 0 to N-1 (blk\\.1…, blk\\.2…), in its place among the -ot rules", func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("want a number of layers, 0 or more")
		}
		t.overrides = append(t.overrides, compiler.NCPUMoE(n)...)
		return nil
	})
	fs.IntVar(&t.ngl, "ngl", -1, "put the last N layers' weights and state on the first backend (like llama.cpp's -ngl)")
	fs.StringVar(&t.weights, "weights", "", "a GGUF file the model is compiled for: its weights' types (q8_0, f16, …) replace the declared ones; run loads its weights by mmap, and fills state as without it")
	fs.BoolVar(&t.allowUnused, "allow-unused", false, "compile for a -weights file even though the model does not read all of its tensors (they are listed on stderr)")
	fs.BoolVar(&t.fit, "fit", false, "choose the layers on each backend (instead of -ngl) so that weights, state and compute buffers fit the -mem budgets, the most on the first backends; for a mixture of experts, first the fewest layers whose experts stay on the last backend (as -n-cpu-moe), every layer on the first")
	fs.StringVar(&t.mem, "mem", "", "memory budgets for -fit: BACKEND=SIZE,… with sizes like 4096, 64KiB, 512MiB, 1.5GiB (a backend without one is unlimited)")
	fs.Float64Var(&t.fitMargin, "fit-margin", compiler.DefaultFitMargin*100, "percent of each -mem budget -fit keeps free for what the plan cannot see (driver context, allocator rounding)")
	fs.StringVar(&t.placement, "placement", passes.PlacementGGML, "node placement strategy: ggml reproduces ggml's scheduler; cost moves the nodes ggml is free to place to where a cost model estimates the evaluation fastest (plan shows both estimates)")
	fs.StringVar(&t.costFile, "cost", "", "-placement cost's model: a calibration file written by graphc calibrate (default: built-in defaults)")
	fs.IntVar(&t.ctx, "ctx", 0, `the KV cache's size in tokens, the model's flag("ctx", …) (llama.cpp's -c; default: the model's; at most the -weights file's <arch>.context_length)`)
	fs.IntVar(&t.batch, "batch", 0, `the most tokens one evaluation takes, the model's flag("batch", …) (llama.cpp's -ub; default: the model's)`)
	fs.StringVar(&t.fa, "fa", "auto", `flash attention, the model's flag("fa", …): on, off, or auto (llama.cpp's: on unless a layer's flash_attn_ext would run on another backend than its KV cache, as where the cache's device lacks the op)`)
	fs.StringVar(&t.ctk, "ctk", "", `the K cache's type, the model's flag("ctk", …): `+strings.Join(cacheTypes, ", ")+` (llama.cpp's -ctk; default: the model's, f16)`)
	fs.StringVar(&t.ctv, "ctv", "", `the V cache's type, the model's flag("ctv", …): as -ctk; a quantized V cache needs -fa on (default: the model's, f16)`)
	fs.StringVar(&t.memory, "memory", "best", "compute buffer planner: "+strings.Join(passes.MemoryStrategies(), ", ")+" (best keeps the smallest per buffer; ggml reproduces ggml-alloc)")
}

// overrideFlags collects repeated -ot flags.
type overrideFlags []compiler.Override

func (o *overrideFlags) String() string {
	var s []string
	for _, x := range *o {
		s = append(s, x.Pattern.String()+"="+x.Backend)
	}
	return strings.Join(s, " ")
}

func (o *overrideFlags) Set(v string) error {
	x, err := compiler.ParseOverride(v)
	if err != nil {
		return err
	}
	*o = append(*o, x)
	return nil
}

// check rejects values no plan can have, which flag parsing lets through.
func (t *targetFlags) check() error {
	given := map[string]bool{}
	t.fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	switch {
	case given["n-copies"] && t.ncopies < 1:
		return &usageError{fmt.Sprintf("-n-copies %d: want at least 1", t.ncopies)}
	case given["max-copies"] && (t.maxCopies < 1 || t.maxCopies > compiler.MaxCopiesLimit):
		return &usageError{fmt.Sprintf("-max-copies %d: want 1 to %d", t.maxCopies, compiler.MaxCopiesLimit)}
	case given["ngl"] && t.ngl < 0:
		return &usageError{fmt.Sprintf("-ngl %d: want a number of layers, 0 or more", t.ngl)}
	case given["offload-batch"] && t.offloadBatch < 1:
		return &usageError{fmt.Sprintf("-offload-batch %d: want at least 1", t.offloadBatch)}
	case given["backends"] && strings.TrimSpace(t.backends) == "":
		return &usageError{"-backends: want a comma-separated list, e.g. sim0,cpu"}
	case t.fit && given["ngl"]:
		return &usageError{"-fit and -ngl: -fit chooses the layers itself, choose one"}
	case t.fit && t.mem == "":
		return &usageError{"-fit needs budgets: -mem BACKEND=SIZE,…, e.g. -mem sim0=64KiB,cpu=1GiB"}
	case !t.fit && (given["mem"] || given["fit-margin"]):
		return &usageError{"-mem and -fit-margin are -fit's: add -fit"}
	case t.placement != passes.PlacementGGML && t.placement != passes.PlacementCost:
		return &usageError{fmt.Sprintf("-placement %s: want ggml or cost", t.placement)}
	case given["cost"] && t.placement != passes.PlacementCost:
		return &usageError{"-cost is -placement cost's model: add -placement cost"}
	case given["ctx"] && t.ctx < 1:
		return &usageError{fmt.Sprintf("-ctx %d: want a number of tokens, 1 or more", t.ctx)}
	case given["batch"] && t.batch < 1:
		return &usageError{fmt.Sprintf("-batch %d: want a number of tokens, 1 or more", t.batch)}
	case t.fa != "on" && t.fa != "off" && t.fa != "auto":
		return &usageError{fmt.Sprintf("-fa %s: want on, off or auto", t.fa)}
	case t.ctk != "" && !slices.Contains(cacheTypes, t.ctk):
		return &usageError{fmt.Sprintf("-ctk %s: want one of %s", t.ctk, strings.Join(cacheTypes, ", "))}
	case t.ctv != "" && !slices.Contains(cacheTypes, t.ctv):
		return &usageError{fmt.Sprintf("-ctv %s: want one of %s", t.ctv, strings.Join(cacheTypes, ", "))}
	case t.fitMargin < 0 || t.fitMargin >= 100:
		return &usageError{fmt.Sprintf("-fit-margin %g: want a percentage from 0 to below 100", t.fitMargin)}
	}
	if t.fit {
		if _, err := compiler.ParseBudgets(t.mem); err != nil {
			return &usageError{"-mem " + err.Error()}
		}
	}
	return nil
}

// configWithWeights is config plus the -weights file's types, tensors and
// metadata.
func (t *targetFlags) configWithWeights() (compiler.Config, error) {
	if err := t.check(); err != nil {
		return compiler.Config{}, err
	}
	cfg := t.config()
	if t.costFile != "" {
		m, err := passes.LoadCostModel(t.costFile)
		if err != nil {
			return cfg, &compiler.UserError{Msg: "-cost " + err.Error()}
		}
		cfg.Options.Cost = m
	}
	if t.weights != "" {
		file, err := compiler.ReadWeightsFile(t.weights)
		if err != nil {
			return cfg, err
		}
		file.AllowUnused = t.allowUnused
		cfg.File = file
	}
	return cfg, nil
}

func (t *targetFlags) config() compiler.Config {
	var cfg compiler.Config
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
	cfg.Flags = modelFlags(t.ctx, t.batch, t.fa, t.ctk, t.ctv)
	cfg.FlashAttnAuto = t.fa == "auto"
	cfg.Options.NCopies = t.ncopies
	cfg.Options.OpOffload = t.offload
	cfg.Options.Regions = t.regions
	cfg.Options.NoPack = !t.pack
	cfg.Options.MemoryStrategy = t.memory
	if t.placement == passes.PlacementCost {
		cfg.Options.Placement = t.placement
	}
	if t.fit {
		budgets, _ := compiler.ParseBudgets(t.mem) // check reported any error
		cfg.Fit = &compiler.Fit{Budgets: budgets, Margin: t.fitMargin / 100}
	}
	cfg.Verify = true
	return cfg
}

// cacheTypes are the KV cache types -ctk and -ctv take, llama.cpp's
// (its f32 aside).
var cacheTypes = []string{"f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"}

// modelFlags are the values -ctx, -batch, -fa, -ctk and -ctv give the
// model's flag("ctx", …), flag("batch", …), flag("fa", …), flag("ctk", …)
// and flag("ctv", …), a type as its tensor.DType: none for -ctx 0, -batch
// 0, -fa auto and no type.
func modelFlags(ctx, batch int, fa, ctk, ctv string) map[string]int64 {
	flags := map[string]int64{}
	for name, ty := range map[string]string{"ctk": ctk, "ctv": ctv} {
		if dt, ok := tensor.ParseDType(ty); ok {
			flags[name] = int64(dt)
		}
	}
	if ctx > 0 {
		flags["ctx"] = int64(ctx)
	}
	if batch > 0 {
		flags["batch"] = int64(batch)
	}
	switch fa {
	case "on":
		flags["fa"] = 1
	case "off":
		flags["fa"] = 0
	}
	return flags
}

func readModel(path string) ([]byte, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, &compiler.UserError{Msg: err.Error()}
	}
	return src, nil
}

// writeJSON prints v as indented JSON, the form of every -json flag.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// oneOf rejects a command line that gives more than one of the named
// flags, which choose the same thing (an output form).
func oneOf(fs *flag.FlagSet, names ...string) error {
	var given []string
	fs.Visit(func(f *flag.Flag) {
		for _, n := range names {
			if f.Name == n {
				given = append(given, "-"+n)
			}
		}
	})
	if len(given) > 1 {
		return &usageError{fmt.Sprintf("%s: choose one", strings.Join(given, " and "))}
	}
	return nil
}

// warn prints a compilation's warnings.
func warn(e *env, res *compiler.Result) {
	for _, w := range res.Warnings {
		fmt.Fprintln(e.stderr, "graphc: warning:", w)
	}
}

// noteIgnored says which of the -weights file's tensors -allow-unused let
// the model leave unread.
func noteIgnored(e *env, cfg compiler.Config) {
	if f := cfg.File; f != nil && len(f.Ignored) > 0 {
		fmt.Fprintf(e.stderr, "graphc: -allow-unused: ignoring them: %s\n", gguf.UnusedList(f.Ignored))
	}
}
