package compiler

import (
	"os"
	"strings"
	"testing"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/passes"
	"github.com/graphc/graphc/tensor"
)

func compileLlama(t *testing.T, cfg Config) *Result {
	t.Helper()
	src, err := os.ReadFile("../examples/llama/llama.g")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Backends = []string{"sim0", "cpu"}
	res, err := Compile("llama.g", src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestFitPicksTheMostLayers gives sim0 a budget just large enough for
// ngl = 0, 2 and 4 layers as -ngl plans them, margin included, and wants
// -fit to pick exactly those counts.
func TestFitPicksTheMostLayers(t *testing.T) {
	need := func(ngl int) int64 {
		res := compileLlama(t, Config{Placement: Placement{GPULayers: &ngl}})
		return rowOf(MemoryOf(res.Graph), "sim0").Total()
	}
	for _, ngl := range []int{0, 2, 4} {
		// The budget whose usable part is exactly this plan's total: one
		// byte less would not do.
		budget := int64(float64(need(ngl))/(1-DefaultFitMargin)) + 2
		if ngl == 0 {
			budget = need(1) / 2
		}
		res := compileLlama(t, Config{Fit: &Fit{Budgets: map[string]int64{"sim0": budget, "cpu": 1 << 30}, Margin: -1}})
		if got := res.Fit.Layers; len(got) != 1 || got[0] != ngl {
			t.Errorf("sim0 budget %d: -fit chose layers %v, want [%d]", budget, got, ngl)
		}
		if m := rowOf(res.Fit.Memory, "sim0"); m.Over() != 0 || m.Budget != budget {
			t.Errorf("sim0 budget %d: the chosen plan's row %+v does not fit", budget, m)
		}
	}
}

// TestFitMatchesNGL: the plan -fit chooses is the plan of -ngl with the
// same count.
func TestFitMatchesNGL(t *testing.T) {
	res := compileLlama(t, Config{Fit: &Fit{Budgets: map[string]int64{"sim0": 400 << 10}, Margin: -1}})
	ngl := res.Fit.Layers[0]
	want := compileLlama(t, Config{Placement: Placement{GPULayers: &ngl}})
	if res.Graph.Format() != want.Graph.Format() {
		t.Errorf("-fit's plan (ngl %d) differs from -ngl %d's", ngl, ngl)
	}
}

func TestFitErrors(t *testing.T) {
	src, _ := os.ReadFile("../examples/llama/llama.g")
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{Fit: &Fit{Budgets: map[string]int64{"sim0": 64 << 10, "cpu": 100 << 10}, Margin: -1}}, "cpu needs 734.78KiB"},
		{Config{Fit: &Fit{Budgets: map[string]int64{"sim0": 64 << 10, "cpu": 100 << 10}, Margin: -1}}, "639.78KiB over"},
		{Config{Fit: &Fit{Budgets: map[string]int64{"gpu": 1}, Margin: -1}}, "-mem: gpu not in the target"},
	}
	for _, c := range cases {
		c.cfg.Backends = []string{"sim0", "cpu"}
		_, err := Compile("llama.g", src, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error with %q", err, c.want)
		}
	}
}

func TestParseBudgets(t *testing.T) {
	got, err := ParseBudgets("sim0=64KiB, cpu=1.5GiB,cuda0=4096")
	if err != nil {
		t.Fatal(err)
	}
	if got["sim0"] != 64<<10 || got["cpu"] != 3<<29 || got["cuda0"] != 4096 {
		t.Errorf("got %v", got)
	}
	for _, bad := range []string{"sim0", "=1KiB", "sim0=", "sim0=-1", "sim0=1XB", "sim0=1KiB,sim0=2KiB", "sim0=0"} {
		if _, err := ParseBudgets(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestFitCountsPackedWeights: the CPU's packed copies of q4_0 weights are
// memory -fit counts. A budget that holds the llama example's q4_0 weights
// but not their copies fits with -pack=false only.
func TestFitCountsPackedWeights(t *testing.T) {
	src, err := os.ReadFile("../examples/llama/llama.g")
	if err != nil {
		t.Fatal(err)
	}
	compile := func(cfg Config) (*Result, error) {
		cfg.Backends = []string{"cpu"}
		return Compile("llama.g", src, cfg)
	}
	f32, err := compile(Config{})
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]tensor.DType{}
	for _, w := range f32.Graph.Params {
		if ne0, _ := w.Ne[0].Constant(); w.Kind == ir.KindWeight && ne0%32 == 0 && !ir.Equal(w.Ne[1], ir.Const(1)) {
			types[w.Name] = tensor.Q4_0
		}
	}
	plain, err := compile(Config{WeightTypes: types, Options: passes.Options{NoPack: true}})
	if err != nil {
		t.Fatal(err)
	}
	packed, err := compile(Config{WeightTypes: types})
	if err != nil {
		t.Fatal(err)
	}
	p, q := rowOf(MemoryOf(plain.Graph), "cpu"), rowOf(MemoryOf(packed.Graph), "cpu")
	ws, n := packed.Graph.PackedWeights(0)
	if len(ws) == 0 || p.Packed != 0 || q.Packed != n || q.Total() != p.Total()+n {
		t.Fatalf("%d weights packed, %d bytes; rows without packing %+v, with %+v", len(ws), n, p, q)
	}
	budget := int64(float64(p.Total())/(1-DefaultFitMargin)) + 2
	fit := &Fit{Budgets: map[string]int64{"cpu": budget}, Margin: -1}
	if _, err := compile(Config{WeightTypes: types, Options: passes.Options{NoPack: true}, Fit: fit}); err != nil {
		t.Errorf("without packing, cpu=%d: %v", budget, err)
	}
	if _, err := compile(Config{WeightTypes: types, Fit: fit}); err == nil || !strings.Contains(err.Error(), ", packed "+Size(n)) {
		t.Errorf("with packing, cpu=%d: %v; want cpu over, its packed %s named", budget, err, Size(n))
	}
}

// TestFitMovesExperts: for a mixture of experts -fit keeps every layer on
// sim0 while moving the experts of its first layers to the cpu makes
// room, choosing the fewest such layers (the plan of -ngl 99 -n-cpu-moe
// k); with too little room even for that it moves whole layers.
func TestFitMovesExperts(t *testing.T) {
	src, err := os.ReadFile("../examples/qwen3moe/qwen3moe.g")
	if err != nil {
		t.Fatal(err)
	}
	compile := func(cfg Config) *Result {
		t.Helper()
		cfg.Backends = []string{"sim0", "cpu"}
		res, err := Compile("qwen3moe.g", src, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	all := 99
	need := func(k int) int64 {
		res := compile(Config{Placement: Placement{GPULayers: &all, Overrides: NCPUMoE(k)}})
		return rowOf(MemoryOf(res.Graph), "sim0").Total()
	}
	budget := func(n int64) map[string]int64 { return map[string]int64{"sim0": n} }
	for k := 0; k <= 2; k++ {
		b := int64(float64(need(k))/(1-DefaultFitMargin)) + 2
		res := compile(Config{Fit: &Fit{Budgets: budget(b), Margin: -1}})
		if res.Fit.CPUMoE != k || len(res.Fit.Layers) != 1 || res.Fit.Layers[0] != 3 {
			t.Errorf("sim0 budget %d: -fit chose layers %v with the experts of %d on the cpu, want [3] and %d", b, res.Fit.Layers, res.Fit.CPUMoE, k)
			continue
		}
		want := compile(Config{Placement: Placement{GPULayers: &all, Overrides: NCPUMoE(k)}})
		if res.Graph.Format() != want.Graph.Format() {
			t.Errorf("-fit's plan (experts of %d layers on the cpu) differs from -ngl 99 -n-cpu-moe %d's", k, k)
		}
	}
	// Less than every layer without its experts: whole layers move.
	b := need(2) * 3 / 4
	res := compile(Config{Fit: &Fit{Budgets: budget(b), Margin: -1}})
	if res.Fit.CPUMoE != 0 || res.Fit.Layers[0] >= 3 {
		t.Errorf("sim0 budget %d: -fit chose layers %v with the experts of %d on the cpu, want fewer layers and no experts moved", b, res.Fit.Layers, res.Fit.CPUMoE)
	}
}
