package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/examples"
	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/gguf/ggufarch"
	"github.com/graphc/graphc/internal/interp"
	"github.com/graphc/graphc/internal/llamacpp"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/tensor"
)

// llamaBench is `graphc bench -llama`: llama-bench's pp and tg tests, for
// graphc and for llama.cpp on the same GGUF file, interleaved.
type llamaBench struct {
	short   bool
	interp  bool // graphc's side through internal/interp, not the generated package
	files   []string
	arch    string
	types   []string
	threads []int
	reps    int
	pp, tg  int
	seqs    int    // -parallel: sequences of the batched test (0: none)
	gen     bool   // -generate: the gen test
	ctx     int    // graphc's KV cache (0: the tests' tokens)
	depth   int    // -d: the tokens each pp and tg test finds in the cache
	isa     string // -isa: both sides' instruction-set level ("": the best)
	// fa, ctk and ctv are both sides' flash attention and KV cache types,
	// llama-bench's -fa, -ctk and -ctv.
	fa, ctk, ctv string
	// backends and ngl are graphc's target (-backends, -ngl), as for run:
	// a GPU's tokens/s beside llama.cpp's CPU ones.
	backends string
	ngl      int

	noGo   bool            // -interp because the Go toolchain is missing
	builds []time.Duration // go build of the generated package, per file
	rss    []string        // peak resident memory of each side, per file
	// toldFlashAttn: the note that llama.cpp's flash attention stays on
	// has been printed.
	toldFlashAttn bool
}

// benchShapes are the default files' shapes per -arch, the real models'
// (Llama-3.2-1B, Qwen2.5-0.5B, Qwen3-0.6B, Gemma-3-1B, Phi-3.5-mini); benchShortShape a small file of the same
// kind for -short. The mixtures of experts have their real models' layers
// but fewer of them, so that a q4_0 file fits a small machine's memory
// beside llama.cpp's copy: qwen3moe Qwen3-30B-A3B's (48 layers there),
// mixtral (llama files with experts) Mixtral-8x7B's (32 there).
var (
	benchShapes = map[string]ggufarch.Options{
		"qwen3moe": {Arch: "qwen3moe", Layers: 4, Embd: 2048, Heads: 32, KVHeads: 4, HeadDim: 128, FF: 6144,
			Experts: 128, ExpertsUsed: 8, ExpertFF: 768, Vocab: 151936, Ctx: 40960, RopeTheta: 1000000, Seed: 1},
		"mixtral": {Arch: "llama", Layers: 2, Embd: 4096, Heads: 32, KVHeads: 8, FF: 14336,
			Experts: 8, ExpertsUsed: 2, Vocab: 32000, Ctx: 32768, RopeTheta: 1000000, Seed: 1},
		"llama": {Arch: "llama", Layers: 16, Embd: 2048, Heads: 32, KVHeads: 8, FF: 8192,
			Vocab: 128256, Ctx: 131072, RopeTheta: 500000, Tied: true, Seed: 1},
		"qwen2": {Arch: "qwen2", Layers: 24, Embd: 896, Heads: 14, KVHeads: 2, FF: 4864,
			Vocab: 151936, Ctx: 32768, RopeTheta: 1000000, Tied: true, Seed: 1},
		"qwen3": {Arch: "qwen3", Layers: 28, Embd: 1024, Heads: 16, KVHeads: 8, HeadDim: 128, FF: 3072,
			Vocab: 151936, Ctx: 40960, RopeTheta: 1000000, Tied: true, Seed: 1},
		"gemma3": {Arch: "gemma3", Layers: 26, Embd: 1152, Heads: 4, KVHeads: 1, HeadDim: 256, FF: 6912,
			Vocab: 262144, Ctx: 32768, SlidingWindow: 512, RopeTheta: 1000000, Tied: true, Seed: 1},
		"phi3": {Arch: "phi3", Layers: 32, Embd: 3072, Heads: 32, KVHeads: 32, FF: 8192,
			Vocab: 32064, Ctx: 131072, RopeTheta: 10000, RopeFactors: true, RopeOrigCtx: 4096, Seed: 1},
	}
	benchShortShape = ggufarch.Options{Layers: 2, Embd: 256, Heads: 8, KVHeads: 2, FF: 512,
		Vocab: 512, Ctx: 2048, RopeTheta: 500000, Tied: true, Seed: 1}
	// benchShortWindow is -short's sliding window, for the architectures
	// that have one: shorter than -short's tests.
	benchShortWindow = 32
)

// fileList collects repeated -file flags.
type fileList []string

func (f *fileList) String() string     { return strings.Join(*f, ",") }
func (f *fileList) Set(s string) error { *f = append(*f, s); return nil }

func (lb *llamaBench) register(fs *flag.FlagSet) {
	fs.BoolVar(&lb.short, "short", false, "-llama: a small file (2 layers, n_embd 256), pp64 and tg16, one repetition: seconds, for CI; its speeds mean nothing")
	fs.BoolVar(&lb.interp, "interp", false, "-llama: run graphc's side in process through internal/interp (a reflective call per node) instead of the generated package built with go build (the default, what users run; without a Go toolchain -interp is used)")
	fs.Var((*fileList)(&lb.files), "file", "-llama: a GGUF file to measure, of an architecture graphc generate knows (repeatable; default: files at -arch's real model's shapes written by gguf new -arch, one per -type, kept in the user cache directory)")
	fs.StringVar(&lb.arch, "arch", "llama", "-llama: the default files' architecture and shapes: "+benchArchList())
	fs.Func("type", "-llama: comma-separated types of the default files, as gguf new's -type (q4_K_m: llama.cpp's mix) (default q4_0,q8_0,f16; -short: q4_0,q8_0)", func(s string) error {
		lb.types = strings.Split(s, ",")
		return nil
	})
	fs.IntVar(&lb.reps, "reps", 0, "-llama: repetitions of each test, each with fresh processes, the sides' order alternating (default 4; -short: 1)")
	fs.IntVar(&lb.pp, "pp", 0, "-llama: prompt tokens of the pp test, at most 512 (default 512; -short: 64)")
	fs.IntVar(&lb.ctx, "ctx", 0, "-llama: graphc's KV cache in tokens, at least -d plus -pp and -tg (default: -d plus the longer of the two)")
	fs.IntVar(&lb.depth, "d", 0, "-llama: run the pp and tg tests at a depth: N prompt tokens in the cache, evaluated untimed in batches of up to 512 when each side starts (llama-bench's -d; rows read pp512@d4096)")
	fs.StringVar(&lb.fa, "fa", "off", "-llama: flash attention on both sides, on or off (llama-bench's -fa; graphc's the model's flag(\"fa\", …))")
	fs.StringVar(&lb.ctk, "ctk", "f16", "-llama: both sides' K cache type (llama-bench's -ctk): "+strings.Join(cacheTypes, ", "))
	fs.StringVar(&lb.ctv, "ctv", "f16", "-llama: both sides' V cache type (llama-bench's -ctv), as -ctk; a quantized V needs -fa on")
	fs.IntVar(&lb.seqs, "parallel", 0, "-llama: also decode N sequences of -tg tokens together from an empty cache, one token of each per evaluation (llama-batched-bench's generation phase; llama.cpp's side with N sequences in its cache), as graphc serve -parallel N does; at most 8")
	fs.BoolVar(&lb.gen, "generate", false, "-llama: also time graphc generate's loop (runtime/lm's engine, llama.cpp's default sampler): the ttft row, a prompt of -pp tokens to its first token beside llama.cpp's decode and argmax of it, and the gen row, -tg tokens beside llama.cpp's tg: what generating text costs above the model's evaluations (not with -interp)")
	fs.IntVar(&lb.tg, "tg", 0, "-llama: generated tokens of the tg test, at most 512 (default 128; -short: 16)")
	fs.StringVar(&lb.backends, "backends", "", "-llama: graphc's backends, as run's -backends, the cpu last (default cpu; llama.cpp's side stays on its CPU build)")
	fs.StringVar(&lb.isa, "isa", "", "-llama: both sides at an instruction-set level below this machine's best, as a CPU without the rest runs: avx2 (graphc's kernels at $"+cpu.ISAEnv+"=avx2, llama.cpp's haswell build)")
	fs.IntVar(&lb.ngl, "ngl", -1, "-llama: put the last N layers' weights and state on the first of -backends, as run's -ngl")
}

func (lb *llamaBench) defaults() error {
	def := func(v *int, full, short int) {
		if *v == 0 {
			*v = full
			if lb.short {
				*v = short
			}
		}
	}
	def(&lb.reps, 4, 1)
	if lb.arch == "" {
		lb.arch = "llama"
	}
	if _, ok := benchShapes[lb.arch]; !ok {
		return &usageError{fmt.Sprintf("-arch %s: want %s", lb.arch, benchArchList())}
	}
	for _, f := range []struct {
		v   *string
		def string
	}{{&lb.fa, "off"}, {&lb.ctk, "f16"}, {&lb.ctv, "f16"}} {
		if *f.v == "" {
			*f.v = f.def
		}
	}
	def(&lb.pp, 512, 64)
	def(&lb.tg, 128, 16)
	if lb.types == nil {
		lb.types = []string{"q4_0", "q8_0", "f16"}
		if lb.short {
			lb.types = []string{"q4_0", "q8_0"}
		}
	}
	switch {
	case lb.reps < 1:
		return &usageError{"-reps must be at least 1"}
	case lb.pp < 1 || lb.pp > 512 || lb.tg < 1 || lb.tg > 512:
		return &usageError{"-pp and -tg: 1 to 512 tokens (llama.cpp's default context holds 512)"}
	case lb.gen && lb.interp:
		return &usageError{"-generate times the generated package: not with -interp"}
	case lb.seqs < 0 || lb.seqs > 8:
		return &usageError{fmt.Sprintf("-parallel %d: 0 (none) to 8 sequences", lb.seqs)}
	case lb.depth < 0:
		return &usageError{fmt.Sprintf("-d %d: want a number of tokens, 0 or more", lb.depth)}
	case lb.depth > 0 && (lb.seqs > 0 || lb.gen):
		return &usageError{"-d: the pp and tg tests run at a depth; -parallel and -generate start from an empty cache: not with -d"}
	case lb.ctx != 0 && lb.ctx < lb.cacheTokens():
		return &usageError{fmt.Sprintf("-ctx %d: the cache must hold -d %d tokens and the -pp %d and -tg %d tests' (or -parallel's sequences')", lb.ctx, lb.depth, lb.pp, lb.tg)}
	case lb.fa != "on" && lb.fa != "off":
		return &usageError{fmt.Sprintf("-fa %s: want on or off", lb.fa)}
	case lb.isa != "" && lb.isa != "avx2":
		return &usageError{fmt.Sprintf("-isa %s: want avx2 (the level with a llama.cpp build of its own), or no -isa for this machine's best", lb.isa)}
	case lb.isa != "" && !slices.Contains(cpu.ISAs(), lb.isa):
		return &usageError{fmt.Sprintf("-isa %s: this machine runs %s", lb.isa, strings.Join(cpu.ISAs(), ", "))}
	}
	for _, c := range []struct{ flag, t string }{{"-ctk", lb.ctk}, {"-ctv", lb.ctv}} {
		if !slices.Contains(cacheTypes, c.t) {
			return &usageError{fmt.Sprintf("%s %s: want one of %s", c.flag, c.t, strings.Join(cacheTypes, ", "))}
		}
	}
	if lb.ctv != "f16" && lb.ctv != "bf16" && lb.fa != "on" {
		return &usageError{fmt.Sprintf("-ctv %s: a quantized V cache needs -fa on (as llama.cpp's)", lb.ctv)}
	}
	for _, t := range lb.types {
		if _, _, err := parseGGUFType(t); err != nil {
			return err
		}
	}
	return nil
}

// benchTest is one test of a repetition: pp, tg, gen, or bd of seqs
// sequences, over n tokens.
type benchTest struct {
	name    string
	n, seqs int
}

// tests are the tests each repetition runs, in order.
func (lb *llamaBench) tests() []benchTest {
	tests := []benchTest{{"pp", lb.pp, 0}, {"tg", lb.tg, 0}}
	if lb.gen {
		tests = append(tests, benchTest{"ttft", lb.pp, 0}, benchTest{"gen", lb.tg, 0})
	}
	if lb.seqs > 0 {
		tests = append(tests, benchTest{"bd", lb.tg, lb.seqs})
	}
	return tests
}

// cacheTokens is the most tokens the cache holds: the depth and the
// longest test's.
func (lb *llamaBench) cacheTokens() int {
	n := lb.depth + max(lb.pp, lb.tg, lb.seqs*lb.tg)
	if lb.gen { // and the one token generated after a prompt
		n = max(n, lb.pp+1, lb.tg+1)
	}
	return n
}

// llamaOptions are llama.cpp's context parameters for the tests: as
// llama-bench sizes its context for a depth, flash attention and cache
// types as graphc's.
func (lb *llamaBench) llamaOptions() llamacpp.BenchOptions {
	o := llamacpp.BenchOptions{FlashAttn: lb.fa == "on"}
	if lb.isa == "avx2" {
		o.Variant = "haswell"
	}
	if lb.depth > 0 {
		o.Ctx = lb.cacheTokens()
	}
	o.CacheK, _ = tensor.ParseDType(lb.ctk)
	o.CacheV, _ = tensor.ParseDType(lb.ctv)
	return o
}

// benchRow is one test at one thread count: the repetitions' times.
type benchRow struct {
	file, test    string
	n, threads    int
	seqs          int // the bd test's sequences, each of n tokens
	depth         int // the tokens in the cache before a pp or tg test
	graphc, llama []time.Duration
	memmove       []float64 // GB/s, measured beside each repetition
	read          []float64 // GB/s read by a streaming kernel, beside each repetition
	weightBytes   int64     // read per generated token
}

func cmdBenchLlama(e *env, lb *llamaBench) error {
	if err := lb.defaults(); err != nil {
		return err
	}
	if lb.backends != "" && lb.interp {
		return &usageError{"-interp runs graphc's side on the cpu alone: not with -backends"}
	}
	if lb.ngl < -1 {
		return &usageError{fmt.Sprintf("-ngl %d: want a number of layers, 0 or more", lb.ngl)}
	}
	if !lb.interp && !haveGo() && os.Getenv(programsEnv) == "" {
		if lb.backends != "" {
			return &compiler.UserError{Msg: fmt.Sprintf("no Go toolchain (go is not in $PATH) to build graphc's side for -backends %s, and internal/interp runs the cpu alone: install Go, or set $%s to programs built where Go is", lb.backends, programsEnv)}
		}
		fmt.Fprintf(e.stderr, "graphc: bench: no Go toolchain (go is not in $PATH) to build the generated package: graphc's side runs in process through internal/interp, as with -interp\n")
		lb.interp, lb.noGo = true, true
	}
	if lb.isa != "" {
		// The drivers inherit the level; -interp runs the kernels here.
		if err := os.Setenv(cpu.ISAEnv, lb.isa); err != nil {
			return err
		}
		if err := cpu.SetISA(lb.isa); err != nil {
			return err
		}
	}
	tmp, err := os.MkdirTemp("", "graphc-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	files := lb.files
	if len(files) == 0 {
		if files, err = lb.defaultFiles(e, tmp); err != nil {
			return err
		}
	}
	h, err := llamacpp.Build(tmp)
	if errors.Is(err, llamacpp.ErrNoLibs) {
		fmt.Fprintf(e.stderr, "graphc: bench: llama.cpp's side skipped: %v\n", err)
		h = nil
	} else if err != nil {
		return err
	}
	bufBytes := memmoveBytes(lb.short)
	var rows []*benchRow
	for _, path := range files {
		r, err := lb.benchFile(e, h, path, bufBytes)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	writeBenchLlama(e.stdout, rows, bufBytes, lb.side())
	if len(lb.rss) > 0 {
		fmt.Fprintf(e.stdout, "peak resident memory (mapped weights count as they are read):\n  %s\n", strings.Join(lb.rss, "\n  "))
	}
	return nil
}

// side names graphc's side for the table's first line.
func (lb *llamaBench) side() string {
	var s string
	switch {
	case lb.noGo:
		s = "internal/interp (no Go toolchain)"
	case lb.interp:
		s = "internal/interp (-interp)"
	default:
		var ts []string
		for _, d := range lb.builds {
			ts = append(ts, fmt.Sprintf("%.1f s", d.Seconds()))
		}
		s = fmt.Sprintf("the generated package (go build, %s)", strings.Join(ts, ", "))
	}
	if lb.isa != "" {
		s += fmt.Sprintf("; -isa %s: graphc's kernels at %s, llama.cpp's %s build", lb.isa, lb.isa, lb.llamaOptions().Variant)
	}
	return s
}

// defaultFiles writes (or finds, in the cache) the files to measure; those
// of -short go to tmp.
func (lb *llamaBench) defaultFiles(e *env, tmp string) ([]string, error) {
	shape, dir := benchShapes[lb.arch], tmp
	if lb.short {
		full := benchShapes[lb.arch]
		shape = benchShortShape
		shape.Arch = full.Arch
		if full.SlidingWindow > 0 {
			shape.SlidingWindow = benchShortWindow
		}
		shape.Experts, shape.ExpertsUsed = min(full.Experts, 8), min(full.ExpertsUsed, 2)
	} else {
		d, err := os.UserCacheDir()
		if err != nil {
			d = os.TempDir()
		}
		dir = filepath.Join(d, "graphc", "bench")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	var files []string
	for _, t := range lb.types {
		dt, ft, _ := parseGGUFType(t)
		hd := "" // heads of their own width
		if shape.HeadDim > 0 {
			hd = fmt.Sprintf("-hd%d", shape.HeadDim)
		}
		x := "" // experts: how many, how many used, their width
		if shape.Experts > 0 {
			x = fmt.Sprintf("-x%du%d", shape.Experts, shape.ExpertsUsed)
			if shape.ExpertFF > 0 {
				x += fmt.Sprintf("ff%d", shape.ExpertFF)
			}
		}
		name := fmt.Sprintf("%s-l%d-e%d-h%d-kv%d%s-ff%d%s-v%d-%s", shape.Arch, shape.Layers, shape.Embd, shape.Heads, shape.KVHeads, hd, shape.FF, x, shape.Vocab, t)
		path := filepath.Join(dir, name+".gguf")
		files = append(files, path)
		if _, err := os.Stat(path); err == nil {
			continue
		}
		s := shape
		s.Type = dt
		if ft != noMix {
			s.Mix = t // llama.cpp's quantizer's file, as published files are
		}
		start := time.Now()
		if err := ggufarch.WriteFile(path, s); err != nil {
			return nil, &compiler.UserError{Msg: err.Error()}
		}
		fmt.Fprintf(e.stderr, "graphc: wrote %s\n", path)
		if !lb.short {
			fmt.Fprintf(e.stderr, "graphc: bench: wrote %s in %.1fs (kept for the next run)\n", path, time.Since(start).Seconds())
		}
	}
	return files, nil
}

// benchArchList names the architectures -arch takes.
func benchArchList() string {
	return strings.Join(slices.Sorted(maps.Keys(benchShapes)), ", ")
}

// benchModel is the DSL file for the architecture arch (examples.ForArch,
// graphc generate's) as the checkout has it, named so: the bench asks it
// for the logits of a batch's last token alone (n_outputs 1), as
// llama.cpp computes them for llama_batch_get_one.
func benchModel(arch string) (name string, src []byte, err error) {
	root, err := repoRoot()
	if err != nil {
		return "", nil, err
	}
	// The name the model compiles under is the checkout's, not this
	// machine's path to it: the generated code quotes it, and a program
	// built where Go is must be the one $GRAPHC_PROGRAMS finds elsewhere.
	name, _, ok := examples.ForArch(arch)
	if !ok {
		return "", nil, &compiler.UserError{Msg: fmt.Sprintf("bench -llama: no model for general.architecture %q; graphc knows %s", arch, strings.Join(examples.Archs(), ", "))}
	}
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		return "", nil, &compiler.UserError{Msg: err.Error()}
	}
	return name, b, nil
}

// compile compiles the bench model for the file at path, for this
// machine; name is the model's source file.
func (lb *llamaBench) compile(path string) (name string, res *compiler.Result, err error) {
	file, err := compiler.ReadWeightsFile(path)
	if err != nil {
		return "", nil, &compiler.UserError{Msg: err.Error()}
	}
	arch, _ := file.Meta["general.architecture"].(string)
	name, src, err := benchModel(arch)
	if err != nil {
		return "", nil, err
	}
	// The KV cache holds the longest test's tokens (-ctx: llama.cpp's -c),
	// an evaluation the pp test's (or the batched test's sequences).
	ctx := lb.ctx
	if ctx == 0 {
		ctx = lb.cacheTokens()
	}
	cfg := compiler.Config{File: file, ThisMachine: true, Flags: modelFlags(ctx, lb.batch(), lb.fa, lb.ctk, lb.ctv)}
	if lb.backends != "" {
		cfg.Backends = strings.Split(lb.backends, ",")
	}
	if lb.ngl >= 0 {
		cfg.Placement.GPULayers = &lb.ngl
	}
	res, err = compiler.Compile(name, src, cfg)
	return name, res, err
}

// batch is the most tokens an evaluation takes: the pp test's, the
// batched test's sequences, and for a depth 512 (its batches).
func (lb *llamaBench) batch() int {
	if lb.depth > 0 {
		return max(lb.pp, lb.seqs, min(512, lb.depth))
	}
	return max(lb.pp, lb.seqs)
}

// benchFile measures one file at every thread count, graphc and llama.cpp
// interleaved: per repetition and thread count, both sides start afresh,
// then memmove, graphc's pp and llama.cpp's, graphc's tg and llama.cpp's,
// the two sides' order alternating (benchPair).
//
// graphc's side is the package generated from the plan compiled for the
// file, built once and run in a process (driverSide), or with -interp
// internal/interp running the plan in process: the same kernels, parallel
// regions and thread count, plus a reflective call per node and no Go
// toolchain needed (see docs/performance.md).
func (lb *llamaBench) benchFile(e *env, h *llamacpp.Harness, path string, bufBytes int) ([]*benchRow, error) {
	name, res, err := lb.compile(path)
	if err != nil {
		return nil, err
	}
	if lb.interp {
		built := batchInputs(1, 0, 1) // what interpSide gives the model
		for _, in := range res.Graph.Inputs {
			if _, ok := built[in.Name]; !ok {
				return nil, &compiler.UserError{Msg: fmt.Sprintf("bench -llama -interp: %s's model takes input %s, which only the generated package's driver builds: run without -interp", filepath.Base(path), in.Name)}
			}
		}
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, &compiler.UserError{Msg: err.Error()}
	}
	defer f.Close()
	weights, err := f.Weights(interp.WeightDecls(res.Graph))
	if err != nil {
		return nil, &compiler.UserError{Msg: err.Error()}
	}
	// Bytes a generated token reads: every weight, but token_embd.weight
	// only where it is the output head too (get_rows reads one row), and
	// of a mixture of experts' weights (three dimensions, one matrix per
	// expert) the expert_used_count matrices the token chose.
	var streamed int64
	_, hasOutput := weights["output.weight"]
	arch, _ := f.MetaString("general.architecture")
	used, _ := f.MetaInt(arch + ".expert_used_count")
	for n, w := range weights {
		if n == "token_embd.weight" && hasOutput {
			continue
		}
		b := int64(len(w.Data))
		if w.Ne[2] > 1 && used > 0 && strings.HasSuffix(n, "_exps.weight") {
			b = b / int64(w.Ne[2]) * min(used, int64(w.Ne[2]))
		}
		streamed += b
	}
	vocab := weights["token_embd.weight"].Ne[1]
	var bin string
	if !lb.interp {
		fmt.Fprintf(e.stderr, "graphc: bench: building the generated package for %s…\n", path)
		start := time.Now()
		b, cleanup, err := buildBenchDriver(e.ctx, res, name)
		if err != nil {
			return nil, err
		}
		defer cleanup()
		bin = b
		took := time.Since(start)
		lb.builds = append(lb.builds, took)
		fmt.Fprintf(e.stderr, "graphc: bench: built in %.1fs\n", took.Seconds())
	}
	// Fresh processes for every repetition and thread count, started and
	// run in an order that alternates: on this kind of machine (a VM whose
	// guest memory the host backs lazily) the same binary runs up to ~17 %
	// faster or slower depending on when its process started, and a fixed
	// order would hand that to one side (see docs/performance.md).
	open := func(t int) (benchSide, error) {
		if bin == "" {
			m, err := interp.Load(res.Graph, interp.Config{Threads: t, Weights: weights})
			if err != nil {
				return nil, err
			}
			s := &interpSide{m: m, vocab: vocab}
			return s, s.setDepth(lb.depth, lb.batch())
		}
		d, err := startDriver(e.ctx, bin, path, t, vocab, lb.batch())
		if err == nil && lb.depth > 0 {
			_, err = d.test("depth", lb.depth, fmt.Sprintf("depth %d", lb.depth))
		}
		return d, err
	}
	openLlama := func(t int) (benchSide, error) {
		lc, err := h.Bench(path, lb.llamaOptions())
		if err != nil {
			return nil, err
		}
		if !lc.FlashAttnSet && !lb.toldFlashAttn {
			lb.toldFlashAttn = true
			fmt.Fprintf(e.stderr, "graphc: bench: llama.cpp's flash attention stays as the library decides, not -fa %s (the harness does not know this release's parameters)\n", lb.fa)
		}
		if err := lc.Threads(t); err != nil {
			lc.Close()
			return nil, err
		}
		if lb.depth > 0 {
			if _, err := lc.Depth(lb.depth); err != nil {
				lc.Close()
				return nil, err
			}
		}
		return llamaSide{lc}, nil
	}
	if h == nil {
		openLlama = nil
	}
	base := filepath.Base(path)
	rows := map[string]*benchRow{}
	var order []*benchRow
	row := func(test string, n, threads, seqs int) *benchRow {
		k := fmt.Sprint(test, n, threads)
		if rows[k] == nil {
			rows[k] = &benchRow{file: base, test: test, n: n, threads: threads, seqs: seqs, depth: lb.depth, weightBytes: streamed}
			order = append(order, rows[k])
		}
		return rows[k]
	}
	// The peak resident memory of each side is the lowest of its
	// repetitions' peaks: graphc releases the pages of the weights it
	// packs (cpu.Backend.Pack), which the kernel cannot do while
	// llama.cpp, started first, maps the same file.
	peak := map[int]*[2]int64{} // per thread count: graphc's, llama.cpp's; 0 unknown
	buf := newBandwidth(bufBytes)
	defer buf.close()
	for _, t := range lb.threads {
		peak[t] = &[2]int64{}
	}
	for rep := 0; rep < lb.reps; rep++ {
		for ti, t := range lb.threads {
			pair := &benchPair{graphcFirst: (rep+ti)%2 == 0}
			err := pair.start(open, openLlama, t)
			if err == nil {
				err = pair.warmUp(min(lb.pp, 32))
			}
			if err != nil {
				pair.close()
				return nil, err
			}
			gbps, read := buf.gbps(t), buf.readGBps(t)
			for _, test := range lb.tests() {
				r := row(test.name, test.n, t, test.seqs)
				r.memmove = append(r.memmove, gbps)
				r.read = append(r.read, read)
				d, err := pair.run(test.name, test.n, test.seqs)
				if err != nil {
					pair.close()
					return nil, err
				}
				r.graphc = append(r.graphc, d[0])
				note := ""
				if pair.sides[1] != nil {
					r.llama = append(r.llama, d[1])
					note = fmt.Sprintf(", llama.cpp %.3fs (%s first)", d[1].Seconds(), pair.firstName())
				}
				fmt.Fprintf(e.stderr, "graphc: bench: %s %s %d thread(s) rep %d: graphc %.3fs%s\n", base, r.label(), t, rep+1, d[0].Seconds(), note)
			}
			for i, s := range pair.sides {
				if s == nil {
					continue
				}
				if r := s.peakRSS(); r > 0 && (peak[t][i] == 0 || r < peak[t][i]) {
					peak[t][i] = r
				}
			}
			pair.close()
		}
	}
	for _, t := range lb.threads {
		var sides []string
		for i, name := range []string{"graphc", "llama.cpp"} {
			if r := peak[t][i]; r > 0 {
				sides = append(sides, fmt.Sprintf("%s %.0f MiB", name, float64(r)/(1<<20)))
			}
		}
		if len(sides) > 0 {
			lb.rss = append(lb.rss, fmt.Sprintf("%s, %d thread(s): %s", base, t, strings.Join(sides, ", ")))
		}
	}
	return order, nil
}

// benchPair is one repetition's two sides, graphc's and llama.cpp's (nil
// without llama.cpp), each a fresh process (or, with -interp, graphc's a
// fresh model in this one), which start, warm up and run each test in
// the order graphcFirst says.
type benchPair struct {
	graphcFirst bool
	sides       [2]benchSide // graphc, llama.cpp
}

func (p *benchPair) firstName() string {
	if p.graphcFirst {
		return "graphc"
	}
	return "llama.cpp"
}

// each runs f on the sides' indices in the pair's order.
func (p *benchPair) each(f func(i int) error) error {
	order := [2]int{0, 1}
	if !p.graphcFirst {
		order = [2]int{1, 0}
	}
	for _, i := range order {
		if err := f(i); err != nil {
			return err
		}
	}
	return nil
}

// start opens both sides at t threads; openLlama nil: graphc's alone.
func (p *benchPair) start(openGraphc, openLlama func(t int) (benchSide, error), t int) error {
	opens := [2]func(int) (benchSide, error){openGraphc, openLlama}
	return p.each(func(i int) (err error) {
		if opens[i] == nil {
			return nil
		}
		p.sides[i], err = opens[i](t)
		return err
	})
}

// warmUp pages in the weights and starts the threads of both.
func (p *benchPair) warmUp(n int) error {
	return p.each(func(i int) error {
		if p.sides[i] == nil {
			return nil
		}
		if _, err := p.sides[i].pp(n); err != nil {
			return err
		}
		_, err := p.sides[i].tg(1)
		return err
	})
}

// run times test ("pp", "tg", or "bd" of seqs sequences) over n tokens on
// both sides.
func (p *benchPair) run(test string, n, seqs int) (d [2]time.Duration, err error) {
	err = p.each(func(i int) (err error) {
		s := p.sides[i]
		switch {
		case s == nil:
		case test == "pp":
			d[i], err = s.pp(n)
		case test == "tg":
			d[i], err = s.tg(n)
		case test == "gen":
			d[i], err = s.gen(n)
		case test == "ttft":
			d[i], err = s.ttft(n)
		default:
			d[i], err = s.bd(seqs, n)
		}
		return err
	})
	return d, err
}

func (p *benchPair) close() {
	for _, s := range p.sides {
		if s != nil {
			s.close()
		}
	}
}

// batchInputs are the inputs of a batch of n tokens going to cache slot
// pos, as a program driving the model builds them (engine.CausalBatch),
// with token ids spread over the vocabulary as llama-bench's random ones
// are, asking for the last token's logits (n_outputs 1).
func batchInputs(n, pos, vocab int) map[string]tensor.Tensor {
	positions, mask := engine.CausalBatch(n, pos)
	tok := tensor.NewTensor(tensor.I32, [4]int{n, 1, 1, 1})
	for i := range tok.I32s() {
		tok.I32s()[i] = int32((pos + i) * 7919 % vocab)
	}
	p := tensor.NewTensor(tensor.I32, [4]int{n, 1, 1, 1})
	copy(p.I32s(), positions)
	m := tensor.NewTensor(tensor.F32, [4]int{pos + n, n, 1, 1})
	copy(m.F32s(), mask)
	last := tensor.NewTensor(tensor.I32, [4]int{1, 1, 1, 1})
	last.I32s()[0] = int32(n - 1)
	return map[string]tensor.Tensor{"inp_tokens": tok, "inp_pos": p, "KQ_mask": m, "inp_out_ids": last}
}

// parallelInputs are step step of seqs sequences decoded together
// (engine.ParallelBatch), every token an output, with the harness's token
// ids.
func parallelInputs(seqs, step, vocab int) map[string]tensor.Tensor {
	positions, mask := engine.ParallelBatch(seqs, step)
	tok := tensor.NewTensor(tensor.I32, [4]int{seqs, 1, 1, 1})
	p := tensor.NewTensor(tensor.I32, [4]int{seqs, 1, 1, 1})
	outs := tensor.NewTensor(tensor.I32, [4]int{seqs, 1, 1, 1})
	for s := range seqs {
		tok.I32s()[s] = int32(((step*seqs+s)*7 + 3) % vocab)
		outs.I32s()[s] = int32(s)
	}
	copy(p.I32s(), positions)
	m := tensor.NewTensor(tensor.F32, [4]int{(step + 1) * seqs, seqs, 1, 1})
	copy(m.F32s(), mask)
	return map[string]tensor.Tensor{"inp_tokens": tok, "inp_pos": p, "KQ_mask": m, "inp_out_ids": outs}
}

// median of the repetitions' durations.
func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func medianF(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func writeBenchLlama(w io.Writer, rows []*benchRow, bufBytes int, side string) {
	fmt.Fprintf(w, "graphc: %s\n", side)
	fmt.Fprintf(w, "tokens/s, the median of the repetitions; GB/s: weights read per generated token × tokens/s (%% of read), beside\n"+
		"read: GB/s an f32 matrix-vector product streams from a %d MiB matrix (the machine's read bandwidth as a kernel sees it), and\n"+
		"memmove: bytes copied per second between two %d MiB buffers, one copy per thread;\n"+
		"each repetition starts both sides afresh, in alternating order; range: the lowest and highest repetition's ratio;\n"+
		"ttftN: a prompt of N tokens to its first token (graphc generate's loop; llama.cpp's decode and argmax), as N / seconds\n", bufBytes>>20, bufBytes>>20)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "file\ttest\tthreads\tgraphc t/s\tllama.cpp t/s\tgraphc/llama.cpp\trange\tweights GB\tgraphc GB/s\tllama.cpp GB/s\tread GB/s\tmemmove GB/s\t")
	for _, r := range rows {
		tps := func(ds []time.Duration) float64 { return float64(r.n*max(1, r.seqs)) / median(ds).Seconds() }
		streamed := func(tokensPerSecond float64) string {
			gb := tokensPerSecond * float64(r.weightBytes) / 1e9
			return fmt.Sprintf("%.1f (%.0f%%)", gb, 100*gb/medianF(r.read))
		}
		g := tps(r.graphc)
		l, ratio, spread := "—", "—", "—"
		lGB := "—"
		gGB := "—"
		if len(r.llama) > 0 {
			lt := tps(r.llama)
			l, ratio = fmt.Sprintf("%.2f", lt), fmt.Sprintf("%.2f", g/lt)
			spread = ratioRange(r.graphc, r.llama)
			if r.test == "tg" || r.test == "gen" {
				lGB = streamed(lt)
			}
		}
		if r.test == "tg" || r.test == "gen" {
			gGB = streamed(g)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.2f\t%s\t%s\t%s\t%.3f\t%s\t%s\t%.1f\t%.1f\t\n", r.file, r.label(), r.threads, g, l, ratio, spread,
			float64(r.weightBytes)/1e9, gGB, lGB, medianF(r.read), medianF(r.memmove))
	}
	tw.Flush()
}

// label names the row's test as llama-bench does (pp512, tg128), the
// batched one by its sequences and their tokens (4×tg128).
func (r *benchRow) label() string {
	switch {
	case r.test == "bd":
		return fmt.Sprintf("%d×tg%d", r.seqs, r.n)
	case r.depth > 0:
		return fmt.Sprintf("%s%d@d%d", r.test, r.n, r.depth)
	}
	return fmt.Sprint(r.test, r.n)
}

// ratioRange is the lowest and highest of the repetitions' speed ratios
// graphc / llama.cpp (times llama / graphc, each repetition's pair).
func ratioRange(graphc, llama []time.Duration) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range graphc {
		r := llama[i].Seconds() / graphc[i].Seconds()
		lo, hi = min(lo, r), max(hi, r)
	}
	return fmt.Sprintf("%.2f–%.2f", lo, hi)
}

// bandwidth measures the machine's memory bandwidth: copies between buffers
// larger than the caches, one part per thread, and reads of the source as
// an f32 matrix by the CPU backend's matrix-vector product (the kernel
// that streams its matrix once, like a generated token its weights).
type bandwidth struct {
	src, dst []byte
	backends map[int]*cpu.Backend
}

// memmoveBytes is twice the last-level cache (as Linux reports it), at
// least 256 MiB and at most 2 GiB; 32 MiB for -short.
func memmoveBytes(short bool) int {
	if short {
		return 32 << 20
	}
	n := 256 << 20
	if b, err := os.ReadFile("/sys/devices/system/cpu/cpu0/cache/index3/size"); err == nil {
		s := strings.TrimSpace(string(b))
		mul := 1
		switch {
		case strings.HasSuffix(s, "K"):
			mul, s = 1<<10, strings.TrimSuffix(s, "K")
		case strings.HasSuffix(s, "M"):
			mul, s = 1<<20, strings.TrimSuffix(s, "M")
		}
		if v, err := strconv.Atoi(s); err == nil {
			n = max(n, 2*v*mul)
		}
	}
	return min(n, 2<<30)
}

func newBandwidth(n int) *bandwidth {
	m := &bandwidth{src: make([]byte, n), dst: make([]byte, n)}
	for i := range m.src {
		m.src[i] = byte(i) &^ 0x80 // as f32: small and finite
	}
	copy(m.dst, m.src)
	return m
}

// readGBps is the best of three f32 matrix-vector products over the
// whole source buffer on threads threads, in bytes read per second.
func (m *bandwidth) readGBps(threads int) float64 {
	if m.backends == nil {
		m.backends = map[int]*cpu.Backend{}
	}
	be := m.backends[threads]
	if be == nil {
		be = cpu.New(threads)
		m.backends[threads] = be
	}
	const k = 4096
	rows := len(m.src) / (4 * k)
	a := tensor.Tensor{Type: tensor.F32, Ne: [4]int{k, rows, 1, 1}, Nb: tensor.ContiguousStrides(tensor.F32, [4]int{k, rows, 1, 1}), Data: m.src[:4*k*rows]}
	x, y := tensor.NewTensor(tensor.F32, [4]int{k, 1, 1, 1}), tensor.NewTensor(tensor.F32, [4]int{rows, 1, 1, 1})
	best := time.Duration(1 << 62)
	for range 3 {
		start := time.Now()
		be.MulMat(&y, &a, &x, ops.MulMatParams{})
		best = min(best, time.Since(start))
	}
	return float64(len(a.Data)) / best.Seconds() / 1e9
}

// close stops the read measurement's backends.
func (m *bandwidth) close() {
	for _, be := range m.backends {
		be.Close()
	}
}

// gbps is the best of three copies of the whole buffer by threads
// goroutines, in bytes copied per second.
func (m *bandwidth) gbps(threads int) float64 {
	best := time.Duration(1 << 62)
	n := len(m.src)
	for range 3 {
		done := make(chan struct{})
		start := time.Now()
		for t := 0; t < threads; t++ {
			lo, hi := n*t/threads, n*(t+1)/threads
			go func() {
				copy(m.dst[lo:hi], m.src[lo:hi])
				done <- struct{}{}
			}()
		}
		for t := 0; t < threads; t++ {
			<-done
		}
		best = min(best, time.Since(start))
	}
	return float64(n) / best.Seconds() / 1e9
}
