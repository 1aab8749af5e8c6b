package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/examples"
	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/gguf/ggufarch"
	"github.com/graphc/graphc/internal/llamacpp"
	"github.com/graphc/graphc/tensor"
	"github.com/graphc/graphc/tokenizer"
)

// genSteps greedy tokens follow the prompt in the generate tests.
const genSteps = 16

// TestGenerateMatchesLlamaCpp: graphc generate -temp 0 on a file of each
// built-in architecture prints the text of llama.cpp's greedy tokens on
// the same file and prompt, and a second run finds the program built.
func TestGenerateMatchesLlamaCpp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program per architecture")
	}
	needGo(t)
	h, err := llamacpp.Build(t.TempDir())
	if errors.Is(err, llamacpp.ErrNoLibs) && os.Getenv("GRAPHC_REQUIRE_GGML") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GRAPHC_CACHE", t.TempDir())
	const prompt = "Once upon a time, in a land far away"
	for _, arch := range []string{"llama", "qwen2", "qwen3", "gemma3", "phi3"} {
		t.Run(arch, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), arch+".gguf")
			o := ggufarch.Defaults(arch)
			o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab = 128, 4, 2, 256, 512
			if arch == "gemma3" {
				// Seven layers, a global one among them, and a window the
				// prompt and the steps reach past.
				o.Layers, o.SlidingWindow = 7, 6
			}
			if err := ggufarch.WriteFile(path, o); err != nil {
				t.Fatal(err)
			}
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := tokenizer.FromGGUF(f.File)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			ids := tok.Encode(prompt, true, true)
			res, err := h.Run(llamacpp.Request{Model: path, Prompt: prompt, Tokens: ids, Steps: genSteps})
			if err != nil {
				t.Fatal(err)
			}
			want := res.Generated
			for i, id := range want {
				if tok.EndOfGeneration(id) {
					want = want[:i]
					break
				}
			}
			args := []string{"generate", "-m", path, "-p", prompt, "-n", "16", "-temp", "0", "-no-display-prompt", "-threads", "2"}
			code, out, stderr := runCLI(args...)
			if code != 0 {
				t.Fatalf("graphc %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
			}
			if got, w := strings.TrimSuffix(out, "\n"), tok.Decode(want); got != w {
				t.Errorf("graphc generate printed %q; llama.cpp's greedy tokens %v are %q", got, want, w)
			}
			if !strings.Contains(stderr, "compiling") || !strings.Contains(stderr, "prompt: ") {
				t.Errorf("the first run's stderr lacks the compile note or the times:\n%s", stderr)
			}
			start := time.Now()
			code, out2, stderr := runCLI(args...)
			if code != 0 || out2 != out || strings.Contains(stderr, "compiling") {
				t.Errorf("the second run: exit %d, %q (first %q), stderr:\n%s", code, out2, out, stderr)
			}
			t.Logf("%s: %q; the second run took %v", arch, out, time.Since(start))
		})
	}
}

func TestGenerateErrors(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GRAPHC_CACHE", dir)
	path := filepath.Join(dir, "m.gguf")
	if err := ggufarch.WriteFile(path, ggufarch.Defaults("llama")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"generate", "-p", "x"}, ExitUsage, "-m FILE.gguf"},
		{[]string{"generate", "-m", filepath.Join(dir, "absent.gguf"), "-p", "x"}, ExitUser, "absent.gguf"},
		{[]string{"generate", "-m", path, "-top-p", "2"}, ExitUsage, "-top-p"},
		{[]string{"generate", "-m", path, "-ctx", "0"}, ExitUsage, "-ctx"},
		{[]string{"generate", "-m", path, "-ctx", "999999"}, ExitUser, "context_length"},
		{[]string{"chat", "-m", path, "extra"}, ExitUsage, "want 0 file argument"},
	} {
		code, _, stderr := runCLI(c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("graphc %s: exit %d, want %d with %q:\n%s", strings.Join(c.args, " "), code, c.code, c.want, stderr)
		}
	}
}

func TestPruneCache(t *testing.T) {
	dir := t.TempDir()
	base := time.Now()
	for i := range 5 {
		p := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
		used := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(p, used, used); err != nil {
			t.Fatal(err)
		}
	}
	pruneCache(dir, 3)
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if strings.Join(left, ",") != "2,3,4" {
		t.Errorf("kept %v, want the three most recently used: 2, 3, 4", left)
	}
}

// TestGenerateContextFull: generation without -n stops when the sequence
// fills the context, and says so.
func TestGenerateContextFull(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	needGo(t)
	dir := t.TempDir()
	t.Setenv("GRAPHC_CACHE", dir)
	path := filepath.Join(dir, "m.gguf")
	if err := ggufarch.WriteFile(path, ggufarch.Defaults("llama")); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI("generate", "-m", path, "-p", "Once upon a time", "-ctx", "40", "-temp", "0")
	if code != 0 || !strings.Contains(stderr, "the context is full: 40 tokens") {
		t.Errorf("exit %d:\n%s", code, stderr)
	}
	// -context-shift goes on past it (the program built above).
	code, _, stderr = runCLI("generate", "-m", path, "-p", "Once upon a time", "-ctx", "40", "-temp", "0", "-n", "100", "-context-shift")
	if code != 0 || strings.Contains(stderr, "the context is full") || !strings.Contains(stderr, "the context was shifted") {
		t.Errorf("-context-shift: exit %d:\n%s", code, stderr)
	}
}

// TestTextKey: the cache key of a text program follows the file's tensor
// types and metadata, and only them.
func TestTextKey(t *testing.T) {
	dir := t.TempDir()
	key := func(o ggufarch.Options) string {
		t.Helper()
		path := filepath.Join(dir, fmt.Sprintf("%p.gguf", &o))
		if err := ggufarch.WriteFile(path, o); err != nil {
			t.Fatal(err)
		}
		f, err := compiler.ReadWeightsFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var tf targetFlags
		k, err := textKey("m.g", []byte("model"), &tf, f)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	base := ggufarch.Defaults("llama")
	base.Name = "same"
	q8, vocab, seed := base, base, base
	q8.Type = tensor.Q8_0
	vocab.Vocab = 384
	seed.Seed = 2 // other weights, the same shapes and types
	k := key(base)
	if key(base) != k || key(seed) != k {
		t.Error("the same shapes, types and metadata give another key")
	}
	if key(q8) == k || key(vocab) == k {
		t.Error("another weight type or vocabulary gives the same key")
	}

	// The placement flags generate, chat and serve take are in it too.
	path := filepath.Join(dir, "moe.gguf")
	if err := ggufarch.WriteFile(path, ggufarch.Defaults("qwen3moe")); err != nil {
		t.Fatal(err)
	}
	f, err := compiler.ReadWeightsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, args := range [][]string{{}, {"-cpu-moe"}, {"-n-cpu-moe", "1"}, {"-ot", "exps=cpu"}, {"-op-offload"}} {
		fs := newFlags(&env{stdout: os.Stdout, stderr: os.Stderr}, "generate")
		var tf targetFlags
		tf.registerText(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		k, err := textKey("m.g", []byte("model"), &tf, f)
		if err != nil {
			t.Fatal(err)
		}
		if other, ok := seen[k]; ok {
			t.Errorf("%v and %v give the same key", args, other)
		}
		seen[k] = fmt.Sprint(args)
	}
}

// TestGenerateExpertCopies: generate takes -cpu-moe and -op-offload: a
// qwen3moe file with its experts in host memory and their products on
// sim0 (batches of up to 32: offloaded), copying only the experts each
// evaluation uses, generates the CPU-only run's text.
func TestGenerateExpertCopies(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs")
	}
	needGo(t)
	dir := t.TempDir()
	t.Setenv("GRAPHC_CACHE", dir)
	path := filepath.Join(dir, "moe.gguf")
	if err := ggufarch.WriteFile(path, ggufarch.Defaults("qwen3moe")); err != nil {
		t.Fatal(err)
	}
	gen := func(args ...string) string {
		t.Helper()
		code, out, stderr := runCLI(append([]string{"generate", "-m", path, "-p", "Once upon a time", "-temp", "0", "-n", "12", "-batch", "32"}, args...)...)
		if code != 0 {
			t.Fatalf("generate %v: exit %d\n%s", args, code, stderr)
		}
		return out
	}
	offloaded := []string{"-backends", "sim0,cpu", "-ngl", "99", "-cpu-moe", "-op-offload"}
	want := gen()
	if got := gen(offloaded...); got != want {
		t.Errorf("with the experts' products on sim0: %q, cpu-only %q", got, want)
	}
	// The plan those flags make has the expert copies.
	fs := newFlags(&env{stdout: os.Stdout, stderr: os.Stderr}, "generate")
	var tf targetFlags
	tf.registerText(fs)
	if err := fs.Parse(append([]string{"-batch", "32"}, offloaded...)); err != nil {
		t.Fatal(err)
	}
	cfg := tf.config()
	f, err := compiler.ReadWeightsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.File = f
	name, src, _ := examples.ForArch("qwen3moe")
	res, err := compiler.Compile(name, src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range res.Graph.Splits {
		for _, in := range s.Inputs {
			if in.Experts != nil {
				n++
			}
		}
	}
	if n != 6 {
		t.Errorf("%d expert copies in the plan of %v, want 6", n, offloaded)
	}
}
