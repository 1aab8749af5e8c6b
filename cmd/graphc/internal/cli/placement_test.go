package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/passes"
)

// TestRunPlacements runs the llama example placed by -fit and by the cost
// strategy on a simulated device and wants the CPU-only run's logits bit
// for bit: a placement moves work, never changes an answer.
func TestRunPlacements(t *testing.T) {
	needGo(t)
	const model = "../../../../examples/llama/llama.g"
	want, _ := runOutputs(t, model)
	for _, args := range [][]string{
		{"-backends", "sim0,cpu", "-fit", "-mem", "sim0=400KiB,cpu=1GiB"},
		{"-backends", "sim0,cpu", "-ngl", "2", "-placement", "cost"},
		{"-backends", "sim0,cpu", "-ngl", "4", "-placement", "cost", "-n-copies", "2"},
		{"-backends", "sim0,sim1,cpu", "-placement", "cost", "-ot", `blk\.[01]\.=sim0`, "-ot", `cache_._l[01]=sim0`, "-ot", `blk\.[23]\.=sim1`, "-ot", `cache_._l[23]=sim1`},
	} {
		got, _ := runOutputs(t, append(args, model)...)
		for out, w := range want {
			g := got[out]
			if len(g) != len(w) {
				t.Fatalf("%v: output %s has %d values, cpu-only %d", args, out, len(g), len(w))
			}
			for i := range w {
				if math.Float32bits(float32(g[i])) != math.Float32bits(float32(w[i])) {
					t.Fatalf("%v: output %s[%d] = %g, cpu-only %g: not bit for bit", args, out, i, g[i], w[i])
				}
			}
		}
	}
}

// TestCalibrate writes a calibration file that -placement cost reads.
func TestCalibrate(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cost.json")
	if code, _, stderr := runCLI("calibrate", "-o", file, "-time", "2ms", "-threads", "1"); code != 0 {
		t.Fatalf("calibrate: exit %d\n%s", code, stderr)
	}
	m, err := passes.LoadCostModel(file)
	if err != nil {
		t.Fatal(err)
	}
	if c := m.Backends["cpu"]; c.NsPerFlop <= 0 || c.NsPerByte <= 0 || m.Copies["cpu>sim"].NsPerByte <= 0 {
		t.Errorf("calibration without measurements: %+v", m)
	}
	if code, _, stderr := runCLI("plan", "-backends", "sim0,cpu", "-ngl", "2", "-placement", "cost", "-cost", file, "../../../../examples/llama/llama.g"); code != 0 {
		t.Errorf("plan with the calibration: exit %d\n%s", code, stderr)
	}
}

// TestPlacementFlagErrors: bad placement flags are usage errors.
func TestPlacementFlagErrors(t *testing.T) {
	const model = "../../../../examples/llama/llama.g"
	for _, args := range [][]string{
		{"-placement", "fast"},
		{"-cost", "x.json"},
		{"-fit"},
		{"-fit", "-ngl", "2", "-mem", "sim0=1MiB"},
		{"-mem", "sim0=1MiB"},
		{"-fit", "-mem", "sim0=lots"},
		{"-fit", "-mem", "sim0=1MiB", "-fit-margin", "100"},
	} {
		code, _, stderr := runCLI(append(append([]string{"plan", "-backends", "sim0,cpu"}, args...), model)...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, ExitUsage, stderr)
		}
	}
}

// TestRunStatsEstimates: a plan made by the cost model carries its
// estimates, and run -stats puts them beside what was measured.
func TestRunStatsEstimates(t *testing.T) {
	needGo(t)
	code, _, stderr := runCLI("run", "-stats", "-backends", "sim0,cpu", "-ngl", "2", "-placement", "cost", "../../../../examples/llama/llama.g")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := strings.Count(stderr, ", estimated "); n != 3 {
		t.Errorf("%d splits with an estimate, want 3:\n%s", n, stderr)
	}
	if _, _, plain := runCLI("run", "-stats", "-backends", "sim0,cpu", "-ngl", "2", "../../../../examples/llama/llama.g"); strings.Contains(plain, "estimated") {
		t.Errorf("ggml's plan has no estimates, but -stats shows some:\n%s", plain)
	}
}

// TestMoEFlags: -cpu-moe and -n-cpu-moe N place experts' weights as
// llama.cpp's overrides do, each in its place among the -ot rules (the
// first rule a name matches wins); the router and the rest follow -ngl.
func TestMoEFlags(t *testing.T) {
	model := moeModel
	src, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want map[string]string // weight: backend
	}{
		{[]string{"-cpu-moe"}, map[string]string{"blk.0.ffn_up_exps.weight": "cpu", "blk.1.ffn_down_exps.weight": "cpu", "blk.1.ffn_gate_exps.weight": "cpu", "blk.0.ffn_gate_inp.weight": "sim0", "blk.0.attn_q.weight": "sim0"}},
		{[]string{"-n-cpu-moe", "1"}, map[string]string{"blk.0.ffn_up_exps.weight": "cpu", "blk.0.ffn_gate_exps.weight": "cpu", "blk.1.ffn_up_exps.weight": "sim0", "blk.0.ffn_gate_inp.weight": "sim0"}},
		{[]string{"-n-cpu-moe", "0"}, map[string]string{"blk.0.ffn_up_exps.weight": "sim0", "blk.1.ffn_up_exps.weight": "sim0"}},
		{[]string{"-ot", `blk\.0\.=sim0`, "-cpu-moe"}, map[string]string{"blk.0.ffn_up_exps.weight": "sim0", "blk.1.ffn_up_exps.weight": "cpu"}},
		{[]string{"-cpu-moe", "-ot", `blk\.0\.=sim0`}, map[string]string{"blk.0.ffn_up_exps.weight": "cpu", "blk.0.attn_q.weight": "sim0"}},
		{[]string{"-cpu-moe=false"}, map[string]string{"blk.0.ffn_up_exps.weight": "sim0"}},
	} {
		args := append([]string{"-backends", "sim0,cpu", "-ngl", "99"}, c.args...)
		res, err := compiler.Compile(model, src, targetFlagsFor(t, args))
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		got := map[string]string{}
		for _, p := range res.Graph.Params {
			got[p.Name] = res.Graph.Backends[res.Graph.PlacedBackend(p)].Name
		}
		for name, want := range c.want {
			if got[name] != want {
				t.Errorf("%v: %s on %s, want %s", c.args, name, got[name], want)
			}
		}
	}
}

// expertStats are the -stats lines' expert copies: experts used and of
// how many, bytes moved and the whole tensors'.
var expertStats = regexp.MustCompile(`experts (\d+) of (\d+): (\d+) of (\d+) bytes`)

// TestRunExpertCopies runs qwen3moe with its experts in host memory and
// their products offloaded to a simulated GPU (3 tokens of the 32 the plan
// is made for: the products are offloaded by the bound, ggml's rule at 32
// tokens), and wants the CPU-only run's logits bit for bit while every
// expert copy moves only the experts the tokens chose: fewer bytes than
// the plan's whole tensors.
func TestRunExpertCopies(t *testing.T) {
	needGo(t)
	want, _ := runOutputs(t, "-dim", "n_tokens=3", moeModel)
	runExpertCopies(t, want, 0, 6, "-backends", "sim0,cpu", "-ngl", "99", "-cpu-moe", "-op-offload", "-dim", "n_tokens=3")
	runExpertCopies(t, want, 0, 3, "-backends", "sim0,cpu", "-ngl", "99", "-n-cpu-moe", "1", "-op-offload", "-dim", "n_tokens=3")
	runExpertCopies(t, want, 0, 6, "-backends", "sim0,cpu", "-ngl", "99", "-cpu-moe", "-op-offload", "-n-copies", "2", "-dim", "n_tokens=3")

	// The ids computed on the cpu: the first expert copy reads them
	// there, before its split copies them in; the products on the cpu
	// (no -op-offload) are the reference.
	const idsOnCPU = "testdata/moe_ids_on_cpu.g"
	want, _ = runOutputs(t, "-dim", "n_tokens=1", idsOnCPU)
	for _, nc := range []string{"1", "2"} {
		runExpertCopies(t, want, 0, 3, "-model", idsOnCPU, "-op-offload", "-n-copies", nc, "-dim", "n_tokens=1")
	}
}

// TestGPUExpertCopies: the same on a ggml device (vulkan0, or
// $GRAPHC_TEST_GPU), whose offload rule is ggml's own, its logits within
// partialOffloadTolerance of the CPU's. (ggml's RPC device offloads
// nothing: its products would stay with the experts.)
func TestGPUExpertCopies(t *testing.T) {
	gpu := gpuUnderTest(t)
	want, _ := runOutputs(t, "-dim", "n_tokens=3", moeModel)
	runExpertCopies(t, want, partialOffloadTolerance, 6, "-backends", gpu+",cpu", "-ngl", "99", "-cpu-moe", "-op-offload", "-dim", "n_tokens=3")
}

const moeModel = "../../../../examples/qwen3moe/qwen3moe.g"

// runExpertCopies runs moeModel (or the model of a leading "-model FILE")
// with args and wants its outputs within tol of want (0: bit for bit) and
// nCopies expert copies in -stats, each moving some of its tensor but not
// all: at most 3 tokens choosing 2 of 8 experts each.
func runExpertCopies(t *testing.T, want map[string][]float64, tol float64, nCopies int, args ...string) {
	t.Helper()
	model := moeModel
	if len(args) > 1 && args[0] == "-model" {
		model, args = args[1], args[2:]
	}
	code, out, stderr := runCLI(append(append([]string{"run", "-json", "-stats"}, args...), model)...)
	skipIfPrepared(t, code, stderr)
	if code != 0 {
		t.Fatalf("%v: exit %d\n%s", args, code, stderr)
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
	for _, o := range got.Outputs {
		w := want[o.Name]
		if len(o.Values) != len(w) {
			t.Fatalf("%v: output %s has %d values, cpu-only %d", args, o.Name, len(o.Values), len(w))
		}
		for i := range w {
			if d := math.Abs(o.Values[i] - w[i]); tol == 0 && math.Float32bits(float32(o.Values[i])) != math.Float32bits(float32(w[i])) || d > tol*max(1, math.Abs(w[i])) {
				t.Fatalf("%v: output %s[%d] = %g, cpu-only %g", args, o.Name, i, o.Values[i], w[i])
			}
		}
	}
	copies := expertStats.FindAllStringSubmatch(stderr, -1)
	if len(copies) != nCopies {
		t.Fatalf("%v: %d expert copies in -stats, want %d:\n%s", args, len(copies), nCopies, stderr)
	}
	for _, m := range copies {
		used, n, moved, whole := atoi(t, m[1]), atoi(t, m[2]), atoi(t, m[3]), atoi(t, m[4])
		if used > 2*3 || used < 1 || n != 8 || moved >= whole || moved <= 0 {
			t.Errorf("%v: expert copy %q: 3 tokens choosing 2 of 8 experts each should move some of the tensor, not all", args, m[0])
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
