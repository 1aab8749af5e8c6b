package passes

import (
	"fmt"
	"testing"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// Synthetic graphs for planning time and planned size.

func benchTarget(g *ir.Graph) {
	g.Backends = []*ir.Backend{{Name: "cpu", BufferType: "cpu", Host: true, Alignment: 32}}
}

func scheduleOnCPU(g *ir.Graph) {
	for _, t := range g.Leafs {
		t.Backend = 0
	}
	for _, t := range g.Nodes {
		t.Backend = 0
	}
	g.Splits = []*ir.Split{{Backend: 0, First: 0, End: len(g.Nodes)}}
}

func mustOp(g *ir.Graph, op ops.Op, name string, srcs ...*ir.Tensor) *ir.Tensor {
	t, err := g.NewOp(op, name, srcs, ir.Args{}, ir.Pos{})
	if err != nil {
		panic(err)
	}
	return t
}

// chainGraph is n nodes in a line: matmuls widening 64 → 128 → 256 → 512
// and back, each followed by an in-place activation; every tensor dies at
// the next, but the widening steps fragment in-order allocation.
func chainGraph(n int) *ir.Graph {
	g := ir.NewGraph("chain.g")
	benchTarget(g)
	widths := []int64{128, 256, 512, 256, 128, 64}
	x := mustLeaf(g.NewLeaf(ir.KindInput, "x", tensor.F32, []*ir.Expr{ir.Const(64), ir.Const(8)}, ir.Pos{}))
	var ws []*ir.Tensor
	prev := int64(64)
	for i, w := range widths {
		ws = append(ws, mustLeaf(g.NewLeaf(ir.KindWeight, fmt.Sprint("w", i), tensor.F32, []*ir.Expr{ir.Const(prev), ir.Const(w)}, ir.Pos{})))
		prev = w
	}
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			x = mustOp(g, ops.MulMat, fmt.Sprint("mm", i), ws[i/2%len(ws)], x)
		} else {
			x = mustOp(g, ops.Relu, fmt.Sprint("act", i), x)
		}
	}
	x.Output = true
	g.Outputs = append(g.Outputs, x)
	g.Expand(x)
	scheduleOnCPU(g)
	return g
}

// ladderGraph is n nodes where every rung reads the tensor k rungs back
// (x_i = add(relu(x_{i-1}), x_{i-k}), k = 8): lives span k rungs and
// tensors of two sizes interleave, which in-order allocation fragments.
func ladderGraph(n int) *ir.Graph {
	const k = 8
	g := ir.NewGraph("ladder.g")
	benchTarget(g)
	x := mustLeaf(g.NewLeaf(ir.KindInput, "x", tensor.F32, []*ir.Expr{ir.Const(64), ir.Const(8)}, ir.Pos{}))
	w := mustLeaf(g.NewLeaf(ir.KindWeight, "w", tensor.F32, []*ir.Expr{ir.Const(64), ir.Const(64)}, ir.Pos{}))
	ring := make([]*ir.Tensor, k)
	for i := range ring {
		ring[i] = x
	}
	for i := 0; len(g.Tensors) < n+2; i++ {
		h := mustOp(g, ops.Relu, fmt.Sprint("h", i), x)
		if i%3 == 0 {
			h = mustOp(g, ops.MulMat, fmt.Sprint("m", i), w, h)
		}
		x = mustOp(g, ops.Add, fmt.Sprint("x", i), h, ring[i%k])
		ring[i%k] = x
	}
	x.Output = true
	g.Outputs = append(g.Outputs, x)
	g.Expand(x)
	scheduleOnCPU(g)
	return g
}

var benchGraphs = []struct {
	name  string
	build func(n int) *ir.Graph
}{{"chain", chainGraph}, {"ladder", ladderGraph}}

// BenchmarkPlanMemory: planning time (all strategies, verification
// included) must grow about linearly: 100k nodes well under a second.
func BenchmarkPlanMemory(b *testing.B) {
	for _, gb := range benchGraphs {
		for _, n := range []int{1_000, 10_000, 100_000} {
			g := gb.build(n)
			for _, strategy := range []string{StrategyBest, StrategyGGML} {
				b.Run(fmt.Sprintf("%s/%d/%s", gb.name, n, strategy), func(b *testing.B) {
					g.MemoryStrategy = strategy
					for b.Loop() {
						if err := planMemory(g, &Context{}); err != nil {
							b.Fatal(err)
						}
					}
					buf := g.Buffers[0]
					b.ReportMetric(float64(len(g.Nodes)), "nodes")
					b.ReportMetric(float64(buf.Size), "bytes")
					b.ReportMetric(float64(buf.Size)/float64(buf.LowerBound), "size/lower")
				})
			}
		}
	}
}

// TestMemoryPlannedVsLowerBound reports every strategy's planned bytes
// against the lower bound on the synthetic graphs, and checks that "best"
// is never worse than ggml.
func TestMemoryPlannedVsLowerBound(t *testing.T) {
	for _, gb := range benchGraphs {
		g := gb.build(2000)
		p := newMemProblem(g, &Context{})
		ggml := p.planGGML()
		lower, naive := p.bounds(ggml, 0)
		line := fmt.Sprintf("%s (%d nodes): lower bound %d, naive %d", gb.name, len(g.Nodes), lower, naive)
		best := ggml.size(0)
		for _, a := range []*memAssign{ggml, p.planGreedy(StrategyGreedySize, false, 0), p.planGreedy(StrategyGreedyBreadth, true, 0)} {
			line += fmt.Sprintf(", %s %d (%.3f×)", a.name, a.size(0), float64(a.size(0))/float64(lower))
			best = min(best, a.size(0))
		}
		t.Log(line)
		g.MemoryStrategy = StrategyBest
		if err := planMemory(g, &Context{}); err != nil {
			t.Fatal(err)
		}
		if g.Buffers[0].Size != best || best > ggml.size(0) || best < lower {
			t.Errorf("%s: best plan %d, want min of the strategies %d, within [%d, %d]", gb.name, g.Buffers[0].Size, best, lower, ggml.size(0))
		}
	}
}

// TestMemoryRandomSummary reports, over random scheduled graphs, how far
// each strategy's buffers are from the lower bound in total, and how often
// each one is the smallest.
func TestMemoryRandomSummary(t *testing.T) {
	const n = 500
	var lower, naive, best int64
	total := map[string]int64{}
	wins := map[string]int{}
	buffers := 0
	for seed := int64(0); seed < n; seed++ {
		g := newRandGraph(seed)
		p := newMemProblem(g, &Context{})
		as := []*memAssign{p.planGGML(), p.planGreedy(StrategyGreedySize, false, 0), p.planGreedy(StrategyGreedyBreadth, true, 0)}
		if !as[0].ownBuffers(p) {
			continue // ggml reused memory across buffers: compared whole in planMemory
		}
		for b := range p.bufs {
			lo, na := p.bounds(as[0], b)
			lower, naive = lower+lo, naive+na
			smallest := as[0].size(b)
			for _, a := range as {
				total[a.name] += a.size(b)
				smallest = min(smallest, a.size(b))
			}
			for _, a := range as {
				if a.size(b) == smallest {
					wins[a.name]++
				}
			}
			best += smallest
			buffers++
		}
	}
	line := fmt.Sprintf("%d buffers of %d random graphs: lower bound %d, naive %d (%.2f×)", buffers, n, lower, naive, float64(naive)/float64(lower))
	for _, name := range []string{StrategyGGML, StrategyGreedySize, StrategyGreedyBreadth} {
		line += fmt.Sprintf("; %s %.4f× (smallest on %d)", name, float64(total[name])/float64(lower), wins[name])
	}
	t.Logf("%s; best %.4f×", line, float64(best)/float64(lower))
	if best > total[StrategyGGML] {
		t.Errorf("best %d larger than ggml %d", best, total[StrategyGGML])
	}
}

// mustLeaf is NewLeaf's tensor, for tests whose shapes are valid.
func mustLeaf(t *ir.Tensor, err error) *ir.Tensor {
	if err != nil {
		panic(err)
	}
	return t
}
