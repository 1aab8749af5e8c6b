package compiler

import (
	"fmt"
	"strings"
	"testing"

	"github.com/graphc/graphc/passes"
)

// TestLargeRegionPlans: a 10k-node chain that is one parallel region keeps
// most of its tensors alive at once, past the work the greedy strategies
// may spend by default; with regions there is no ggml-alloc plan to fall
// back on, so greedy_size must still place everything (it once left the
// buffer unplaced and plan_memory dereferenced nil).
func TestLargeRegionPlans(t *testing.T) {
	if testing.Short() {
		t.Skip("plans 10k nodes")
	}
	var b strings.Builder
	b.WriteString("dim n_tok <= 8\ninput x0: f32[64, n_tok]\nx = x0\n")
	fmt.Fprintf(&b, "for l in 0..%d {\n  weight w.{l}: f32[64]\n  weight b.{l}: f32[64]\n  x = add(mul(x, w.{l}), b.{l})\n}\noutput y = x\n", 5000)
	res, err := Compile("chain.g", []byte(b.String()), Config{Options: passes.Options{Regions: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Graph.Regions) == 0 || len(res.Graph.Buffers) != 1 || res.Graph.Buffers[0].Strategy != passes.StrategyGreedySize {
		t.Fatalf("%d regions, buffers %+v", len(res.Graph.Regions), res.Graph.Buffers)
	}
}
