package ggmltrace

import (
	"fmt"
	"math"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/passes"
	"github.com/graphc/graphc/tensor"
)

// Graph rebuilds the traced graph as an ir.Graph, with ggml's leaf and node
// order as recorded (not re-derived), constant shapes and strides, views,
// op parameters, inputs, outputs, weights and states placed on the backend
// owning their buffer type, and user overrides as Placement. Every node's
// shape and strides as graphc infers them must equal ggml's.
//
// It also returns the target as the passes see it: backends answering
// SupportsOp, SupportsBufferType and OffloadOp from the trace's recorded
// tables, and the scheduler options (n_copies from parallel mode,
// op_offload).
func (tr *Trace) Graph() (*ir.Graph, []*passes.Backend, passes.Options, error) {
	g := ir.NewGraph(tr.source())
	backends := tr.target()
	opts := passes.Options{NCopies: 1, OpOffload: tr.Sched.OpOffload}
	if tr.Sched.Parallel {
		opts.NCopies = tr.MaxCopies
		if opts.NCopies == 0 {
			opts.NCopies = 4 // GGML_SCHED_MAX_COPIES's default
		}
	}

	owner := map[string]string{} // buffer type → the backend holding its weights
	for _, b := range tr.Backends {
		owner[b.Buft] = b.Name // the last backend of that type: the CPU for host memory
	}
	byName := map[string]*ir.Tensor{}
	var leafs, nodes []*ir.Tensor
	fail := func(t *Tensor, where string, format string, a ...any) error {
		return fmt.Errorf("%s: %s %d %s: %s", tr.source(), where, t.Index, t.Name, fmt.Sprintf(format, a...))
	}

	for i, lt := range tr.Leafs {
		pos := ir.Pos{File: fmt.Sprintf("%s:leafs[%d]", tr.source(), i)}
		if byName[lt.Name] != nil {
			return nil, nil, opts, fail(lt, "leaf", "name used twice")
		}
		if lt.Op != "NONE" {
			return nil, nil, opts, fail(lt, "leaf", "op %s, want NONE", lt.Op)
		}
		dt, ok := tensor.ParseDType(lt.Type)
		if !ok {
			return nil, nil, opts, fail(lt, "leaf", "type %s is not supported", lt.Type)
		}
		kind := ir.KindNode // a leaf in the compute buffer
		switch {
		case lt.Prealloc != nil && lt.Prealloc.Usage == "weights":
			kind = ir.KindWeight
		case lt.Prealloc != nil:
			kind = ir.KindState
		case lt.HasFlag("input"):
			kind = ir.KindInput
		}
		t, err := g.NewLeaf(kind, lt.Name, dt, consts(lt.Ne[:]), pos)
		if err != nil {
			return nil, nil, opts, fail(lt, "leaf", "%v", err)
		}
		t.Nb = [4]*ir.Expr(consts(lt.Nb[:]))
		if err := ir.CheckSizes(t); err != nil {
			return nil, nil, opts, fail(lt, "leaf", "%v", err)
		}
		t.Output = lt.HasFlag("output")
		if err := tr.place(t, lt, owner); err != nil {
			return nil, nil, opts, err
		}
		byName[lt.Name] = t
		leafs = append(leafs, t)
	}

	for i, nt := range tr.Nodes {
		pos := ir.Pos{File: fmt.Sprintf("%s:nodes[%d]", tr.source(), i)}
		if byName[nt.Name] != nil {
			return nil, nil, opts, fail(nt, "node", "name used twice")
		}
		if nt.HasFlag("input") {
			return nil, nil, opts, fail(nt, "node", "a node flagged input is not supported by graphc (only leaves are inputs)")
		}
		op, ok := ops.LookupGGML(nt.Op, nt.opParam(0))
		if !ok || op == ops.None {
			return nil, nil, opts, fail(nt, "node", "op %s (%s) is not supported by graphc", nt.Op, nt.OpDesc)
		}
		var srcs []*ir.Tensor
		for _, s := range nt.Src {
			if s == nil {
				continue
			}
			st := byName[*s]
			if st == nil {
				return nil, nil, opts, fail(nt, "node", "source %s is not defined before it", *s)
			}
			srcs = append(srcs, st)
		}
		args, err := opArgs(op, nt, srcs)
		if err != nil {
			return nil, nil, opts, fail(nt, "node", "%v", err)
		}
		t, err := g.NewOp(op, nt.Name, srcs, args, pos)
		if err != nil {
			return nil, nil, opts, fail(nt, "node", "%v", err)
		}
		if err := sameLayout(t, nt); err != nil {
			return nil, nil, opts, fail(nt, "node", "%v", err)
		}
		if t.Preallocated() != (nt.Prealloc != nil) {
			return nil, nil, opts, fail(nt, "node", "preallocated is %v in ggml, %v in graphc", nt.Prealloc != nil, t.Preallocated())
		}
		t.Output = nt.HasFlag("output")
		if err := tr.place(t, nt, owner); err != nil {
			return nil, nil, opts, err
		}
		byName[nt.Name] = t
		nodes = append(nodes, t)
	}
	g.SetOrder(leafs, nodes)

	// Outputs in graph order; weights and states in fill order.
	for _, t := range append(append([]*ir.Tensor(nil), leafs...), nodes...) {
		if t.Output {
			g.Outputs = append(g.Outputs, t)
		}
	}
	var params []*ir.Tensor
	seen := map[*ir.Tensor]bool{}
	for _, name := range tr.ParamOrder() {
		if t := byName[name]; t != nil && (t.Kind == ir.KindWeight || t.Kind == ir.KindState) && !seen[t] {
			params = append(params, t)
			seen[t] = true
		}
	}
	for _, t := range g.Params {
		if !seen[t] {
			params = append(params, t)
		}
	}
	g.Params = params
	return g, backends, opts, nil
}

// opParam is op_params_i32[k], 0 where the trace leaves it out.
func (nt *Tensor) opParam(k int) int32 {
	if k < len(nt.OpParams) {
		return nt.OpParams[k]
	}
	return 0
}

// opParamF32 is op_params_i32[k] read as the float32 ggml stored there, def
// where the trace leaves it out.
func (nt *Tensor) opParamF32(k int, def float32) float32 {
	if k < len(nt.OpParams) {
		return math.Float32frombits(uint32(nt.OpParams[k]))
	}
	return def
}

// opArgs reads op's non-tensor operands from the traced node nt: its
// shape for ops that take one, and its op_params as each ggml constructor
// lays them out.
func opArgs(op ops.Op, nt *Tensor, srcs []*ir.Tensor) (ir.Args, error) {
	var args ir.Args
	// Only the ops that take a shape have a case; every other op's
	// operands are its tensors (UNARY's sub-op chose the op) and its
	// Params, decoded below.
	switch op {
	case ops.View:
		if len(srcs) == 0 || nt.ViewSrc == nil {
			return args, fmt.Errorf("VIEW without a source")
		}
		base := int64(0)
		if a := srcs[0]; a.ViewSrc != nil {
			base, _ = a.ViewOffs.Constant()
		}
		args.Ne = consts(nt.Ne[:])
		args.Nb = consts(nt.Nb[1:])
		args.Offset = ir.Const(nt.ViewOffs - base)
	case ops.Reshape, ops.Cont:
		args.Ne = consts(nt.Ne[:])
	case ops.Scale:
		if b := nt.opParamF32(1, 0); b != 0 {
			return args, fmt.Errorf("SCALE with bias %g is not supported by graphc", b)
		}
	}
	if p := op.Info().Params; p != nil {
		// Words the trace leaves out (it records op_params_i32[0..7];
		// ggml_rope_ext keeps attn_factor, beta_fast and beta_slow in
		// [8..10]) are those of the defaults, llama.cpp's.
		w := ops.Defaults(p).GGML()
		copy(w[:], nt.OpParams)
		args.Params = p.FromGGML(w)
	}
	if op == ops.TopK {
		// ggml_top_k stores no op_params: k is the result's ne[0].
		args.Params = ops.TopKParams{K: int(nt.Ne[0])}
	}
	return args, nil
}

// place sets t's Placement: the backend owning a preallocated tensor's
// buffer type, or the user's override.
func (tr *Trace) place(t *ir.Tensor, tt *Tensor, owner map[string]string) error {
	over, err := tt.Override()
	if err != nil {
		return err
	}
	if t.Kind == ir.KindWeight || t.Kind == ir.KindState {
		if over != "" {
			return fmt.Errorf("%s: %s: a user override on a preallocated tensor is not supported", tr.source(), t.Name)
		}
		b, ok := owner[tt.Prealloc.Buft]
		if !ok {
			return fmt.Errorf("%s: %s: buffer type %s belongs to no backend", tr.source(), t.Name, tt.Prealloc.Buft)
		}
		t.Placement = b
		return nil
	}
	t.Placement = over
	return nil
}

// target builds the passes' view of the traced backends: every capability
// query is answered from the trace's per-node tables (ops of leaves, which
// ggml has every backend accept, answer true; tensors the trace does not
// know answer false).
func (tr *Trace) target() []*passes.Backend {
	nodeByName := map[string]*Tensor{}
	for _, n := range tr.Nodes {
		nodeByName[n.Name] = n
	}
	var out []*passes.Backend
	for _, b := range tr.Backends {
		name, sup := b.Name, b.SupportsBuft
		pb := &passes.Backend{
			Backend: ir.Backend{Name: name, BufferType: b.Buft, Host: b.BuftIsHost, Alignment: b.BuftAlignment},
			Device:  b.DeviceType,
			SupportsOp: func(t *ir.Tensor) bool {
				if t.IsLeaf() {
					return true
				}
				n := nodeByName[t.Name]
				return n != nil && n.SupportsOp[name]
			},
			SupportsBufferType: func(bt string) bool { return sup[bt] },
			OffloadOp: func(t *ir.Tensor) bool {
				n := nodeByName[t.Name]
				return n != nil && n.OffloadOp[name]
			},
		}
		out = append(out, pb)
	}
	return out
}

func consts(v []int64) []*ir.Expr {
	out := make([]*ir.Expr, len(v))
	for i, x := range v {
		out[i] = ir.Const(x)
	}
	return out
}

// sameLayout checks graphc's inferred type, shape, strides and view
// against ggml's.
func sameLayout(t *ir.Tensor, nt *Tensor) error {
	if t.Type.String() != nt.Type {
		return fmt.Errorf("graphc infers type %s, ggml has %s", t.Type, nt.Type)
	}
	for i := 0; i < 4; i++ {
		ne, _ := t.Ne[i].Constant()
		nb, _ := t.Nb[i].Constant()
		if ne != nt.Ne[i] || nb != nt.Nb[i] {
			return fmt.Errorf("graphc infers ne %s nb %s, ggml has ne %v nb %v", exprs(t.Ne), exprs(t.Nb), nt.Ne, nt.Nb)
		}
	}
	switch {
	case t.ViewSrc == nil && nt.ViewSrc != nil:
		return fmt.Errorf("ggml has a view of %s, graphc none", *nt.ViewSrc)
	case t.ViewSrc != nil && nt.ViewSrc == nil:
		return fmt.Errorf("graphc infers a view of %s, ggml none", t.ViewSrc.Name)
	case t.ViewSrc != nil:
		offs, _ := t.ViewOffs.Constant()
		if t.ViewSrc.Name != *nt.ViewSrc || offs != nt.ViewOffs {
			return fmt.Errorf("graphc infers a view of %s+%d, ggml of %s+%d", t.ViewSrc.Name, offs, *nt.ViewSrc, nt.ViewOffs)
		}
	}
	return nil
}

func exprs(e [4]*ir.Expr) string {
	return fmt.Sprintf("[%s %s %s %s]", e[0], e[1], e[2], e[3])
}
