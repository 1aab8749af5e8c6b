package passes

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/graphc/graphc/ir"
)

// Memory strategies: the values of ir.Graph.MemoryStrategy.
const (
	// StrategyBest runs every strategy and keeps, per buffer type, the
	// smallest buffer (ggml's on a tie). The default.
	StrategyBest = "best"
	// StrategyGGML reproduces ggml-alloc's offsets and sizes exactly.
	StrategyGGML = "ggml"
	// StrategyGreedySize places the largest tensors first, best fit over
	// known lifetimes (TFLite's greedy by size, XLA's decreasing-size
	// best-fit heap).
	StrategyGreedySize = "greedy_size"
	// StrategyGreedyBreadth places the tensors of the busiest steps first
	// (TFLite's greedy by breadth).
	StrategyGreedyBreadth = "greedy_breadth"
)

// MemoryStrategies lists the valid values of ir.Graph.MemoryStrategy ("" is
// StrategyBest).
func MemoryStrategies() []string {
	return []string{StrategyBest, StrategyGGML, StrategyGreedySize, StrategyGreedyBreadth}
}

// planMemory gives every tensor its Alloc: views live in their source
// (AllocView), weights and state in their preallocated buffers
// (AllocWeight, AllocState), and everything else — graph inputs, computed
// nodes and split inputs' copies — at an offset in its backend's compute
// buffer (AllocCompute). Backends sharing a buffer type share one buffer,
// g.Buffers, one per buffer type in backend order, with each tensor's size
// planned at the dims' bounds, so the offsets hold for every evaluation
// within bounds.
//
// It needs every leaf and node to have a backend and the splits with their
// copies (split_graph); it establishes the memory plan codegen reads, and
// checks it with VerifyMemory (a failure is a bug in graphc).
//
// The "ggml" strategy mirrors ggml-alloc (ggml-org/ggml src/ggml-alloc.c,
// ggml_gallocr_alloc_graph_impl and ggml_dyn_tallocr) on the graph copy
// ggml_backend_sched_split_graph builds (src/ggml-backend.cpp): inputs
// first and never overwritten, outputs never freed, views keep their source
// alive, a node reuses a dying parent in place when ggml_op_can_inplace
// allows, best-fit free lists, split inputs' copies allocated at the start
// of their split (for the whole evaluation with NCopies > 1), alignment,
// and chunks of at most the backend's MaxSize. The greedy strategies use
// the lifetimes graphc knows in advance (memory_greedy.go). Which one runs
// is g.MemoryStrategy; by default all do and the smallest buffer wins.
// With parallel regions (plan_regions), every lifetime that begins or ends
// in a region spans all of it and no node there reuses a source in place;
// ggml's strategy, which frees by reference counts, does not run.
// For every buffer the pass records the planned Size, the LowerBound no
// placement can beat and the NaiveSize without any reuse.
//
// See testdata/plan_memory/.
func planMemory(g *ir.Graph, pc *Context) error {
	strategy := g.MemoryStrategy
	if strategy == "" {
		strategy = StrategyBest
	}
	valid := false
	for _, s := range MemoryStrategies() {
		valid = valid || s == strategy
	}
	if !valid {
		return fmt.Errorf("unknown memory strategy %q: want one of %s", g.MemoryStrategy, strings.Join(MemoryStrategies(), ", "))
	}
	if strategy == StrategyGGML && len(g.Regions) > 0 {
		return fmt.Errorf("memory strategy %q reproduces ggml-alloc, which knows no parallel regions: drop -regions (set parallel_regions) or pick another", strategy)
	}
	p := newMemProblem(g, pc)
	if err := p.checkTotal(); err != nil {
		return err
	}

	var cands []*memAssign
	var limit int64
	if strategy == StrategyBest {
		limit = greedyWorkLimit
	}
	if (strategy == StrategyBest && len(g.Regions) == 0) || strategy == StrategyGGML {
		cands = append(cands, p.planGGML())
	}
	if strategy == StrategyBest || strategy == StrategyGreedySize {
		sizeLimit := limit
		if len(g.Regions) > 0 {
			// No ggml-alloc plan to fall back on: greedy_size must place
			// every buffer, however long it takes.
			sizeLimit = 0
		}
		cands = append(cands, p.planGreedy(StrategyGreedySize, false, sizeLimit))
	}
	if strategy == StrategyBest || strategy == StrategyGreedyBreadth {
		cands = append(cands, p.planGreedy(StrategyGreedyBreadth, true, limit))
	}
	final, names := p.choose(cands)
	p.apply(final, names)

	pos := ir.Pos{File: g.Source}
	if err := VerifyMemory(g); err != nil {
		pc.Fatalf(pos, "memory plan fails verification: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	if err := p.checkBuffers(); err != nil {
		return err
	}
	if pc.Debug > 0 {
		for b, buf := range g.Buffers {
			var alts []string
			for _, c := range cands {
				if !c.skipped[b] {
					alts = append(alts, fmt.Sprintf("%s %d", c.name, c.size(b)))
				}
			}
			pc.Notef(pos, "buffer %s: %d bytes by %s (%s; lower bound %d, naive %d)",
				buf.BufferType, buf.Size, buf.Strategy, strings.Join(alts, ", "), buf.LowerBound, buf.NaiveSize)
		}
	}
	return nil
}

// choose keeps, per buffer, the smallest candidate (the first on a tie).
// When a candidate put a tensor outside its backend's buffer (ggml-alloc
// reuses a parent in place across buffers), buffers cannot be chosen
// independently, and the candidate with the smallest total wins.
func (p *allocationProblem) choose(cands []*memAssign) (*memAssign, []string) {
	names := make([]string, len(p.bufs))
	perBuffer := len(cands) > 1
	for _, c := range cands {
		perBuffer = perBuffer && c.ownBuffers(p)
	}
	if !perBuffer {
		best, bestTotal := cands[0], int64(-1)
		for _, c := range cands {
			var total int64
			whole := true
			for b := range p.bufs {
				total += c.size(b)
				whole = whole && !c.skipped[b]
			}
			if whole && (bestTotal < 0 || total < bestTotal) {
				best, bestTotal = c, total
			}
		}
		for b := range names {
			names[b] = best.name
		}
		return best, names
	}
	picked := make([]*memAssign, len(p.bufs))
	final := newMemAssign(StrategyBest, p)
	for b := range p.bufs {
		for _, c := range cands {
			if !c.skipped[b] && (picked[b] == nil || c.size(b) < picked[b].size(b)) {
				picked[b] = c
			}
		}
		final.chunks[b] = picked[b].chunks[b]
		names[b] = picked[b].name
	}
	for i := range p.tensors {
		c := picked[p.tensors[i].buf]
		final.chunk[i], final.off[i] = c.chunk[i], c.off[i]
	}
	return final, names
}

// apply writes assignment a into the graph: every tensor's Alloc and the
// buffers.
func (p *allocationProblem) apply(a *memAssign, names []string) {
	g := p.g
	kind := func(t *ir.Tensor) {
		switch {
		case t.ViewSrc != nil:
			t.Alloc = ir.Alloc{Kind: ir.AllocView}
		case t.Kind == ir.KindWeight:
			t.Alloc = ir.Alloc{Kind: ir.AllocWeight}
		case t.Kind == ir.KindState:
			t.Alloc = ir.Alloc{Kind: ir.AllocState}
		default:
			t.Alloc = ir.Alloc{} // not part of the plan
		}
	}
	for _, t := range g.Tensors {
		kind(t)
	}
	for _, t := range g.Leafs {
		kind(t)
	}
	for _, t := range g.Nodes {
		kind(t)
	}
	for i := range p.tensors {
		p.tensors[i].t.Alloc = ir.Alloc{Kind: ir.AllocCompute, Buffer: int(a.buf[i]), Chunk: int(a.chunk[i]), Offset: a.off[i]}
	}
	g.Buffers = make([]*ir.Buffer, 0, len(p.bufs))
	for b, mb := range p.bufs {
		lower, naive := p.bounds(a, b)
		buf := &ir.Buffer{BufferType: mb.bufType, Backend: mb.backend, Size: a.size(b), LowerBound: lower, NaiveSize: naive,
			Alignment: mb.align, MaxSize: mb.maxSize, Strategy: names[b]}
		if len(a.chunks[b]) > 0 {
			buf.Chunks = append([]int64(nil), a.chunks[b]...)
		}
		g.Buffers = append(g.Buffers, buf)
	}
}

// checkTotal makes sure no strategy's offsets can overflow int64: each
// places a tensor at most at the sum of the sizes of the others, and that
// sum does not saturate. Each tensor is at most ir.ByteLimit, so only a
// graph of millions of tensors that size gets here.
func (p *allocationProblem) checkTotal() error {
	var total int64
	for i := range p.tensors {
		total = ir.SumBytes(total, p.tensors[i].size)
	}
	if total == math.MaxInt64 {
		big := p.largest(-1)
		return fmt.Errorf("%s: the compute tensors together span more than %d bytes; graphc allows at most %d bytes (1 TiB) per buffer",
			big.t.Pos, total, int64(ir.ByteLimit))
	}
	return nil
}

// checkBuffers holds every planned compute buffer to ir.ByteLimit, the
// bound the generated code's offsets rely on. The error points at the
// buffer's largest tensor, the likeliest to shrink.
func (p *allocationProblem) checkBuffers() error {
	var errs []error
	for b, buf := range p.g.Buffers {
		if buf.Size <= ir.ByteLimit {
			continue
		}
		pos, why := ir.Pos{File: p.g.Source}, ""
		if big := p.largest(b); big != nil {
			pos, why = big.t.Pos, fmt.Sprintf(" (its largest tensor, %s, spans %d)", big.t.Name, big.raw)
		}
		errs = append(errs, fmt.Errorf("%s: compute buffer %s needs %d bytes; graphc allows at most %d bytes (1 TiB) per buffer%s",
			pos, buf.BufferType, buf.Size, int64(ir.ByteLimit), why))
	}
	return errors.Join(errs...)
}

// largest is the largest tensor of buffer b (of all buffers for b < 0).
func (p *allocationProblem) largest(b int) *memTensor {
	var big *memTensor
	for i := range p.tensors {
		m := &p.tensors[i]
		if (b < 0 || int(m.t.Alloc.Buffer) == b) && (big == nil || m.raw > big.raw) {
			big = m
		}
	}
	return big
}
