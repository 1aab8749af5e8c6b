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
	_, err = io.WriteString(e.stdout, res.Graph.Format())
	return err
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
