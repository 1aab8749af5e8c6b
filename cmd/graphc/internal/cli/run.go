package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/codegen"
	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/runtime/rpc"
)

func cmdRun(e *env, args []string) error {
	fs := newFlags(e, "run")
	var tf targetFlags
	tf.register(fs)
	asJSON := fs.Bool("json", false, `print {"outputs":[{"name", "shape", "values"}]}`)
	fill := fs.String("fill", "ggml", "how weights (unless -weights loads them), state and inputs are filled: ggml (the conformance traces' rule; inputs by their fill expressions)")
	threads := fs.Int("threads", 0, "worker threads (0: every core)")
	stats := fs.Bool("stats", false, "print the evaluation's statistics to stderr: per split its backend, nodes, bytes copied in, copy and compute time")
	rpcEndpoints := fs.String("rpc", "", "ggml rpc-server endpoints host:port[,host:port…] for the target's rpc<N> backends, the N-th for rpc<N> (default: $GRAPHC_RPC)")
	dims := dimFlags{}
	fs.Var(dims, "dim", "value of a bounded dim, NAME=VALUE (repeatable; default: its bound)")
	files, err := parseFlags(fs, args, 1, 1)
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
	res, err := compiler.Compile(files[0], src, cfg)
	if err != nil {
		return err
	}
	warn(e, res)
	noteIgnored(e, cfg)
	if err := fitsHost(res, tf.ctx); err != nil {
		return err
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
			return &compiler.UserError{Msg: err.Error()}
		}
		runArgs = append(runArgs, "-weights="+abs)
		if tf.allowUnused {
			runArgs = append(runArgs, "-allow-unused")
		}
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
			return &compiler.UserError{Msg: fmt.Sprintf("-dim %s: %s has no bounded dim %s", name, files[0], k)}
		}
		runArgs = append(runArgs, "-"+k+"="+v)
	}
	code, err := compiler.Generate(res, codegen.Options{PkgName: "main", Main: true, Source: filepath.Base(files[0])})
	if err != nil {
		return err
	}
	// go build of a large model needs about 60 KB per node; the plan and
	// what rendering it left behind (2 GB at 100k nodes) must not stay
	// resident beside it.
	debug.FreeOSMemory()
	bin, cleanup, err := buildMain(e.ctx, code)
	if err != nil {
		return err
	}
	defer cleanup()
	cmd := exec.CommandContext(e.ctx, bin, runArgs...)
	if *rpcEndpoints != "" {
		if len(rpc.ParseEndpoints(*rpcEndpoints)) == 0 {
			return &usageError{fmt.Sprintf("-rpc %q: want host:port[,host:port…]", *rpcEndpoints)}
		}
		// The environment rather than the program's -rpc flag: a target
		// without rpc backends builds a program without the flag.
		cmd.Env = append(os.Environ(), backend.RPCEndpointsEnv+"="+*rpcEndpoints)
	}
	killGroupOnCancel(cmd)
	cmd.Stdout, cmd.Stderr = e.stdout, e.stderr
	if err := cmd.Run(); err != nil {
		if brokenPipe(err) {
			return nil // | head had what it wanted
		}
		if e.ctx.Err() != nil {
			return e.ctx.Err()
		}
		return &compiler.UserError{Msg: fmt.Sprintf("running the compiled model: %v", err)}
	}
	return nil
}

// fitsHost fails, before the build, when the plan's host memory is more
// than this machine's, naming the sizes and the -ctx that chose the state.
func fitsHost(res *compiler.Result, ctx int) error {
	for _, m := range compiler.MemoryOf(res.Graph) {
		if m.BufferType != backend.CPUBufferType.Name {
			continue
		}
		what := fmt.Sprintf("the plan's weights (%d bytes), packed copies (%d), state (%d: the KV cache) and compute buffers (%d)", m.Weights, m.Packed, m.State, m.Compute)
		if ctx > 0 {
			what = fmt.Sprintf("-ctx %d: ", ctx) + what
		}
		if err := engine.CheckHostMemory(what, m.Total()); err != nil {
			return &compiler.UserError{Msg: err.Error()}
		}
	}
	return nil
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
