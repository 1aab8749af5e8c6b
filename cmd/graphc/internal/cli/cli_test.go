package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/internal/planview"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.g")
	os.WriteFile(bad, []byte("dim n = 4\ninput x: f32[n]\noutput y = relu(z)\n"), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string // in stderr
	}{
		{nil, ExitUsage, "usage: graphc"},
		{[]string{"frob"}, ExitUsage, `unknown command "frob"`},
		{[]string{"plan"}, ExitUsage, "want 1 file argument(s), got 0"},
		{[]string{"plan", "-nope", "x.g"}, ExitUsage, "flag provided but not defined: -nope"},
		{[]string{"plan", filepath.Join(dir, "missing.g")}, ExitUser, "no such file"},
		{[]string{"plan", bad}, ExitUser, "bad.g:3:17: undefined: z\noutput y = relu(z)\n                ^"},
		{[]string{"plan", "-backends", "tpu0,cpu", "../../../../examples/mlp/mlp.g"}, ExitUser, `unknown backend "tpu0"`},
		{[]string{"plan", "-backends", "cpu,cuda0", "../../../../examples/mlp/mlp.g"}, ExitUser, "the last backend must be the cpu"},
		{[]string{"help", "run"}, ExitOK, ""},
		{[]string{"plan", "-n-copies", "5", "../../../../examples/mlp/mlp.g"}, ExitUser, "n_copies = 5: at most 4 pipeline copies"},
		{[]string{"plan", "-n-copies", "5", "-max-copies", "8", "../../../../examples/mlp/mlp.g"}, ExitOK, ""},
		{[]string{"plan", "-batch", "0", "../../../../examples/mlp/mlp.g"}, ExitUsage, "-batch 0: want a number of tokens, 1 or more"},
		{[]string{"plan", "-batch", "8", "../../../../examples/mlp/mlp.g"}, ExitUser, `-batch: the model has no flag("batch", …) to set`},
	} {
		code, _, stderr := runCLI(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("graphc %s: exit %d, stderr:\n%s\nwant exit %d and %q", strings.Join(tc.args, " "), code, stderr, tc.code, tc.want)
		}
	}
}

// TestHelp: `graphc help COMMAND` prints what `graphc COMMAND -h` does,
// the usage line, the summary and the flags, on stdout; an unknown command
// is one line on stderr and exit 2.
func TestHelp(t *testing.T) {
	for _, c := range commands {
		if c.run == nil {
			continue
		}
		code, help, stderr := runCLI("help", c.name)
		if code != ExitOK || stderr != "" || !strings.HasPrefix(help, "usage: graphc "+c.name+" ") || !strings.Contains(help, c.summary) {
			t.Errorf("graphc help %s: exit %d, stdout:\n%s\nstderr:\n%s", c.name, code, help, stderr)
		}
		code, dashH, _ := runCLI(c.name, "-h")
		if code != ExitOK || dashH != help {
			t.Errorf("graphc %s -h: exit %d, stdout differs from graphc help %s:\n%s", c.name, code, c.name, dashH)
		}
	}
	if _, help, _ := runCLI("help", "run"); !strings.Contains(help, "\nflags:\n") || !strings.Contains(help, "-weights") {
		t.Errorf("graphc help run lists no flags:\n%s", help)
	}
	code, out, stderr := runCLI("help", "bogus")
	if code != ExitUsage || out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, `unknown command "bogus"`) {
		t.Errorf("graphc help bogus: exit %d, stdout %q, stderr %q; want exit 2 and one line", code, out, stderr)
	}
}

func TestInternalErrorExit(t *testing.T) {
	err := &compiler.InternalError{Msg: "BUG: something broke", Stack: "goroutine 1"}
	var out, errb bytes.Buffer
	commands = append(commands, &command{name: "boom", run: func(*env, []string) error { return err }})
	defer func() { commands = commands[:len(commands)-1] }()
	if code := Main([]string{"boom"}, &out, &errb); code != ExitInternal || !strings.Contains(errb.String(), "internal error: BUG: something broke") {
		t.Errorf("exit %d, stderr %s", code, errb.String())
	}
}

func TestFmt(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.g")
	os.WriteFile(p, []byte("dim n=4\ninput x:f32[n]\noutput y=relu( x )\n"), 0o644)
	code, out, stderr := runCLI("fmt", p)
	if code != 0 || out != "dim n = 4\ninput x: f32[n]\noutput y = relu(x)\n" {
		t.Fatalf("exit %d, out %q, stderr %s", code, out, stderr)
	}
	if code, _, _ := runCLI("fmt", "-w", p); code != 0 {
		t.Fatal("fmt -w failed")
	}
	b, _ := os.ReadFile(p)
	if string(b) != out {
		t.Errorf("fmt -w wrote %q", b)
	}
}

func TestPlanJSON(t *testing.T) {
	code, out, stderr := runCLI("plan", "-json", "-backends", "cuda0,cpu", "../../../../examples/mlp/testdata/mlp_cuda.g")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var p planview.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Splits) != 2 || p.BytesCopiedPerEval != 1536 || p.Backends[0].Name != "cuda0" || p.Backends[0].Host {
		t.Errorf("plan: %d splits, %d bytes copied, backends %+v", len(p.Splits), p.BytesCopiedPerEval, p.Backends)
	}
}

// TestPlanShowsRegions: with -regions the llama example's five regions are
// in plan -json (with each node's slices), -debug and -dot.
func TestPlanShowsRegions(t *testing.T) {
	code, out, stderr := runCLI("plan", "-json", "-regions", "../../../../examples/llama/llama.g")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var p planview.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Regions) != 5 || p.Regions[1].First != "kq-0" || p.Regions[1].Units != "n_tokens" ||
		len(p.Regions[1].Parts) == 0 || p.Regions[1].Parts[0].Dst != "ne1" {
		t.Errorf("regions: %+v", p.Regions)
	}
	_, out, _ = runCLI("plan", "-debug", "-regions", "../../../../examples/llama/llama.g")
	if n := strings.Count(out, "## REGION over n_tokens"); n != 5 {
		t.Errorf("plan -debug shows %d regions, want 5", n)
	}
	_, out, _ = runCLI("plan", "-dot", "-regions", "../../../../examples/llama/llama.g")
	if n := strings.Count(out, "subgraph cluster_region"); n != 5 || strings.Count(out, "{") != strings.Count(out, "}") {
		t.Errorf("plan -dot shows %d regions (braces %d/%d), want 5", n, strings.Count(out, "{"), strings.Count(out, "}"))
	}
}

// TestPlanShowsPacked: the weights the CPU packs are in plan's text (each
// weight and the total), in plan -json and in -fit's memory table; -pack=false
// and the model's set pack_weights = 0 pack none.
func TestPlanShowsPacked(t *testing.T) {
	dir := t.TempDir()
	model := "dim n_embd = 64\ndim n_tokens <= 4\ninput tokens: i32[n_tokens]\n" +
		"weight token_embd.weight: q8_0[n_embd, 100]\nweight up.weight: q4_0[n_embd, 20]\nweight down.weight: f32[20, n_embd]\n" +
		"x = get_rows(token_embd.weight, tokens)\noutput logits = mul_mat(token_embd.weight, mul_mat(down.weight, mul_mat(up.weight, x)))\n"
	packed := filepath.Join(dir, "packed.g")
	off := filepath.Join(dir, "off.g")
	os.WriteFile(packed, []byte(model), 0o644)
	os.WriteFile(off, []byte("set pack_weights = 0\n"+model), 0o644)

	// token_embd: 112 of its 100 rows × 68 bytes; up: 32 of its 20 rows × 36.
	const total = 112*68 + 32*36
	code, out, stderr := runCLI("plan", packed)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"weight token_embd.weight: q8_0[64, 100] @cpu 1.dst packed for cpu: 7616 bytes, released once packed\n",
		"weight up.weight: q4_0[64, 20] @cpu 1.dst packed for cpu: 1152 bytes, released once packed\n",
		"weight down.weight: f32[20, 64] @cpu 1.dst\n",
		fmt.Sprintf("packed for cpu: 2 weights (q8_0 1, q4_0 1), %d bytes (8.6 KiB) of copies its mul_mats read\n", total),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	for _, args := range [][]string{{"-pack=false", packed}, {off}} {
		if _, out, _ := runCLI(append([]string{"plan"}, args...)...); strings.Contains(out, "packed") {
			t.Errorf("plan %s packs:\n%s", strings.Join(args, " "), out)
		}
	}

	_, out, _ = runCLI("plan", "-json", packed)
	var p planview.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Packed) != 1 || p.Packed[0].Backend != "cpu" || p.Packed[0].Bytes != total ||
		strings.Join(p.Packed[0].Weights, ",") != "token_embd.weight,up.weight" {
		t.Errorf("plan -json packed: %+v", p.Packed)
	}
	for _, l := range p.Leafs {
		if (l.PackedFor == "cpu") != (l.Name != "down.weight" && l.Kind == "weight") {
			t.Errorf("plan -json leaf %s: packed for %q, %d bytes", l.Name, l.PackedFor, l.PackedBytes)
		}
	}
	_, out, _ = runCLI("plan", "-json", "-pack=false", packed)
	if !strings.Contains(out, `"packed": []`) {
		t.Errorf("plan -json -pack=false: want an empty packed list:\n%s", out)
	}

	_, out, _ = runCLI("plan", "-fit", "-mem", "cpu=1GiB", packed)
	if !strings.Contains(out, "weights    packed") || !strings.Contains(out, "8.56 KiB") {
		t.Errorf("plan -fit: want a packed column with the copies' 8.56 KiB:\n%s", out)
	}
}

func TestCompileWritesPackage(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool")
	}
	dir := t.TempDir()
	code, _, stderr := runCLI("compile", "-o", dir, "-pkg", "mlp", "../../../../examples/mlp/mlp.g")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "mlp_gen.go"))
	if err != nil || !bytes.HasPrefix(b, []byte("// Code generated by graphc from mlp.g. DO NOT EDIT.\n")) {
		t.Fatalf("generated file: %v\n%.200s", err, b)
	}
}

// TestRunLlamaMatchesGGML is the newcomer's main job end to end: graphc run
// -json builds and runs the llama example and prints ggml's logits, also
// with the parallel regions on two threads.
func TestRunLlamaMatchesGGML(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool")
	}
	for _, flags := range [][]string{{}, {"-regions", "-threads", "2"}} {
		t.Run(strings.Join(append([]string{"run"}, flags...), " "), func(t *testing.T) {
			runLlamaMatchesGGML(t, flags)
		})
	}
}

// runLlamaMatchesGGML runs the llama example with the given extra flags and
// compares its logits with ggml's.
func runLlamaMatchesGGML(t *testing.T, flags []string) {
	args := append(append([]string{"run", "-json"}, flags...), "../../../../examples/llama/llama.g")
	code, out, stderr := runCLI(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Outputs []struct {
			Name   string    `json:"name"`
			Shape  []int     `json:"shape"`
			Values []float64 `json:"values"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	var want struct {
		Values []float64 `json:"values"`
	}
	b, _ := os.ReadFile("../../../../examples/llama/testdata/ggml_llama_cpu_output.json")
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(got.Outputs) != 1 || got.Outputs[0].Name != "result_output" || len(got.Outputs[0].Values) != len(want.Values) {
		t.Fatalf("outputs: %+v", got.Outputs)
	}
	worst := 0.0
	for i, w := range want.Values {
		worst = max(worst, math.Abs(got.Outputs[0].Values[i]-w))
	}
	if worst > 1e-4 {
		t.Errorf("graphc run differs from ggml by up to %g", worst)
	}
}

// TestPlanDebugNotes: plan -debug prints the passes' reasons, e.g. ggml's
// rule for graph inputs under pipeline parallelism.
func TestPlanDebugNotes(t *testing.T) {
	code, out, stderr := runCLI("plan", "-debug", "-backends", "sim0,cpu", "-ngl", "2", "-n-copies", "2", "../../../../examples/llama/llama.g")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"## pass notes\n", "llama.g:16:1: split_graph: inp_tokens: graph input first read by inp_embd: 2 pipeline versions on cpu", "assign_backends: token_embd.weight: on cpu (1.dst"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan -debug lacks %q", want)
		}
	}
}
