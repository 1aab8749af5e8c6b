package cli

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

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
