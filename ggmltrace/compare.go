package ggmltrace

import (
	"fmt"
	"strings"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/passes"
)

// Diff is one decision where graphc's plan differs from ggml's.
type Diff struct {
	What   string `json:"what"`   // e.g. "node 66 l_out-1: backend"
	GGML   string `json:"ggml"`   // ggml's decision
	Graphc string `json:"graphc"` // graphc's
}

func (d Diff) String() string { return fmt.Sprintf("%s: ggml %s, graphc %s", d.What, d.GGML, d.Graphc) }

// Plan rebuilds the traced graph and target and runs graphc's pipeline on
// it through the named pass ("" for all), with ir.Verify after every pass
// and debug notes at level debug. The Context holds the notes.
func (tr *Trace) Plan(through string, debug int) (*ir.Graph, *passes.Context, error) {
	g, backends, opts, err := tr.Graph()
	if err != nil {
		return nil, nil, err
	}
	pc := &passes.Context{Backends: backends, Options: opts, Debug: debug}
	if err := passes.Run(g, pc, true, through); err != nil {
		return g, pc, err
	}
	return g, pc, nil
}

// Check loads the trace at path, plans it through split_graph and compares
// the plan with ggml's decisions: what `graphc ggml-check` reports.
func Check(path string) (*Trace, *ir.Graph, []Diff, error) {
	tr, err := Load(path)
	if err != nil {
		return nil, nil, nil, err
	}
	g, _, err := tr.Plan("split_graph", 0)
	if err != nil {
		return tr, g, nil, err
	}
	return tr, g, Compare(tr, g), nil
}

// Compare lists every scheduling decision of g (planned through
// split_graph) that differs from the trace's: backend and cause of every
// leaf and node in order, the sources each node reads after copies were
// inserted, split boundaries and backends, split inputs (name, bytes,
// source backend, copies), input and byte totals, n_copies, and the graph
// inputs given pipeline versions (their backend and versions' names). No differences means graphc decided exactly as ggml did.
func Compare(tr *Trace, g *ir.Graph) []Diff {
	var diffs []Diff
	diff := func(what, want, got string) {
		if want != got {
			diffs = append(diffs, Diff{what, want, got})
		}
	}
	diffInt := func(what string, want, got int64) { diff(what, fmt.Sprint(want), fmt.Sprint(got)) }
	backend := func(b int) string {
		if b < 0 || b >= len(g.Backends) {
			return "none"
		}
		return g.Backends[b].Name
	}

	tensors := func(kind string, want []*Tensor, got []*ir.Tensor) {
		diffInt("number of "+kind+"s", int64(len(want)), int64(len(got)))
		for i := range min(len(want), len(got)) {
			w, t := want[i], got[i]
			what := fmt.Sprintf("%s %d %s", kind, i, w.Name)
			if w.Name != t.Name {
				diff(fmt.Sprintf("%s %d: name", kind, i), w.Name, t.Name)
				continue
			}
			diff(what+": backend", w.Backend, backend(t.Backend))
			diff(what+": cause", w.Cause, t.Cause)
			if kind != "node" {
				continue
			}
			srcs := w.SrcAfter
			if srcs == nil {
				srcs = w.Src
			}
			var ws, gs []string
			for _, s := range srcs {
				if s != nil {
					ws = append(ws, *s)
				}
			}
			for _, s := range t.Src {
				gs = append(gs, s.Name)
			}
			diff(what+": sources after scheduling", strings.Join(ws, ", "), strings.Join(gs, ", "))
		}
	}
	tensors("leaf", tr.Leafs, g.Leafs)
	tensors("node", tr.Nodes, g.Nodes)

	r := &tr.Result
	diffInt("n_copies", int64(r.NCopies), int64(g.NCopies))
	diffInt("n_splits", int64(r.NSplits), int64(len(g.Splits)))
	// n_inputs_total is the trace's sum of the splits' n_inputs: unlike
	// ggml's total_inputs (which sizes its graph copy), it leaves out the
	// graph inputs given pipeline versions; graph_inputs_pp lists those.
	nInputs := 0
	for k := range min(len(r.Splits), len(g.Splits)) {
		w, s := &r.Splits[k], g.Splits[k]
		what := fmt.Sprintf("split %d", k)
		diff(what+": backend", w.Backend, backend(s.Backend))
		diffInt(what+": first node", int64(w.IStart), int64(s.First))
		diffInt(what+": end", int64(w.IEnd), int64(s.End))
		diffInt(what+": number of inputs", int64(len(w.Inputs)), int64(len(s.Inputs)))
		for j := range min(len(w.Inputs), len(s.Inputs)) {
			wi, si := &w.Inputs[j], s.Inputs[j]
			iw := fmt.Sprintf("%s input %d %s", what, j, wi.Name)
			if wi.Name != si.Tensor.Name {
				diff(fmt.Sprintf("%s input %d: name", what, j), wi.Name, si.Tensor.Name)
				continue
			}
			diffInt(iw+": bytes", wi.Bytes, si.Tensor.MaxBytes())
			diff(iw+": from backend", wi.FromBackend, backend(si.Tensor.Backend))
			var wc, gc []string
			for _, c := range wi.Copies {
				wc = append(wc, c.Name+" "+c.Cause)
			}
			for _, c := range si.Copies {
				gc = append(gc, c.Name+" "+c.Cause)
			}
			diff(iw+": copies", strings.Join(wc, ", "), strings.Join(gc, ", "))
		}
	}
	for _, s := range g.Splits {
		nInputs += len(s.Inputs)
	}
	diffInt("n_inputs_total", int64(r.NInputsTotal), int64(nInputs))
	diffInt("bytes_copied_per_eval", r.BytesCopiedPerEval, g.BytesCopiedPerEval())

	// graph_inputs_pp: the graph inputs given pipeline versions, each with
	// its backend and versions. Backend ids are ggml's priority order, as
	// are graphc's.
	want, err := r.GraphInputs()
	if err != nil {
		diff("graph_inputs_pp", err.Error(), "")
		return diffs
	}
	var wn, gn []string
	for _, in := range want {
		wn = append(wn, in.Name)
	}
	for _, in := range g.InputCopies {
		gn = append(gn, in.Tensor.Name)
	}
	diff("graph_inputs_pp", strings.Join(wn, ", "), strings.Join(gn, ", "))
	for k := range min(len(want), len(g.InputCopies)) {
		w, in := want[k], g.InputCopies[k]
		if w.Name != in.Tensor.Name {
			continue
		}
		what := fmt.Sprintf("graph input %d %s", k, w.Name)
		if w.BackendID >= 0 {
			diff(what+": backend", backend(w.BackendID), backend(in.Tensor.Backend))
		}
		if w.Copies != nil {
			var gc []string
			for _, c := range in.Copies {
				gc = append(gc, c.Name)
			}
			diff(what+": versions", strings.Join(w.Copies, ", "), strings.Join(gc, ", "))
		}
	}
	return diffs
}
