package passes

import (
	"fmt"
	"testing"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/runtime"
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

func mustOp(g *ir.Graph, op ir.Op, name string, srcs ...*ir.Tensor) *ir.Tensor {
	t, err := g.NewOp(op, name, srcs, ir.Args{Params: ir.Params{Scale: 0.5}}, ir.Pos{})
	if err != nil {
		panic(err)
	}
	return t
}

// chainGraph is n nodes in a line, a transformer-ish cycle of mul_mat,
// add, relu and scale of varying widths: each tensor dies at the next.
func chainGraph(n int) *ir.Graph {
	g := ir.NewGraph("chain.g")
	benchTarget(g)
	x := g.NewLeaf(ir.KindInput, "x", runtime.F32, []*ir.Expr{ir.Const(64), ir.Const(8)}, ir.Pos{})
	w1 := g.NewLeaf(ir.KindWeight, "w1", runtime.F32, []*ir.Expr{ir.Const(64), ir.Const(256)}, ir.Pos{})
	w2 := g.NewLeaf(ir.KindWeight, "w2", runtime.F32, []*ir.Expr{ir.Const(256), ir.Const(64)}, ir.Pos{})
	b2 := g.NewLeaf(ir.KindWeight, "b2", runtime.F32, []*ir.Expr{ir.Const(64)}, ir.Pos{})
	for i := 0; i < n; i++ {
		switch i % 4 {
		case 0:
			x = mustOp(g, ir.OpMulMat, fmt.Sprint("up", i), w1, x)
		case 1:
			x = mustOp(g, ir.OpRelu, fmt.Sprint("act", i), x)
		case 2:
			x = mustOp(g, ir.OpMulMat, fmt.Sprint("down", i), w2, x)
		case 3:
			x = mustOp(g, ir.OpAdd, fmt.Sprint("bias", i), x, b2)
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
	x := g.NewLeaf(ir.KindInput, "x", runtime.F32, []*ir.Expr{ir.Const(64), ir.Const(8)}, ir.Pos{})
	w := g.NewLeaf(ir.KindWeight, "w", runtime.F32, []*ir.Expr{ir.Const(64), ir.Const(64)}, ir.Pos{})
	ring := make([]*ir.Tensor, k)
	for i := range ring {
		ring[i] = x
	}
	for i := 0; len(g.Tensors) < n+2; i++ {
		h := mustOp(g, ir.OpRelu, fmt.Sprint("h", i), x)
		if i%3 == 0 {
			h = mustOp(g, ir.OpMulMat, fmt.Sprint("m", i), w, h)
		}
		x = mustOp(g, ir.OpAdd, fmt.Sprint("x", i), h, ring[i%k])
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
