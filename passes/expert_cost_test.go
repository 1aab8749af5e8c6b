package passes_test

import (
	"math"
	"testing"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/passes"
)

// TestExpertCopyCost: the cost model prices an expert copy by the share
// of experts a batch is expected to use, 1 - (1 - n_used/n_expert)^tokens,
// in place_by_cost's walk as in the plan's estimate.
func TestExpertCopyCost(t *testing.T) {
	const whole = 64 * 32 * 8 * 4 // an expert tensor of moe's
	for _, c := range []struct {
		tokens int64
		want   int64
	}{
		{1, whole / 4},
		{2, int64(math.Ceil((1 - 0.75*0.75) * whole))},
		{32, int64(math.Ceil((1 - math.Pow(0.75, 32)) * whole))},
	} {
		b := &builder{t: t, g: ir.NewGraph("test.g")}
		moe(b, "", "", c.tokens)
		// Offloaded from one token on, so that the products go to sim0 at
		// every batch.
		sim := passes.FromDescription(backend.Sim(0), nil, 1)
		pc := &passes.Context{Options: passes.Options{OpOffload: true}, Backends: []*passes.Backend{sim, fakeBackend("cpu", nil)}}
		if err := passes.Run(b.g, pc, true, "assign_srcs"); err != nil {
			t.Fatal(err)
		}
		m := passes.DefaultCostModel()
		walk := passes.EstimateAssignment(b.g, pc, m)
		if err := passes.SplitGraph(b.g, pc); err != nil {
			t.Fatal(err)
		}
		if err := b.g.Verify(); err != nil {
			t.Fatal(err)
		}
		es := m.Estimate(b.g, pc.Backends)
		if total := passes.TotalNs(es); math.Abs(total-walk) > 1e-9*total {
			t.Errorf("%d tokens: place_by_cost's walk estimates %g ns, the plan %g", c.tokens, walk, total)
		}
		experts := 0
		for k, s := range b.g.Splits {
			for _, in := range s.Inputs {
				if in.Experts == nil {
					continue
				}
				experts++
				if got := passes.ExpertCopyBytes(in.Tensor, in.Experts.IDs); got != c.want {
					t.Errorf("%d tokens: %s expected to move %d bytes, want %d", c.tokens, in.Tensor.Name, got, c.want)
				}
				if len(s.Inputs) == 1 && es[k].CopyBytes != c.want {
					t.Errorf("%d tokens: split %d estimates %d bytes copied, want %d", c.tokens, k, es[k].CopyBytes, c.want)
				}
			}
		}
		if experts != 3 {
			t.Errorf("%d tokens: %d expert copies, want 3", c.tokens, experts)
		}
	}
}

// TestCostPlacementPricesExpertCopies: -placement cost weighs an expert
// product's place by the experts a batch is expected to copy. For one
// token of moe's (a quarter of its 8 experts), copies at 1 ns per byte
// make the offloaded products (1.off) cheaper than on the CPU at 4 ns per
// flop, as the whole tensors would not be; at 8 ns per byte even the
// used experts cost more, and they move to the CPU with their weights.
func TestCostPlacementPricesExpertCopies(t *testing.T) {
	for _, c := range []struct {
		nsPerByte float64
		want      string // the products' backend
	}{{1, "sim0"}, {8, "cpu"}} {
		b := &builder{t: t, g: ir.NewGraph("test.g")}
		moe(b, "sim0", "", 1)
		sim := passes.FromDescription(backend.Sim(0), nil, 1)
		m := &passes.CostModel{
			Backends: map[string]passes.OpCost{"CPU": {NsPerFlop: 4}, "GPU": {}},
			Copy:     passes.CopyCost{NsPerByte: c.nsPerByte},
		}
		pc := &passes.Context{Options: passes.Options{OpOffload: true, Placement: passes.PlacementCost, Cost: m}, Backends: []*passes.Backend{sim, fakeBackend("cpu", nil)}}
		if err := passes.Run(b.g, pc, true, ""); err != nil {
			t.Fatal(err)
		}
		for _, n := range b.g.Nodes {
			if n.Op != ops.MulMatID {
				continue
			}
			if got := b.g.Backends[n.Backend].Name; got != c.want {
				t.Errorf("%g ns per byte copied: %s on %s (%s), want %s", c.nsPerByte, n.Name, got, n.Cause, c.want)
			}
		}
	}
}
