package cli

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/internal/planview"
	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/passes"
)

// cmdPlan is `graphc plan`: the plan as text, JSON, a debug report or a
// Graphviz graph.
func cmdPlan(e *env, args []string) error {
	fs := newFlags(e, "plan")
	var tf targetFlags
	tf.register(fs)
	asJSON := fs.Bool("json", false, "print the plan as JSON (schema: docs/plan-json.md)")
	debug := fs.Bool("debug", false, "explain every split and node, like GGML_SCHED_DEBUG=2")
	dot := fs.Bool("dot", false, "print the plan as a Graphviz graph: splits as clusters per backend, parallel regions as dashed clusters, copies as labelled edges")
	svg := fs.Bool("svg", false, "render the -dot graph as SVG (needs Graphviz's dot)")
	through := fs.String("through", "", "stop after this pass and print the graph as it is then ("+strings.Join(passes.Passes(), ", ")+")")
	files, err := parseFlags(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if err := oneOf(fs, "json", "dot", "svg", "debug"); err != nil {
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
	res, err := compiler.Compile(files[0], src, cfg)
	if err != nil {
		return err
	}
	warn(e, res)
	noteIgnored(e, cfg)
	switch {
	case *asJSON:
		return writeJSON(e.stdout, planview.JSON(res.Graph))
	case *dot:
		_, err = io.WriteString(e.stdout, planview.Dot(res.Graph))
		return err
	case *svg:
		b, err := renderSVG(res.Graph)
		if err != nil {
			return err
		}
		_, err = e.stdout.Write(b)
		return err
	case *debug:
		_, err = io.WriteString(e.stdout, planview.DebugReport(res.Graph)+planview.Notes(res.Diags))
		return err
	}
	if _, err = io.WriteString(e.stdout, res.Graph.Format()); err != nil {
		return err
	}
	report := memoryReport(res.Graph)
	if res.Fit != nil {
		report = fitReport(res.Fit)
	}
	if *through == "" {
		if _, err = io.WriteString(e.stdout, report); err != nil {
			return err
		}
	}
	if cfg.Options.Placement == passes.PlacementCost && *through == "" {
		table, err := strategyEstimates(files[0], src, cfg, res)
		if err != nil {
			return err
		}
		_, err = io.WriteString(e.stdout, "\n"+commented(table))
		return err
	}
	return err
}

// strategyEstimates prices ggml's plan of the model and res, the cost
// strategy's, with the same model, split by split.
func strategyEstimates(file string, src []byte, cfg compiler.Config, res *compiler.Result) (string, error) {
	model := cfg.Options.Cost
	if model == nil {
		model = passes.DefaultCostModel()
	}
	cfg.Options.Placement = passes.PlacementGGML
	cfg.Debug = 0
	if res.Fit != nil {
		cfg.Fit = nil
		cfg.Placement.Layers = res.Fit.Layers
	}
	ggml, err := compiler.Compile(file, src, cfg)
	if err != nil {
		return "", err
	}
	return planview.EstimateTable(model.String(), []planview.StrategyEstimate{
		{Strategy: "ggml", Splits: model.Estimate(ggml.Graph, ggml.Backends)},
		{Strategy: "cost", Splits: model.Estimate(res.Graph, res.Backends)},
	}), nil
}

// commented prefixes every line with "# ", the plan text's reports.
func commented(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("# " + line + "\n")
	}
	return b.String()
}

// fitReport says what -fit chose and shows the memory table it chose by.
func fitReport(r *compiler.FitReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n# fit (tried %d plans): %d layers", r.Plans, r.NLayer)
	for k, n := range r.Layers {
		if k == 0 && n > r.NLayer {
			fmt.Fprintf(&b, "; %s: %d layers and the output layer (-ngl %d)", r.Backend[k], r.NLayer, n)
			continue
		}
		fmt.Fprintf(&b, "; %s: %d", r.Backend[k], n)
		if k == 0 {
			fmt.Fprintf(&b, " (-ngl %d)", n)
		}
	}
	if r.CPUMoE > 0 {
		fmt.Fprintf(&b, "; %s: the experts of layers 0..%d (-n-cpu-moe %d)", r.Backend[len(r.Backend)-1], r.CPUMoE-1, r.CPUMoE)
	}
	fmt.Fprintf(&b, "; %s: the rest; %.0f%% of each budget kept free\n", r.Backend[len(r.Backend)-1], r.Margin*100)
	var rows []planview.MemoryRow
	for _, m := range r.Memory {
		rows = append(rows, planview.MemoryRow{Device: strings.Join(m.Backends, "+"), Weights: m.Weights, Packed: m.Packed, State: m.State, Compute: m.Compute, Budget: m.Budget, Usable: m.Usable})
	}
	for _, line := range strings.Split(strings.TrimRight(planview.MemoryTable(rows), "\n"), "\n") {
		b.WriteString("# " + line + "\n")
	}
	return b.String()
}

// memoryReport is the memory the plan takes on each device: weights, the
// state (a model's KV cache, the size -ctx chose) and compute buffers.
func memoryReport(g *ir.Graph) string {
	var rows []planview.MemoryRow
	for _, m := range compiler.MemoryOf(g) {
		rows = append(rows, planview.MemoryRow{Device: strings.Join(m.Backends, "+"), Weights: m.Weights, Packed: m.Packed, State: m.State, Compute: m.Compute})
	}
	return "\n# memory\n" + commented(planview.MemoryTable(rows))
}

// renderSVG renders the plan with Graphviz's dot.
func renderSVG(g *ir.Graph) ([]byte, error) {
	if _, err := exec.LookPath("dot"); err != nil {
		return nil, &compiler.UserError{Msg: "-svg needs Graphviz's dot, which is not installed (e.g. apt-get install graphviz); -dot prints the graph for it"}
	}
	cmd := exec.Command("dot", "-Tsvg")
	cmd.Stdin = strings.NewReader(planview.Dot(g))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, &compiler.InternalError{Msg: fmt.Sprintf("dot failed: %v\n%s", err, errb.String())}
	}
	return out.Bytes(), nil
}
