package passes

import (
	"math"

	"github.com/graphc/graphc/ir"
)

// Placement strategies (Options.Placement).
const (
	PlacementGGML = "ggml" // ggml's passes 1–4 decide alone (the default)
	PlacementCost = "cost" // place_by_cost improves their assignment
)

// placeByCost is the cost-model placement strategy (-placement cost). It
// starts from ggml's assignment and moves the nodes ggml was free to place
// to wherever the cost model (Options.Cost) estimates the evaluation,
// splits and copies included, to be fastest.
//
// Fixed are the nodes ggml cannot move either: user overrides ("usr"),
// tensors whose memory is a weight or state ("1.dst", "1.vsrc"), graph
// inputs, views (they follow their source, as in pass 4), and every
// backend a node's op is not supported on. Everything else, ops on weights
// included (their weight is then copied, at its price), may move.
//
// For each pair of backends, the nodes on either are re-placed between the
// two by a minimum s-t cut of the pairwise model: each node's compute time
// on each side, a split's price between consecutive nodes on different
// sides, and each tensor's copy, paid once per backend that reads it (a
// hyperedge, cut with one auxiliary vertex per tensor and direction). With
// two backends that is the exact optimum of the pairwise model; with more
// it is a swap move, repeated while it pays. Single-node moves polish the
// result. A move is kept only when the estimate of the whole plan, split
// exactly as split_graph will split it, goes down; so the result is never
// estimated slower than ggml's own assignment.
//
// ggml instead places by heuristics that know nothing of time: ops follow
// their weights (1.wgtN), unassigned neighbours take the assignment
// spreading to them (2.sup), and a copy is whatever the cut between
// backends happens to need — two activations where one would do.
func placeByCost(g *ir.Graph, pc *Context) error {
	m := pc.Options.Cost
	if m == nil {
		m = DefaultCostModel()
	}
	ggml := make([]int, len(g.Nodes))
	for i, t := range g.Nodes {
		ggml[i] = t.Backend
	}
	var free []*ir.Tensor
	for _, t := range g.Nodes {
		if movable(t) {
			free = append(free, t)
		}
	}
	best := estimateAssignment(g, pc, m)
	save := func() []int {
		s := make([]int, len(free))
		for i, t := range free {
			s[i] = t.Backend
		}
		return s
	}
	restore := func(s []int) {
		for i, t := range free {
			t.Backend = s[i]
		}
		followViews(g)
	}
	try := func(saved []int) bool {
		followViews(g)
		if c := estimateAssignment(g, pc, m); c < best*(1-1e-12) {
			best = c
			return true
		}
		restore(saved)
		return false
	}
	for round := 0; round < 8; round++ {
		improved := false
		for a := range pc.Backends {
			for b := a + 1; b < len(pc.Backends); b++ {
				saved := save()
				if cutBetween(g, pc, m, free, a, b) && try(saved) {
					improved = true
				}
			}
		}
		if !improved {
			break
		}
	}
	// Every move is an estimate of the whole plan, so polishing is
	// quadratic; beyond a few thousand nodes the cuts have to do.
	if len(free)*len(pc.Backends) <= 20000 {
		for sweep := 0; sweep < 2; sweep++ {
			improved := false
			for _, t := range free {
				for b := range pc.Backends {
					if b == t.Backend || !supportsOp(pc, b, t) {
						continue
					}
					saved := save()
					t.Backend = b
					improved = try(saved) || improved
				}
			}
			if !improved {
				break
			}
		}
	}
	for i, t := range g.Nodes {
		if t.Backend != ggml[i] && !t.Op.IsView() {
			pc.Notef(t.Pos, "%s: on %s instead of %s: the cost model estimates it faster (cost)", t.Name, g.Backends[t.Backend].Name, g.Backends[ggml[i]].Name)
			t.Cause = "cost"
		}
	}
	return nil
}

// movable: ggml's own hard constraints leave the node's backend open.
func movable(t *ir.Tensor) bool {
	if t.Op.IsView() || t.Preallocated() || t.Kind == ir.KindInput {
		return false
	}
	switch t.Cause {
	case "usr", "1.dst", "1.vsrc", "1.inp":
		return false
	}
	return true
}

// followViews puts the views that follow their source (4.vsrc) where it
// now is, in node order so that a view of a view follows too.
func followViews(g *ir.Graph) {
	for _, t := range g.Nodes {
		if t.ViewSrc != nil && t.Cause == "4.vsrc" && !t.Preallocated() {
			t.Backend = t.ViewSrc.Backend
		}
	}
}

// owner is the tensor whose backend decides t's: a following view's
// source, else t.
func owner(t *ir.Tensor) *ir.Tensor {
	for t.ViewSrc != nil && t.Cause == "4.vsrc" && !t.Preallocated() {
		t = t.ViewSrc
	}
	return t
}

// estimateAssignment is CostModel.Estimate of the plan split_graph would
// make from the current assignment, computed without making it: the same
// walk, the same reasons to start a split, the same copies.
func estimateAssignment(g *ir.Graph, pc *Context, m *CostModel) float64 {
	type key struct {
		t       *ir.Tensor
		backend int
	}
	copied := map[key]bool{}
	total := 0.0
	cur, inputs, capacity := -1, 0, 0
	first := 0 // the split's first node, views included (markExpertCopies)
	for i, t := range g.Nodes {
		if t.Op.IsView() {
			continue
		}
		cut := cur < 0 || t.Backend != cur
		if !cut && inputs > 0 {
			for _, s := range t.Src {
				if ownsWeightBuffer(s) && s.Backend != cur && !bufferSupported(g, pc, s, cur) ||
					inputs >= capacity && s.Backend != cur && !copied[key{s, cur}] && !bufferSupported(g, pc, s, cur) {
					cut = true
					break
				}
			}
		}
		if cut {
			if cur >= 0 {
				first = i
			}
			total += m.SplitNs
			cur, inputs, capacity = t.Backend, 0, 0
		}
		total += m.NodeNs(t, pc.Backends[cur])
		for _, s := range t.Src {
			if s.Backend == cur || bufferSupported(g, pc, s, cur) || copied[key{s, cur}] {
				continue
			}
			copied[key{s, cur}] = true
			if inputs >= capacity {
				capacity = max(2*capacity, maxSplitInputs)
			}
			inputs++
			n := s.MaxBytes()
			if g.Nodes[first] == t {
				n = copyBytes(g, t, s)
			}
			total += m.CopyNs(n, pc.Backends[home(g, s)], pc.Backends[cur])
		}
	}
	return total
}

// cutBetween re-places the free nodes now on backend a or b, and able to
// run on both, between the two by a minimum cut of the pairwise cost
// model, everything else held where it is. It reports whether any node
// moved.
func cutBetween(g *ir.Graph, pc *Context, m *CostModel, free []*ir.Tensor, a, b int) bool {
	vertex := map[*ir.Tensor]int{}
	var vars []*ir.Tensor
	for _, t := range free {
		if (t.Backend == a || t.Backend == b) && supportsOp(pc, a, t) && supportsOp(pc, b, t) {
			vertex[t] = 2 + len(vars)
			vars = append(vars, t)
		}
	}
	if len(vars) == 0 {
		return false
	}
	// Vertex 0 is the source side (backend a), 1 the sink side (b).
	f := newFlow(2 + len(vars))
	const src, snk = 0, 1
	inf := math.Inf(1)
	// labelCost charges cost to vertex v when it ends up on side a or b.
	onA := func(v int, cost float64) { f.edge(v, snk, cost) }
	onB := func(v int, cost float64) { f.edge(src, v, cost) }
	for _, t := range vars {
		onA(vertex[t], m.NodeNs(t, pc.Backends[a]))
		onB(vertex[t], m.NodeNs(t, pc.Backends[b]))
	}

	// A split between consecutive nodes on different backends.
	var prev *ir.Tensor
	for _, t := range g.Nodes {
		if t.Op.IsView() {
			continue
		}
		if prev != nil {
			pv, pok := vertex[prev]
			tv, tok := vertex[t]
			switch {
			case pok && tok:
				f.edge(pv, tv, m.SplitNs)
				f.edge(tv, pv, m.SplitNs)
			case pok || tok:
				v, other := pv, t.Backend
				if tok {
					v, other = tv, prev.Backend
				}
				if other == a {
					onB(v, m.SplitNs)
				} else if other == b {
					onA(v, m.SplitNs)
				}
			}
		}
		prev = t
	}

	// Copies: a tensor is copied once to each backend that reads it and
	// cannot read it where it is.
	consumers := map[*ir.Tensor][]*ir.Tensor{}
	var order []*ir.Tensor
	for _, t := range g.Nodes {
		if t.Op.IsView() {
			continue
		}
		for _, s := range t.Src {
			if consumers[s] == nil {
				order = append(order, s)
			}
			if len(consumers[s]) == 0 || consumers[s][len(consumers[s])-1] != t {
				consumers[s] = append(consumers[s], t)
			}
		}
	}
	for _, s := range order {
		o := owner(s)
		ov, ovar := vertex[o]
		fixedOn := map[int]bool{}
		var varUsers []int
		for _, u := range consumers[s] {
			if v, ok := vertex[u]; ok && u != o {
				varUsers = append(varUsers, v)
			} else if !ok {
				fixedOn[u.Backend] = true
			}
		}
		// An expert weight read only by mul_mat_ids is copied expert by
		// expert (copyBytes): the most any of its readers moves.
		bytes := int64(0)
		for _, u := range consumers[s] {
			bytes = max(bytes, copyBytes(g, u, s))
		}
		// price is the copy of s from backend p to backend x, 0 when x
		// reads it where it is.
		price := func(p, x int) float64 {
			if x == p {
				return 0
			}
			if s.Preallocated() {
				if bufferSupported(g, pc, s, x) {
					return 0
				}
			} else if supportsBuft(pc, x, g.Backends[p].BufferType) {
				return 0
			}
			from := p
			if h := g.PlacedBackend(s); h >= 0 {
				from = h
			}
			return m.CopyNs(bytes, pc.Backends[from], pc.Backends[x])
		}
		if !ovar {
			p := s.Backend
			if w := price(p, a); w > 0 && !fixedOn[a] && len(varUsers) > 0 {
				z := f.add()
				for _, u := range varUsers {
					f.edge(u, z, inf)
				}
				f.edge(z, snk, w)
			}
			if w := price(p, b); w > 0 && !fixedOn[b] && len(varUsers) > 0 {
				z := f.add()
				f.edge(src, z, w)
				for _, u := range varUsers {
					f.edge(z, u, inf)
				}
			}
			continue
		}
		var costA, costB float64
		for x := range fixedOn {
			costA += price(a, x)
			costB += price(b, x)
		}
		onA(ov, costA)
		onB(ov, costB)
		if w := price(a, b); w > 0 && !fixedOn[b] && len(varUsers) > 0 {
			z := f.add()
			f.edge(ov, z, w)
			for _, u := range varUsers {
				f.edge(z, u, inf)
			}
		}
		if w := price(b, a); w > 0 && !fixedOn[a] && len(varUsers) > 0 {
			z := f.add()
			for _, u := range varUsers {
				f.edge(u, z, inf)
			}
			f.edge(z, ov, w)
		}
	}

	f.maxFlow(src, snk)
	sideA := f.reachable(src)
	moved := false
	for _, t := range vars {
		nb := b
		if sideA[vertex[t]] {
			nb = a
		}
		moved = moved || nb != t.Backend
		t.Backend = nb
	}
	return moved
}

// flow is a max-flow network (Dinic's algorithm) over float capacities.
type flow struct {
	to, next []int
	cap      []float64
	head     []int
	level    []int
	iter     []int
}

// flowEps is a nanosecond's millionth: residues below it are rounding.
const flowEps = 1e-6

func newFlow(n int) *flow {
	f := &flow{head: make([]int, n)}
	for i := range f.head {
		f.head[i] = -1
	}
	return f
}

func (f *flow) add() int {
	f.head = append(f.head, -1)
	return len(f.head) - 1
}

func (f *flow) edge(u, v int, c float64) {
	if c <= 0 {
		return
	}
	f.to = append(f.to, v, u)
	f.cap = append(f.cap, c, 0)
	f.next = append(f.next, f.head[u], f.head[v])
	f.head[u], f.head[v] = len(f.to)-2, len(f.to)-1
}

func (f *flow) bfs(s, t int) bool {
	f.level = make([]int, len(f.head))
	for i := range f.level {
		f.level[i] = -1
	}
	f.level[s] = 0
	queue := []int{s}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for e := f.head[u]; e >= 0; e = f.next[e] {
			if f.cap[e] > flowEps && f.level[f.to[e]] < 0 {
				f.level[f.to[e]] = f.level[u] + 1
				queue = append(queue, f.to[e])
			}
		}
	}
	return f.level[t] >= 0
}

func (f *flow) dfs(u, t int, pushed float64) float64 {
	if u == t {
		return pushed
	}
	for ; f.iter[u] >= 0; f.iter[u] = f.next[f.iter[u]] {
		e := f.iter[u]
		v := f.to[e]
		if f.cap[e] <= flowEps || f.level[v] != f.level[u]+1 {
			continue
		}
		if d := f.dfs(v, t, math.Min(pushed, f.cap[e])); d > flowEps {
			f.cap[e] -= d
			f.cap[e^1] += d
			return d
		}
	}
	return 0
}

func (f *flow) maxFlow(s, t int) {
	for f.bfs(s, t) {
		f.iter = append([]int(nil), f.head...)
		for f.dfs(s, t, math.Inf(1)) > flowEps {
		}
	}
}

// reachable marks the vertices reachable from s in the residual network:
// the source side of a minimum cut.
func (f *flow) reachable(s int) []bool {
	seen := make([]bool, len(f.head))
	seen[s] = true
	stack := []int{s}
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for e := f.head[u]; e >= 0; e = f.next[e] {
			if f.cap[e] > flowEps && !seen[f.to[e]] {
				seen[f.to[e]] = true
				stack = append(stack, f.to[e])
			}
		}
	}
	return seen
}
