package passes_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphc/graphc/ggmltrace"
	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/passes"
)

func bytesCopied(es []passes.SplitEstimate) int64 {
	var n int64
	for _, e := range es {
		n += e.CopyBytes
	}
	return n
}

// TestCostPlacementNeverSlower: on every conformance trace, the cost
// strategy's plan is never estimated slower than ggml's own under the same
// model, and on llama_partial it copies less: the residual stream into the
// offloaded layers, not the two activations it is the sum of.
func TestCostPlacementNeverSlower(t *testing.T) {
	files, _ := filepath.Glob("../ggmltrace/testdata/*.json")
	if len(files) == 0 {
		t.Fatal("no traces")
	}
	model := passes.DefaultCostModel()
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			tr, err := ggmltrace.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			ggml, pc, err := tr.Plan("", 0)
			if err != nil {
				t.Fatal(err)
			}
			want := model.Estimate(ggml, pc.Backends)

			g, backends, opts, err := tr.Graph()
			if err != nil {
				t.Fatal(err)
			}
			opts.Placement = passes.PlacementCost
			cpc := &passes.Context{Backends: backends, Options: opts}
			if err := passes.Run(g, cpc, true, ""); err != nil {
				t.Fatal(err)
			}
			got := model.Estimate(g, cpc.Backends)
			moved := 0
			for _, n := range g.Nodes {
				if n.Cause == "cost" {
					moved++
				}
			}
			t.Logf("ggml %.1f µs, %d B copied; cost %.1f µs, %d B copied, %d nodes moved",
				passes.TotalNs(want)/1000, bytesCopied(want), passes.TotalNs(got)/1000, bytesCopied(got), moved)
			if passes.TotalNs(got) > passes.TotalNs(want)*(1+1e-9) {
				t.Errorf("cost strategy estimated %.1f µs, ggml's plan %.1f µs", passes.TotalNs(got)/1000, passes.TotalNs(want)/1000)
			}
			if name == "llama_partial" {
				if bytesCopied(want) != 6688 {
					t.Errorf("ggml's plan copies %d bytes, the trace 6688", bytesCopied(want))
				}
				if n := bytesCopied(got); n >= 6688 {
					t.Errorf("cost strategy copies %d bytes per evaluation, ggml 6688", n)
				}
			}
		})
	}
}

// TestCostPlacementKeepsHardConstraints: nodes on weights and state and
// user overrides stay where ggml put them.
func TestCostPlacementKeepsHardConstraints(t *testing.T) {
	tr, err := ggmltrace.Load("../ggmltrace/testdata/llama_partial.json")
	if err != nil {
		t.Fatal(err)
	}
	ggml, _, err := tr.Plan("", 0)
	if err != nil {
		t.Fatal(err)
	}
	g, backends, opts, err := tr.Graph()
	if err != nil {
		t.Fatal(err)
	}
	opts.Placement = passes.PlacementCost
	if err := passes.Run(g, &passes.Context{Backends: backends, Options: opts}, true, ""); err != nil {
		t.Fatal(err)
	}
	for i, n := range g.Nodes {
		if n.Preallocated() || n.Cause == "usr" || n.Kind == ir.KindInput {
			if n.Backend != ggml.Nodes[i].Backend {
				t.Errorf("%s (%s) moved from %d to %d", n.Name, n.Cause, ggml.Nodes[i].Backend, n.Backend)
			}
		}
	}
}
