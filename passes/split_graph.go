package passes

import (
	"fmt"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
)

// maxSplitInputs is GGML_SCHED_MAX_SPLIT_INPUTS: a split's input list
// starts with this capacity and doubles when a node overfills it; a node
// that would add an input to a split whose list is exactly full starts a
// new split instead.
const maxSplitInputs = 30

// splitGraph is the fifth scheduling pass: it cuts the node list into
// splits, runs of consecutive nodes on one backend, and gives each split
// copies of the tensors it reads from memory its backend cannot read.
//
// Walking the non-view nodes in order (view ops run nowhere: they join the
// split they fall in whatever their backend), a new split starts when
//
//   - the node's backend differs from the split's, or
//   - the split already has inputs and the node reads a weight whose buffer
//     the split's backend cannot read (so the memory of the weights copied
//     so far can be reused), or
//   - the split's input list is full (maxSplitInputs, doubled each time a
//     node overfilled it) and the node needs another input.
//
// Every source of a node that lives on another backend, in a buffer the
// split's backend cannot read, becomes an input of the split: NCopies
// KindCopy tensors named like ggml's "BACKEND#name#c" (cause "4.cpy") on
// the split's backend, made once per (tensor, backend) for the whole graph
// (a later split on the same backend reuses them: graph inputs are copied
// at most once per backend), and the node reads copy 0 instead of the
// original.
//
// Graph inputs under pipeline parallelism (NCopies > 1, ggml's parallel
// mode) follow ggml's own rule, apart from the split inputs: the first time
// a non-view node reads a graph input (ggml: a source flagged
// GGML_TENSOR_FLAG_INPUT), whatever its split's backend, the input gets
// NCopies versions on the backend it is assigned to (the CPU, 1.inp). The
// input itself is version 0 (ggml's cur_copy of a fresh scheduler; the
// generated code rotates through them, one per evaluation in flight), the
// others are new tensors "BACKEND#name#c". ggml tags every version 4.cpy,
// the input included, so the input's 1.inp becomes 4.cpy here too (the
// pass's note in Context.Diags keeps the 1.inp). The inputs are listed in g.InputCopies in
// the order they were first read (ggml's sched->graph_inputs), and apart
// from the splits' inputs: the trace's n_inputs_total counts only the
// latter. A graph input the split's backend cannot read is, in addition, a
// split input like any other source (copied from the evaluation's version;
// at run time at once and synchronously, ggml's rule for inputs from the
// user). A graph input read only through views gets no versions, as in
// ggml, which skips view nodes. All versions and all split input copies
// are allocated like inputs: first, and never overwritten by other tensors
// (plan_memory). graphc keeps no departure from this rule: graphc's
// earlier plans differed only in keeping the 1.inp label, with the same
// copies and the same memory.
//
// Expert copies (markExpertCopies): a split input that is an expert
// weight in host memory, read by the split's first node, a mul_mat_id, as
// its experts, is marked with the ids tensor an evaluation reads to copy
// only the experts they name (ggml_backend_sched_compute_splits).
//
// Invariant established: g.Splits covers every node; a non-view node runs
// on its split's backend and reads only tensors its backend can read where
// they are (checked by ir.Verify). Nodes' Src lists refer to the copies from
// here on.
//
// Mirrors pass 5 "split graph, find tensors that need to be copied" of
// ggml_backend_sched_split_graph (ggml-org/ggml src/ggml-backend.cpp,
// commit d99724f2), for the first evaluation (cur_copy 0) of a fresh
// scheduler: the split walk, the graph-input versions under
// sched->n_copies > 1 (the GGML_TENSOR_FLAG_INPUT branch) and the split
// inputs' copies; ggml_backend_sched_compute_splits decides how the
// runtime copies them. See testdata/split_graph/.
func splitGraph(g *ir.Graph, pc *Context) error {
	nCopies := max(pc.Options.NCopies, 1)
	g.NCopies = nCopies
	g.Splits, g.InputCopies = nil, nil
	if len(g.Nodes) == 0 {
		return nil
	}
	type key struct {
		t       *ir.Tensor
		backend int
	}
	copies := map[key][]*ir.Tensor{}
	newCopies := func(s *ir.Tensor, b int, from int) []*ir.Tensor {
		var cs []*ir.Tensor
		if from == 1 {
			cs = append(cs, s)
		}
		for c := from; c < nCopies; c++ {
			cp := g.NewCopy(s, fmt.Sprintf("%s#%s#%d", g.Backends[b].Name, s.Name, c), b)
			cp.Cause = "4.cpy"
			cs = append(cs, cp)
		}
		return cs
	}

	// The first split takes the backend of the first non-view node.
	i := 0
	split := &ir.Split{Backend: g.Nodes[0].Backend}
	for ; i < len(g.Nodes); i++ {
		if !g.Nodes[i].Op.IsView() {
			split.Backend = g.Nodes[i].Backend
			break
		}
	}
	capacity := 0
	cur := split.Backend
	for ; i < len(g.Nodes); i++ {
		t := g.Nodes[i]
		if t.Op.IsView() {
			continue
		}
		if t.Backend < 0 {
			pc.Fatalf(t.Pos, "node %s has no backend", t.Name)
		}
		why := ""
		if t.Backend == cur && len(split.Inputs) > 0 {
			for _, s := range t.Src {
				if ownsWeightBuffer(s) && s.Backend != cur && !bufferSupported(g, pc, s, cur) {
					why = fmt.Sprintf("it reads weight %s, which %s cannot read", s.Name, g.Backends[cur].Name)
					break
				}
				if len(split.Inputs) >= capacity && s.Backend != cur && copies[key{s, cur}] == nil && !bufferSupported(g, pc, s, cur) {
					why = fmt.Sprintf("the split's %d inputs are full", len(split.Inputs))
					break
				}
			}
		}
		if t.Backend != cur || why != "" {
			if why == "" {
				why = "the backend changes"
			}
			split.End = i
			g.Splits = append(g.Splits, split)
			split = &ir.Split{Backend: t.Backend, First: i}
			capacity = 0
			cur = t.Backend
			pc.Notef(t.Pos, "%s: new split %d on %s: %s", t.Name, len(g.Splits), g.Backends[cur].Name, why)
		}

		for j, s := range t.Src {
			if s.Backend < 0 {
				pc.Fatalf(t.Pos, "source %s of %s has no backend", s.Name, t.Name)
			}
			if s.Kind == ir.KindInput && nCopies > 1 && copies[key{s, s.Backend}] == nil {
				cs := newCopies(s, s.Backend, 1)
				copies[key{s, s.Backend}] = cs
				g.InputCopies = append(g.InputCopies, &ir.SplitInput{Tensor: s, Copies: cs})
				pc.Notef(s.Pos, "%s: graph input first read by %s: %d pipeline versions on %s, itself the first (ggml's rule for graph inputs with n_copies > 1; its cause %s becomes 4.cpy, as in ggml)", s.Name, t.Name, nCopies, g.Backends[s.Backend].Name, s.Cause)
				s.Cause = "4.cpy"
			}
			if s.Backend == cur || bufferSupported(g, pc, s, cur) {
				continue
			}
			k := key{s, cur}
			if copies[k] == nil {
				copies[k] = newCopies(s, cur, 0)
				if len(split.Inputs) >= capacity {
					capacity = max(2*capacity, maxSplitInputs)
				}
				split.Inputs = append(split.Inputs, &ir.SplitInput{Tensor: s, Copies: copies[k]})
				pc.Notef(t.Pos, "%s: split %d on %s copies in %s from %s (%d bytes, 4.cpy)", t.Name, len(g.Splits), g.Backends[cur].Name, s.Name, g.Backends[s.Backend].Name, s.MaxBytes())
			}
			t.Src[j] = copies[k][0]
		}
	}
	split.End = len(g.Nodes)
	g.Splits = append(g.Splits, split)
	markExpertCopies(g, pc)
	return nil
}

// markExpertCopies makes expert copies (ir.SplitInput.Experts) of the
// split inputs that ggml_backend_sched_compute_splits copies expert by
// expert: a weight in host memory that the split's first node (views
// included, ggml's split->graph.nodes[0]) reads as the experts of a
// mul_mat_id. Its ids are read where they are when the copy is made: the
// node's own, or the original when the split copies them in after the
// weight. ggml decides this on every evaluation from the same facts;
// only which experts the ids name is left to run time.
func markExpertCopies(g *ir.Graph, pc *Context) {
	for k, s := range g.Splits {
		if s.First >= s.End {
			continue
		}
		node := g.Nodes[s.First]
		if node.Op != ops.MulMatID {
			continue
		}
		for i, in := range s.Inputs {
			if in.Copies[0] != node.Src[0] || !ownsWeightBuffer(in.Tensor) {
				continue
			}
			if p := g.PlacedBackend(in.Tensor); p < 0 || !g.Backends[p].Host {
				continue
			}
			ids := node.Src[2]
			for _, later := range s.Inputs[i+1:] {
				if later.Copies[0] == ids {
					ids = later.Tensor
					break
				}
			}
			in.Experts = &ir.ExpertCopy{IDs: ids}
			pc.Notef(node.Pos, "%s: split %d copies in only the experts of %s that %s names (%d bytes at most; ggml's copy of the used experts)", node.Name, k, in.Tensor.Name, ids.Name, in.Tensor.MaxBytes())
		}
	}
}
