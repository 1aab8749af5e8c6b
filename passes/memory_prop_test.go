package passes

import (
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// Property tests: plan_memory on thousands of random scheduled graphs.
// Every plan of every strategy must pass VerifyMemory (planMemory panics
// otherwise), be deterministic, and "best" must never be larger than any
// strategy; the verifier itself must reject broken plans.

// randGraph builds a random graph over every op of the op table, with
// views, bounded dims, state writes, outputs, several backends and buffer
// types (some sharing one, some reading another's directly), alignments,
// max sizes, hand-made splits and copies (sources rewritten to the copies
// or not, as the planner accepts both) and pipeline copies.
type randGraph struct {
	r    *rand.Rand
	g    *ir.Graph
	pool []*ir.Tensor // f32 tensors to build on
	n    int
}

func (rg *randGraph) name(prefix string) string {
	rg.n++
	return fmt.Sprintf("%s%d", prefix, rg.n)
}

func (rg *randGraph) pos() ir.Pos { return ir.Pos{File: "rand.g", Line: rg.n + 1, Col: 1} }

func (rg *randGraph) pick() *ir.Tensor { return rg.pool[rg.r.Intn(len(rg.pool))] }

func (rg *randGraph) leaf(kind ir.Kind, dt tensor.DType, ne ...*ir.Expr) *ir.Tensor {
	t := mustLeaf(rg.g.NewLeaf(kind, rg.name(kind.String()[:1]), dt, ne, rg.pos()))
	if dt == tensor.F32 {
		rg.pool = append(rg.pool, t)
	}
	return t
}

func (rg *randGraph) op(op ops.Op, srcs []*ir.Tensor, args ir.Args) *ir.Tensor {
	t, err := rg.g.NewOp(op, rg.name(op.String()+"_"), srcs, args, rg.pos())
	if err != nil {
		return nil
	}
	if t.Type == tensor.F32 {
		rg.pool = append(rg.pool, t)
	}
	return t
}

func c(v int64) *ir.Expr { return ir.Const(v) }

func constShape(t *ir.Tensor) bool {
	for _, e := range t.Ne {
		if _, ok := e.Constant(); !ok {
			return false
		}
	}
	return true
}

var randSizes = []int64{2, 4, 8, 16}

func (rg *randGraph) size() *ir.Expr { return c(randSizes[rg.r.Intn(len(randSizes))]) }

// build adds one random op; false if its operands did not fit.
func (rg *randGraph) build(op ops.Op, roots *[]*ir.Tensor) *ir.Tensor {
	r := rg.r
	a := rg.pick()
	switch op {
	case ops.GetRows:
		table := rg.leaf(ir.KindWeight, tensor.F32, rg.size(), c(16))
		idx := rg.leaf(ir.KindInput, tensor.I32, rg.size())
		return rg.op(op, []*ir.Tensor{table, idx}, ir.Args{})
	case ops.MulMat:
		var w *ir.Tensor
		if r.Intn(3) == 0 {
			w = rg.pick()
		} else {
			w = rg.leaf(ir.KindWeight, tensor.F32, a.Ne[0], rg.size())
		}
		return rg.op(op, []*ir.Tensor{w, a}, ir.Args{})
	case ops.Add, ops.Sub, ops.Mul, ops.Div:
		b := a
		switch r.Intn(4) {
		case 0:
			b = rg.leaf(ir.KindWeight, tensor.F32, a.Ne[0])
		case 1, 2:
			for _, x := range rg.pool {
				if x != a && sameShape(x, a) && r.Intn(2) == 0 {
					b = x
				}
			}
		}
		return rg.op(op, []*ir.Tensor{a, b}, ir.Args{})
	case ops.Scale, ops.RMSNorm, ops.Norm:
		return rg.op(op, []*ir.Tensor{a}, ir.Args{Params: map[ops.Op]ops.Params{ops.Scale: ops.ScaleParams{S: 0.5}, ops.RMSNorm: ops.NormParams{Eps: 1e-5}, ops.Norm: ops.NormParams{Eps: 1e-5}}[op]})
	case ops.SoftMax:
		srcs := []*ir.Tensor{a}
		if r.Intn(2) == 0 {
			srcs = append(srcs, rg.leaf(ir.KindInput, tensor.F32, a.Ne[0], a.Ne[1]))
		}
		return rg.op(op, srcs, ir.Args{Params: ops.SoftMaxParams{Scale: 0.5}})
	case ops.FlashAttnExt:
		nkv := rg.size()
		k := rg.leaf(ir.KindState, tensor.F16, a.Ne[0], nkv, a.Ne[2], a.Ne[3])
		v := rg.leaf(ir.KindState, tensor.F16, rg.size(), nkv, a.Ne[2], a.Ne[3])
		srcs := []*ir.Tensor{a, k, v}
		if r.Intn(2) == 0 {
			srcs = append(srcs, rg.leaf(ir.KindInput, tensor.F16, nkv, a.Ne[1]))
		}
		return rg.op(op, srcs, ir.Args{Params: ops.FlashAttnParams{Scale: 0.5}})
	case ops.Rope:
		x := rg.op(ops.Reshape, []*ir.Tensor{a}, ir.Args{Ne: []*ir.Expr{a.Ne[0], c(1), ir.Mul(a.Ne[1], ir.Mul(a.Ne[2], a.Ne[3]))}})
		if x == nil {
			return nil
		}
		pos := rg.leaf(ir.KindInput, tensor.I32, x.Ne[2])
		return rg.op(op, []*ir.Tensor{x, pos}, ir.Args{Params: ops.RopeParams{NDims: 2, FreqBase: 10000, FreqScale: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}})
	case ops.Cpy:
		if !constShape(a) {
			return nil
		}
		n, _ := a.NElem().Constant()
		var dst *ir.Tensor
		if r.Intn(3) == 0 {
			for _, x := range rg.pool {
				if x != a && x.ViewSrc == nil && x.Kind == ir.KindNode && constShape(x) && ir.Equal(x.NElem(), c(n)) {
					dst = x // a write into a computed tensor
				}
			}
		}
		if dst == nil {
			st := mustLeaf(rg.g.NewLeaf(ir.KindState, rg.name("s"), tensor.F16, []*ir.Expr{c(2 * n)}, rg.pos()))
			dst = rg.op(ops.View, []*ir.Tensor{st}, ir.Args{Ne: []*ir.Expr{c(n)}, Offset: c(int64(r.Intn(2)) * n * 2)})
			if dst == nil {
				return nil
			}
		}
		t := rg.op(op, []*ir.Tensor{a, dst}, ir.Args{})
		if t != nil && r.Intn(2) == 0 {
			*roots = append(*roots, t)
		}
		return t
	case ops.Cont:
		return rg.op(op, []*ir.Tensor{a}, ir.Args{})
	case ops.View:
		if !constShape(a) || !a.Contiguous() {
			return nil
		}
		n, _ := a.NElem().Constant()
		half := max(n/2, 1)
		return rg.op(op, []*ir.Tensor{a}, ir.Args{Ne: []*ir.Expr{c(half)}, Offset: c(int64(r.Intn(2)) * (n - half) * int64(a.Type.Size()))})
	case ops.Reshape:
		if r.Intn(2) == 0 {
			return rg.op(op, []*ir.Tensor{a}, ir.Args{Ne: []*ir.Expr{a.NElem()}})
		}
		return rg.op(op, []*ir.Tensor{a}, ir.Args{Ne: []*ir.Expr{a.Ne[0], ir.Mul(a.Ne[1], a.Ne[2]), a.Ne[3]}})
	case ops.Permute:
		axes := r.Perm(4)
		return rg.op(op, []*ir.Tensor{a}, ir.Args{Params: ops.PermuteParams{Axes: [4]int(axes)}})
	case ops.Transpose:
		return rg.op(op, []*ir.Tensor{a}, ir.Args{})
	case ops.MulMatID:
		x := rg.op(ops.Reshape, []*ir.Tensor{a}, ir.Args{Ne: []*ir.Expr{a.Ne[0], c(1), ir.Mul(a.Ne[1], ir.Mul(a.Ne[2], a.Ne[3]))}})
		if x == nil {
			return nil
		}
		w := rg.leaf(ir.KindWeight, tensor.F32, a.Ne[0], rg.size(), c(4))
		ids := rg.leaf(ir.KindInput, tensor.I32, c(2), x.Ne[2])
		return rg.op(op, []*ir.Tensor{w, x, ids}, ir.Args{})
	case ops.ArgSort:
		return rg.op(op, []*ir.Tensor{a}, ir.Args{Params: ops.ArgSortParams{Order: 1}})
	case ops.TopK:
		// k up to the least ne0 the dims allow, as the shape rule asks.
		lo, _, err := a.Ne[0].Range()
		if err != nil || lo < 1 {
			return nil
		}
		return rg.op(op, []*ir.Tensor{a}, ir.Args{Params: ops.TopKParams{K: 1 + r.Intn(int(min(lo, 4)))}})
	case ops.SumRows:
		return rg.op(op, []*ir.Tensor{a}, ir.Args{})
	}
	if info := op.Info(); info.Flags&ops.FlagElementwise != 0 && info.MaxSrcs == 1 {
		return rg.op(op, []*ir.Tensor{a}, ir.Args{Params: ops.Defaults(info.Params)})
	}
	panic("no generator for op " + op.String())
}

// randTarget is a random target: the last backend is the CPU; others are
// discrete GPUs (own buffer type), BLAS (the CPU's buffer type) or an
// integrated GPU reading CPU memory directly.
func randTarget(r *rand.Rand) []*ir.Backend {
	align := map[string]int64{}
	maxSize := map[string]int64{}
	bt := func(name string) string {
		if _, ok := align[name]; !ok {
			align[name] = 1 << r.Intn(7)
			if r.Intn(4) == 0 {
				maxSize[name] = 64 << r.Intn(6)
			}
		}
		return name
	}
	var out []*ir.Backend
	for i, n := 0, r.Intn(3); i < n; i++ {
		switch r.Intn(4) {
		case 0, 1:
			out = append(out, &ir.Backend{Name: fmt.Sprintf("gpu%d", i), BufferType: bt(fmt.Sprintf("gpu%d", i))})
		case 2:
			out = append(out, &ir.Backend{Name: fmt.Sprintf("blas%d", i), BufferType: bt("cpu"), Host: true})
		case 3:
			out = append(out, &ir.Backend{Name: fmt.Sprintf("uma%d", i), BufferType: bt(fmt.Sprintf("uma%d", i)), Reads: []string{"cpu"}})
		}
	}
	out = append(out, &ir.Backend{Name: "cpu", BufferType: bt("cpu"), Host: true})
	for _, b := range out {
		b.Alignment, b.MaxSize = align[b.BufferType], maxSize[b.BufferType]
	}
	return out
}

// newRandGraph builds and schedules one random graph.
func newRandGraph(seed int64) *ir.Graph {
	r := rand.New(rand.NewSource(seed))
	rg := &randGraph{r: r, g: ir.NewGraph("rand.g")}
	g := rg.g
	g.Backends = randTarget(r)
	g.NCopies = 1 + r.Intn(3)
	if r.Intn(2) == 0 {
		g.NCopies = 1
	}

	var dims []*ir.Expr
	if r.Intn(3) == 0 {
		d := &ir.Dim{Name: "n", Bound: 8, Bounded: true}
		g.Dims = append(g.Dims, d)
		dims = append(dims, ir.DimRef(d))
	}
	for i, n := 0, 1+r.Intn(3); i < n; i++ {
		ne := []*ir.Expr{rg.size(), rg.size()}
		if len(dims) > 0 && r.Intn(2) == 0 {
			ne[1] = dims[0]
		}
		rg.leaf(ir.KindInput, tensor.F32, ne...)
	}
	if r.Intn(2) == 0 {
		rg.leaf(ir.KindWeight, tensor.F32, rg.size(), rg.size())
	}
	if r.Intn(3) == 0 {
		rg.leaf(ir.KindNode, tensor.F32, rg.size(), rg.size()) // a leaf in compute memory
	}
	var roots []*ir.Tensor
	all := ops.All()
	var nodes []*ir.Tensor
	for i, n := 0, 3+r.Intn(30); i < n; i++ {
		if t := rg.build(all[r.Intn(len(all))], &roots); t != nil {
			nodes = append(nodes, t)
		}
	}
	if len(nodes) == 0 {
		nodes = append(nodes, rg.op(ops.Relu, []*ir.Tensor{rg.pool[0]}, ir.Args{}))
	}
	outs := []*ir.Tensor{nodes[len(nodes)-1]}
	for _, t := range nodes {
		if r.Intn(6) == 0 {
			outs = append(outs, t)
		}
	}
	for _, t := range outs {
		if !t.Output {
			t.Output = true
			g.Outputs = append(g.Outputs, t)
		}
		g.Expand(t)
	}
	for _, t := range roots {
		g.Expand(t)
	}
	schedule(r, g)
	return g
}

// schedule assigns backends at random (views follow their source), cuts
// splits where the backend changes, and copies every source a split's
// backend cannot read.
func schedule(r *rand.Rand, g *ir.Graph) {
	nb := len(g.Backends)
	for _, t := range g.Leafs {
		t.Backend = r.Intn(nb)
	}
	cur := nb - 1
	for _, t := range g.Nodes {
		if r.Intn(3) == 0 {
			cur = r.Intn(nb)
		}
		t.Backend = cur
		if t.Op.IsView() {
			t.Backend = t.ViewSrc.Backend
		}
	}
	cutSplits(g, r.Intn(2) == 0)
}

// cutSplits cuts splits where the backend changes and gives each split a
// copy of every source its backend cannot read, made once per backend (as
// split_graph does), with NCopies > 1 the pipeline copies of the graph
// inputs; rewrite makes the nodes read the copies (the planner accepts
// both).
func cutSplits(g *ir.Graph, rewrite bool) {
	readable := func(x *ir.Tensor, b int) bool {
		bt := g.Backends[x.Root().Backend].BufferType
		be := g.Backends[b]
		if bt == be.BufferType {
			return true
		}
		for _, rd := range be.Reads {
			if rd == bt {
				return true
			}
		}
		return false
	}
	type key struct {
		t *ir.Tensor
		b int
	}
	copies := map[key]*ir.Tensor{}
	var s *ir.Split
	for i, n := range g.Nodes {
		if s == nil || n.Backend != s.Backend {
			s = &ir.Split{Backend: n.Backend, First: i}
			g.Splits = append(g.Splits, s)
		}
		s.End = i + 1
		for j, x := range n.Src {
			if g.NCopies > 1 && x.Kind == ir.KindInput && copies[key{x, -1}] == nil {
				in := &ir.SplitInput{Tensor: x, Copies: []*ir.Tensor{x}}
				for k := 1; k < g.NCopies; k++ {
					in.Copies = append(in.Copies, g.NewCopy(x, fmt.Sprintf("%s#%s#%d", g.Backends[x.Backend].Name, x.Name, k), x.Backend))
				}
				copies[key{x, -1}] = x
				g.InputCopies = append(g.InputCopies, in)
			}
			if readable(x, n.Backend) {
				continue
			}
			cp := copies[key{x, n.Backend}]
			if cp == nil {
				in := &ir.SplitInput{Tensor: x}
				for k := 0; k < g.NCopies; k++ {
					in.Copies = append(in.Copies, g.NewCopy(x, fmt.Sprintf("%s#%s#%d", g.Backends[n.Backend].Name, x.Name, k), n.Backend))
				}
				s.Inputs = append(s.Inputs, in)
				cp = in.Copies[0]
				copies[key{x, n.Backend}] = cp
			}
			if rewrite {
				n.Src[j] = cp
			}
		}
	}
}

func planWith(t *testing.T, g *ir.Graph, strategy string) string {
	t.Helper()
	g.MemoryStrategy = strategy
	if err := planMemory(g, &Context{}); err != nil {
		t.Fatal(err)
	}
	return g.Format()
}

func TestMemoryRandomGraphs(t *testing.T) {
	n, first := 4000, int64(0)
	if testing.Short() {
		n = 200
	}
	if s := os.Getenv("GRAPHC_MEMORY_SEEDS"); s != "" { // e.g. 100000 for a long soak
		fmt.Sscan(s, &n)
		first = 1_000_000
	}
	strategies := []string{StrategyGGML, StrategyGreedySize, StrategyGreedyBreadth, StrategyBest}
	better := map[string]int{}
	for seed := first; seed < first+int64(n); seed++ {
		g := newRandGraph(seed)
		func() {
			defer func() {
				if e := recover(); e != nil {
					t.Fatalf("seed %d: %v\n%s", seed, e, g.Format())
				}
			}()
			for _, x := range g.Tensors {
				if maxBytes(x) != x.MaxBytes() {
					t.Fatalf("seed %d: %s: maxBytes %d, MaxBytes %d", seed, x.Name, maxBytes(x), x.MaxBytes())
				}
			}
			sizes := map[string][]int64{}
			for _, s := range strategies {
				first := planWith(t, g, s)
				if again := planWith(t, g, s); again != first {
					t.Fatalf("seed %d: %s is not deterministic:\n%s\n----\n%s", seed, s, first, again)
				}
				for _, b := range g.Buffers {
					sizes[s] = append(sizes[s], b.Size)
					if b.LowerBound > b.Size {
						t.Fatalf("seed %d: %s: buffer %s below its lower bound", seed, s, b.BufferType)
					}
				}
			}
			var bestTotal, ggmlTotal int64
			for k := range sizes[StrategyBest] {
				bestTotal += sizes[StrategyBest][k]
				ggmlTotal += sizes[StrategyGGML][k]
			}
			if bestTotal > ggmlTotal {
				t.Fatalf("seed %d: best %v larger than ggml %v", seed, sizes[StrategyBest], sizes[StrategyGGML])
			}
			if bestTotal < ggmlTotal {
				better["best"]++
			}
		}()
	}
	t.Logf("%d graphs; best smaller than ggml on %d", n, better["best"])
}

// TestVerifyMemoryRejects: the verifier catches a tensor moved onto another
// live one, a misaligned offset and an offset past its chunk.
func TestVerifyMemoryRejects(t *testing.T) {
	caught := map[string]int{}
	for seed := int64(0); seed < 500; seed++ {
		g := newRandGraph(seed)
		planWith(t, g, StrategyBest)
		p := newMemProblem(g, &Context{})
		ts := p.tensors
		for i := range ts {
			for j := range ts {
				a, b := ts[i].t, ts[j].t
				if i == j || ts[i].raw == 0 || ts[j].raw == 0 || a.Alloc.Buffer != b.Alloc.Buffer {
					continue
				}
				// Strictly overlapping lives: no in-place excuse.
				if max(ts[i].start, ts[j].start) >= min(ts[i].end, ts[j].end) {
					continue
				}
				saved := b.Alloc
				b.Alloc.Chunk, b.Alloc.Offset = a.Alloc.Chunk, a.Alloc.Offset
				if err := VerifyMemory(g); err == nil || !strings.Contains(err.Error(), "overlap") {
					t.Fatalf("seed %d: %s moved onto %s: %v", seed, b.Name, a.Name, err)
				}
				b.Alloc = saved
				caught["overlap"]++
				goto next
			}
		}
	next:
		for _, m := range ts {
			buf := g.Buffers[m.t.Alloc.Buffer]
			if m.raw == 0 {
				continue
			}
			saved := m.t.Alloc
			if buf.Alignment > 1 {
				m.t.Alloc.Offset++
				if err := VerifyMemory(g); err == nil {
					t.Fatalf("seed %d: misaligned %s accepted", seed, m.t.Name)
				}
				caught["alignment"]++
				m.t.Alloc = saved
			}
			m.t.Alloc.Offset = buf.Chunks[saved.Chunk]
			if err := VerifyMemory(g); err == nil {
				t.Fatalf("seed %d: %s past its chunk accepted", seed, m.t.Name)
			}
			caught["bounds"]++
			m.t.Alloc = saved
			break
		}
		if err := VerifyMemory(g); err != nil {
			t.Fatalf("seed %d: restored plan rejected: %v", seed, err)
		}
	}
	for _, k := range []string{"overlap", "alignment", "bounds"} {
		if caught[k] == 0 {
			t.Errorf("no %s mutation tried", k)
		}
	}
	t.Logf("mutations caught: %v", caught)
}

// TestMemoryRandomRegions: plan_regions on random graphs (every backend
// running parts) keeps ir.Verify happy, and every plan made for its regions
// passes VerifyMemory, which on some graphs rejects the plan made without
// them: the regions' longer lifetimes are needed, and checked.
func TestMemoryRandomRegions(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 100
	}
	regions, rejected := 0, 0
	for seed := int64(0); seed < int64(n); seed++ {
		g := newRandGraph(seed)
		pc := &Context{Options: Options{Regions: true}}
		for _, b := range g.Backends {
			pc.Backends = append(pc.Backends, &Backend{Backend: *b, Parts: true})
		}
		func() {
			defer func() {
				if e := recover(); e != nil {
					t.Fatalf("seed %d: %v\n%s", seed, e, g.Format())
				}
			}()
			planWith(t, g, StrategyBest)
			if err := planRegions(g, pc); err != nil {
				t.Fatal(err)
			}
			// The hand-made splits need not pass every check of ir.Verify;
			// the regions must.
			if err := g.Verify(); err != nil && strings.Contains(err.Error(), "region") {
				t.Fatalf("seed %d: %v\n%s", seed, err, g.Format())
			}
			if len(g.Regions) == 0 {
				return
			}
			regions += len(g.Regions)
			if VerifyMemory(g) != nil {
				rejected++
			}
			for _, s := range []string{StrategyGreedySize, StrategyGreedyBreadth, StrategyBest} {
				planWith(t, g, s) // planMemory panics when VerifyMemory fails
			}
			g.MemoryStrategy = StrategyGGML
			if err := planMemory(g, pc); err == nil {
				t.Fatalf("seed %d: the ggml strategy planned a graph with regions", seed)
			}
		}()
	}
	if regions == 0 || rejected == 0 {
		t.Errorf("%d regions; %d plans made without them rejected: want some of each", regions, rejected)
	}
	t.Logf("%d graphs: %d regions; %d plans made without them rejected", n, regions, rejected)
}
