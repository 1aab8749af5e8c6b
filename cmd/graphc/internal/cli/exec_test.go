package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/graphc/graphc/backend/libs"
	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/ggmltrace"
	"github.com/graphc/graphc/internal/planview"
)

// needGo skips tests that build generated programs when they cannot.
func needGo(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds generated programs")
	}
	if _, err := exec.LookPath("go"); err != nil && os.Getenv(programsEnv) == "" {
		t.Skipf("no go tool, nor $%s", programsEnv)
	}
}

// blasOrSkip skips a test that needs OpenBLAS on a machine without it.
func blasOrSkip(t *testing.T) {
	t.Helper()
	if why := compiler.Unavailable([]string{"blas"}); why["blas"] != "" {
		if os.Getenv("GRAPHC_REQUIRE_BLAS") == "1" {
			t.Fatal(why["blas"])
		}
		t.Skipf("skipping: %s", why["blas"])
	}
}

// TestGGMLCheckSim runs ggml's own plan of every trace with its backends
// mapped onto simulated devices, BLAS and the CPU: the output must be the
// cpu-only run's bit for bit (to 1e-5 with BLAS) and the bytes copied per
// evaluation the plan's.
func TestGGMLCheckSim(t *testing.T) {
	needGo(t)
	traces, _ := filepath.Glob("../../../../ggmltrace/testdata/*.json")
	for _, path := range traces {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
			tr, err := ggmltrace.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range tr.Backends {
				if b.Kind == "BLAS" {
					blasOrSkip(t)
				}
			}
			code, out, stderr := runCLI("ggml-check", "-run", "-sim", "-json", path)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
			}
			var r ggmlCheckReport
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			m := r.Mapped
			if m == nil {
				t.Fatal("no mapped run in the report")
			}
			t.Logf("on %v: max diff %g, bit identical %v, %d bytes copied", m.Backends, m.MaxDiffCPU, m.BitIdentical, m.BytesCopied)
			if m.Tolerance == 0 && !m.BitIdentical {
				t.Errorf("on %v: not bit for bit the cpu-only run's (max diff %g)", m.Backends, m.MaxDiffCPU)
			}
			if m.BytesCopied != tr.Result.BytesMoved() {
				t.Errorf("copied %d bytes per evaluation, ggml %d", m.BytesCopied, tr.Result.BytesMoved())
			}
		})
	}
}

// runOutputs runs `graphc run -json -stats` with args and returns the
// outputs' values by name and the bytes copied that -stats reported.
func runOutputs(t *testing.T, args ...string) (map[string][]float64, int64) {
	t.Helper()
	code, out, stderr := runCLI(append([]string{"run", "-json", "-stats"}, args...)...)
	skipIfPrepared(t, code, stderr)
	if code != 0 {
		t.Fatalf("graphc run %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
	}
	var got struct {
		Outputs []struct {
			Name   string    `json:"name"`
			Values []float64 `json:"values"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	vals := map[string][]float64{}
	for _, o := range got.Outputs {
		vals[o.Name] = o.Values
	}
	n, err := statsBytesCopied(stderr)
	if err != nil {
		t.Fatal(err)
	}
	return vals, n
}

// TestRunExamplesMapped runs every example on simulated devices, BLAS and
// the CPU in several placements, with and without pipeline copies, and
// wants the CPU-only run's outputs bit for bit (within 1e-5, relative above
// 1, with BLAS) and the plan's bytes copied.
func TestRunExamplesMapped(t *testing.T) {
	needGo(t)
	layers := []string{"-ot", `blk\.[01]\.=sim0`, "-ot", `cache_._l[01]=sim0`, "-ot", `blk\.[23]\.=sim1`, "-ot", `cache_._l[23]=sim1`}
	cases := map[string][][]string{
		"../../../../examples/llama/llama.g": {
			{"-backends", "sim0,cpu", "-ngl", "2"},
			{"-backends", "sim0,cpu", "-ngl", "4", "-n-copies", "2"},
			append([]string{"-backends", "sim0,sim1,cpu", "-n-copies", "4"}, layers...),
			{"-backends", "sim0,blas,cpu", "-ngl", "2"},
		},
		"../../../../examples/mlp/mlp.g": {
			{"-backends", "sim0,cpu", "-ot", `fc0\.=sim0`},
			{"-backends", "sim0,sim1,cpu", "-ot", `fc0\.=sim0`, "-ot", `fc1\.=sim1`, "-n-copies", "3"},
		},
		"../../../../examples/llama32/llama32.g": {
			{"-backends", "sim0,cpu", "-ngl", "16", "-n-copies", "2"},
		},
		"../../../../compiler/testdata/blas_mlp.g": {
			// Big batches: sim0 takes every op and copies the weights in
			// (1.off), one split per weight, reusing the copies' memory.
			{"-backends", "sim0,cpu", "-op-offload"},
			{"-backends", "sim0,cpu", "-op-offload", "-n-copies", "2"},
			{"-backends", "blas,cpu"},
			{"-backends", "sim0,blas,cpu", "-ot", `w0=sim0`},
		},
	}
	for model, targets := range cases {
		t.Run(filepath.Base(model), func(t *testing.T) {
			want, _ := runOutputs(t, model)
			for _, args := range targets {
				name := strings.Join(args, " ")
				t.Run(name, func(t *testing.T) {
					withBLAS := strings.Contains(name, "blas")
					if withBLAS {
						blasOrSkip(t)
					}
					got, copied := runOutputs(t, append(args, model)...)
					tf := targetFlagsFor(t, args)
					src, _ := os.ReadFile(model)
					res, err := compiler.Compile(model, src, tf)
					if err != nil {
						t.Fatal(err)
					}
					if plan := planview.JSON(res.Graph).BytesCopiedPerEval; copied != plan {
						t.Errorf("copied %d bytes per evaluation, the plan %d", copied, plan)
					}
					if len(res.Graph.Splits) < 2 {
						t.Errorf("the plan has %d split(s): nothing runs on another backend", len(res.Graph.Splits))
					}
					for out, w := range want {
						g := got[out]
						if len(g) != len(w) {
							t.Fatalf("output %s: %d values, cpu-only %d", out, len(g), len(w))
						}
						worst := 0.0
						for i := range w {
							d := math.Abs(g[i]-w[i]) / max(1, math.Abs(w[i]))
							if withBLAS {
								worst = max(worst, d)
							} else if math.Float32bits(float32(g[i])) != math.Float32bits(float32(w[i])) {
								t.Fatalf("output %s[%d] = %g, cpu-only %g: not bit for bit", out, i, g[i], w[i])
							}
						}
						if worst > 1e-5 {
							t.Errorf("output %s differs from the cpu-only run by up to %g (tolerance 1e-5)", out, worst)
						}
					}
				})
			}
		})
	}
}

// targetFlagsFor parses planning flags the way graphc run does.
func targetFlagsFor(t *testing.T, args []string) compiler.Config {
	t.Helper()
	fs := newFlags(&env{stdout: os.Stdout, stderr: os.Stderr}, "test")
	var tf targetFlags
	tf.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return tf.config()
}

// TestUnavailableBackendsFailAtNew: a generated program for a backend this
// machine cannot run starts, reports which and why, and exits 1.
func TestUnavailableBackendsFailAtNew(t *testing.T) {
	needGo(t)
	t.Setenv(libs.OpenBLASEnv, filepath.Join(t.TempDir(), "libopenblas.so.0"))
	for _, tc := range []struct {
		model, backends, want string
	}{
		{"../../../../examples/mlp/testdata/mlp_cuda.g", "cuda0,cpu", "cuda0: ggml"}, // its libraries missing, or no CUDA device in them,
		{"../../../../compiler/testdata/blas_mlp.g", "blas,cpu", "blas: $" + libs.OpenBLASEnv},
	} {
		src, err := os.ReadFile(tc.model)
		if err != nil {
			t.Fatal(err)
		}
		code, err := compiler.GenerateFile(tc.model, src, ".", "main", true, compiler.Config{Backends: strings.Split(tc.backends, ","), Verify: true})
		if err != nil {
			t.Fatal(err)
		}
		bin, cleanup, err := buildMain(context.Background(), code)
		if err != nil {
			t.Fatal(err)
		}
		defer cleanup()
		out, err := exec.Command(bin).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s on %s: %v\n%s\nwant exit 1 and %q", tc.model, tc.backends, err, out, tc.want)
		}
	}
}

// TestRunRegionsMatchPlain runs the golden models that touch most kernels,
// and a chain of 301 nodes whose region and split codegen cuts into chunk
// methods, with parallel regions on two threads and without them on one:
// the outputs must agree (the parts compute each token exactly as the
// whole would, with the same kernels).
func TestRunRegionsMatchPlain(t *testing.T) {
	needGo(t)
	chain := []byte(`dim n_embd = 64
dim n_tok <= 8
input inp: f32[n_embd, n_tok] fill cos(i * 0.01)
x = relu(inp)
for l in 0..150 {
  weight w.{l}: f32[n_embd]
  weight b.{l}: f32[n_embd]
  x = add(mul(x, w.{l}), b.{l})
}
output x
`)
	models := map[string][]byte{"chain": chain}
	for _, name := range []string{"ops", "mlp"} {
		ar, err := txtar.ParseFile(filepath.Join("..", "..", "..", "..", "golden", name+".txtar"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			if f.Name == "model.g" {
				models[name] = f.Data
			}
		}
	}
	for _, name := range []string{"ops", "mlp", "chain"} {
		t.Run(name, func(t *testing.T) {
			model := filepath.Join(t.TempDir(), "model.g")
			if err := os.WriteFile(model, models[name], 0o644); err != nil {
				t.Fatal(err)
			}
			outputs := func(args ...string) map[string][]float64 {
				code, out, stderr := runCLI(append(append([]string{"run", "-json"}, args...), model)...)
				if code != 0 {
					t.Fatalf("run %v: exit %d: %s", args, code, stderr)
				}
				var res struct {
					Outputs []struct {
						Name   string    `json:"name"`
						Values []float64 `json:"values"`
					} `json:"outputs"`
				}
				if err := json.Unmarshal([]byte(out), &res); err != nil {
					t.Fatal(err)
				}
				m := map[string][]float64{}
				for _, o := range res.Outputs {
					m[o.Name] = o.Values
				}
				return m
			}
			plain := outputs("-threads", "1")
			parts := outputs("-regions", "-threads", "2")
			if len(plain) == 0 || len(plain) != len(parts) {
				t.Fatalf("outputs: %d plain, %d with regions", len(plain), len(parts))
			}
			for name, want := range plain {
				got := parts[name]
				if len(got) != len(want) {
					t.Fatalf("%s: %d values with regions, %d without", name, len(got), len(want))
				}
				for i := range want {
					if d := math.Abs(got[i] - want[i]); d > 1e-6*max(1, math.Abs(want[i])) {
						t.Errorf("%s[%d]: %g with regions, %g without", name, i, got[i], want[i])
					}
				}
			}
		})
	}
}

// TestRepoRoot: $GRAPHC_ROOT wins when it holds graphc's go.mod, and is an
// error when it does not; unset, the checkout the test runs in is found.
func TestRepoRoot(t *testing.T) {
	want, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GRAPHC_ROOT", "")
	if got, err := repoRoot(); err != nil || got != want {
		t.Errorf("unset: %q, %v; want %q", got, err, want)
	}
	t.Setenv("GRAPHC_ROOT", want)
	if got, err := repoRoot(); err != nil || got != want {
		t.Errorf("GRAPHC_ROOT=%s: %q, %v", want, got, err)
	}
	wrong := t.TempDir()
	t.Setenv("GRAPHC_ROOT", wrong)
	if _, err := repoRoot(); err == nil || !strings.Contains(err.Error(), "GRAPHC_ROOT="+wrong) {
		t.Errorf("GRAPHC_ROOT=%s: %v, want an error naming it", wrong, err)
	}
}

// TestEvalChecksViewsAndMemory runs generated programs past what the
// compiler can decide: views whose offset or extent depends on a bounded
// dim are checked at Eval, and a plan larger than the machine's memory
// fails before main fills a single weight, instead of Go's fatal out of
// memory.
func TestEvalChecksViewsAndMemory(t *testing.T) {
	needGo(t)
	run := func(model string, args ...string) (string, int) {
		t.Helper()
		code, err := compiler.GenerateFile("model.g", []byte(model), ".", "main", true, compiler.Config{Verify: true})
		if err != nil {
			t.Fatal(err)
		}
		bin, cleanup, err := buildMain(context.Background(), code)
		if err != nil {
			t.Fatal(err)
		}
		defer cleanup()
		out, err := exec.Command(bin, args...).CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return string(out), exit.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	views := `dim n <= 8
input x: f32[64]
output y = relu(view_1d(x, 4, n * 2))
output z = relu(view_1d(x, n * 8, 128))
`
	for _, tc := range []struct{ n, want string }{
		{"2", ""},
		{"1", "model.g:3:17: view y.view_1d of x: n * 2 = 2 is not a multiple of 4 bytes, the size of one f32 element (n = 1)"},
		{"8", "model.g:4:17: view z.view_1d of x covers bytes [128, 384), outside its 256 bytes (n = 8)"},
	} {
		out, code := run(views, "-n="+tc.n)
		if (tc.want == "") != (code == 0) || !strings.Contains(out, tc.want) {
			t.Errorf("n = %s: exit %d\n%s\nwant %q", tc.n, code, out, tc.want)
		}
	}
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc/meminfo: the memory check is skipped on this system")
	}
	// Four weights just under the per-tensor limit: 3.6 TiB, more than
	// any machine this test runs on.
	var huge string
	for i := range 4 {
		huge += fmt.Sprintf("weight w%d: f32[250000000000]\noutput y%d = relu(view_1d(w%d, 4, 0))\n", i, i, i)
	}
	out, code := run(huge)
	if want := "the filled weights, compute buffers and state need "; code != 1 || !strings.Contains(out, want) {
		t.Errorf("exit %d\n%s\nwant exit 1 and %q", code, out, want)
	}
}

// TestRunsFilesOfSeveralShapes compiles examples/llamafile's llama.g for
// files gguf new -arch writes of other shapes (GQA and not, tied head,
// quantized) and runs it on each end to end.
func TestRunsFilesOfSeveralShapes(t *testing.T) {
	needGo(t)
	const model = "../../../../examples/llamafile/llama.g"
	src, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		vocab   string
		layers  int
		kvWidth int // ne1 of attn_k.weight
		tied    bool
	}{
		{[]string{"-layers", "2", "-embd", "64", "-heads", "4", "-kv-heads", "2", "-type", "q8_0"}, "320", 2, 32, false},
		{[]string{"-layers", "3", "-embd", "128", "-heads", "4", "-kv-heads", "1", "-ff", "256", "-vocab", "512", "-tied", "-rope-theta", "500000", "-type", "q4_0"}, "512", 3, 32, true},
		{[]string{"-layers", "1", "-embd", "96", "-heads", "3", "-kv-heads", "3", "-ff", "160", "-vocab", "300", "-type", "f16"}, "300", 1, 96, false},
	} {
		path := filepath.Join(t.TempDir(), "m.gguf")
		if code, _, stderr := runCLI(append(append([]string{"gguf", "new", "-arch", "llama"}, tc.args...), path)...); code != 0 {
			t.Fatalf("gguf new %v: exit %d: %s", tc.args, code, stderr)
		}
		file, err := compiler.ReadWeightsFile(path)
		if err != nil {
			t.Fatal(err)
		}
		res, err := compiler.Compile(model, src, compiler.Config{File: file})
		if err != nil {
			t.Fatal(err)
		}
		layers, tied := 0, true
		for _, w := range res.Graph.Params {
			switch {
			case strings.HasSuffix(w.Name, ".attn_k.weight"):
				layers++
				if n, _ := w.Ne[1].Constant(); n != int64(tc.kvWidth) {
					t.Errorf("%v: %s ne1 = %d, want %d", tc.args, w.Name, n, tc.kvWidth)
				}
			case w.Name == "output.weight":
				tied = false
			}
		}
		if layers != tc.layers || tied != tc.tied {
			t.Errorf("%v: %d layers, tied %v; want %d, %v", tc.args, layers, tied, tc.layers, tc.tied)
		}
		code, out, stderr := runCLI("run", "-weights", path, "-dim", "n_tokens=3", "-dim", "n_kv=3", model)
		if code != 0 {
			t.Fatalf("%v: run: exit %d: %s", tc.args, code, stderr)
		}
		if first, _, _ := strings.Cut(out, "\n"); first != "result_output f32["+tc.vocab+", 3]" || strings.Contains(out, "NaN") {
			t.Errorf("%v: run printed %.200s", tc.args, out)
		}
	}
}
