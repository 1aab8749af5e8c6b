package planview

import "github.com/graphc/graphc/ir"

// Plan is the JSON form of a plan (`graphc plan -json`), documented in
// docs/plan-json.md. Fields are only ever added, never renamed.
type Plan struct {
	Source             string    `json:"source"`
	Backends           []Backend `json:"backends"`
	Leafs              []Tensor  `json:"leafs"`
	Nodes              []Tensor  `json:"nodes"`
	Splits             []Split   `json:"splits"`
	Regions            []Region  `json:"regions"`
	Buffers            []Buffer  `json:"buffers"`
	BytesCopiedPerEval int64     `json:"bytes_copied_per_eval"`
	NCopies            int       `json:"n_copies"`
	Packed             []Packed  `json:"packed"`
}

// Packed is what one backend packs (pack_weights): the copies of weights
// its matrix products read, in declaration order, and their bytes.
type Packed struct {
	Backend string   `json:"backend"`
	Weights []string `json:"weights"`
	Bytes   int64    `json:"bytes"`
}

// Backend is one backend of the target, in priority order.
type Backend struct {
	Name       string `json:"name"`
	BufferType string `json:"buffer_type"`
	Host       bool   `json:"host"`
}

// Tensor is a leaf (weight, state, input) or a node of the graph.
type Tensor struct {
	Name    string   `json:"name"`
	Op      string   `json:"op"`
	Kind    string   `json:"kind"`
	Type    string   `json:"type"`
	Shape   []string `json:"shape"`
	Bytes   int64    `json:"bytes"`
	Backend string   `json:"backend,omitempty"`
	Cause   string   `json:"cause,omitempty"`
	Srcs    []string `json:"srcs,omitempty"`
	// Where the bytes live: "compute" (Buffer, Offset), "view" (ViewOf),
	// "weight" or "state".
	Alloc  string `json:"alloc,omitempty"`
	Buffer string `json:"buffer,omitempty"`
	Offset *int64 `json:"offset,omitempty"`
	ViewOf string `json:"view_of,omitempty"`
	// PackedFor and PackedBytes: a weight of which that backend makes a
	// packed copy of PackedBytes for its matrix products; PackedRelease: only
	// that copy reads it, or get_rows besides (the weight's memory is
	// released once packed).
	PackedFor     string `json:"packed_for,omitempty"`
	PackedBytes   int64  `json:"packed_bytes,omitempty"`
	PackedRelease bool   `json:"packed_release,omitempty"`
	// Group: on the first of consecutive mul_mats run as one call
	// (group_products), how many.
	Group int `json:"group,omitempty"`
}

// Split is a run of nodes on one backend, with the inputs copied in first.
type Split struct {
	Backend string  `json:"backend"`
	First   string  `json:"first"`
	Last    string  `json:"last"`
	Inputs  []Input `json:"inputs"`
}

// Region is a parallel region (plan_regions): its nodes run as one part
// per thread, each part on its own units, with no barrier between them.
type Region struct {
	First string `json:"first"`
	Last  string `json:"last"`
	Units string `json:"units"`
	// Parts gives, per computed node, the slice of its result each part
	// writes and of each source it reads: "ne1" (ne1 cut by units),
	// "ne0*64" (64 elements of ne0 per unit) or "whole".
	Parts []Part `json:"parts"`
}

// Part is one node of a parallel region and the slices each part takes.
type Part struct {
	Node string   `json:"node"`
	Dst  string   `json:"dst"`
	Srcs []string `json:"srcs"`
}

// Input is a tensor a split copies in from another backend.
type Input struct {
	Name   string   `json:"name"`
	Bytes  int64    `json:"bytes"`
	From   string   `json:"from"`
	Copies []string `json:"copies"`
	// ExpertIDs, on an expert copy (ggml's copy of the used experts),
	// names the ids tensor whose experts an evaluation copies; Bytes is
	// then the most it copies.
	ExpertIDs string `json:"expert_ids,omitempty"`
}

// Buffer is a compute buffer: its planned size, the lower bound (the
// largest set of tensors live at once) and the size without reuse.
type Buffer struct {
	BufferType string `json:"buffer_type"`
	Bytes      int64  `json:"bytes"`
	LowerBound int64  `json:"lower_bound"`
	Naive      int64  `json:"naive"`
}

// JSON converts a plan into its JSON form.
func JSON(g *ir.Graph) *Plan {
	p := &Plan{Source: g.Source, NCopies: g.NCopies, Leafs: []Tensor{}, Nodes: []Tensor{}, Splits: []Split{}, Regions: []Region{}, Buffers: []Buffer{}, Packed: []Packed{}}
	backend := func(i int) string {
		if i >= 0 && i < len(g.Backends) {
			return g.Backends[i].Name
		}
		return ""
	}
	for _, b := range g.Backends {
		p.Backends = append(p.Backends, Backend{b.Name, b.BufferType, b.Host})
	}
	tensor := func(t *ir.Tensor) Tensor {
		pt := Tensor{Name: t.Name, Op: t.Op.String(), Kind: t.Kind.String(), Type: t.Type.String(), Bytes: t.MaxBytes(), Backend: backend(t.Backend), Cause: t.Cause}
		for _, e := range t.Ne {
			pt.Shape = append(pt.Shape, e.String())
		}
		for _, s := range t.Src {
			pt.Srcs = append(pt.Srcs, s.Name)
		}
		switch t.Alloc.Kind {
		case ir.AllocCompute:
			off := t.Alloc.Offset
			pt.Alloc, pt.Buffer, pt.Offset = "compute", g.Buffers[t.Alloc.Buffer].BufferType, &off
		case ir.AllocView:
			pt.Alloc, pt.ViewOf = "view", t.ViewSrc.Name
		case ir.AllocWeight:
			pt.Alloc = "weight"
		case ir.AllocState:
			pt.Alloc = "state"
		}
		if t.IsPacked() {
			pt.PackedFor, pt.PackedBytes, pt.PackedRelease = backend(t.Packed.Backend), t.Packed.Bytes, t.Packed.Release
		}
		pt.Group = t.Group
		return pt
	}
	for _, t := range g.Leafs {
		p.Leafs = append(p.Leafs, tensor(t))
	}
	for _, t := range g.Nodes {
		p.Nodes = append(p.Nodes, tensor(t))
	}
	for _, s := range g.Splits {
		ps := Split{Backend: backend(s.Backend), First: g.Nodes[s.First].Name, Last: g.Nodes[s.End-1].Name, Inputs: []Input{}}
		for _, in := range s.Inputs {
			pi := Input{Name: in.Tensor.Name, Bytes: in.Tensor.MaxBytes(), From: backend(in.Tensor.Backend)}
			for _, c := range in.Copies {
				pi.Copies = append(pi.Copies, c.Name)
			}
			if in.Experts != nil {
				pi.ExpertIDs = in.Experts.IDs.Name
			}
			ps.Inputs = append(ps.Inputs, pi)
		}
		p.Splits = append(p.Splits, ps)
	}
	for _, r := range g.Regions {
		pr := Region{First: g.Nodes[r.First].Name, Last: g.Nodes[r.End-1].Name, Units: r.Units.String(), Parts: []Part{}}
		for _, t := range g.Nodes[r.First:r.End] {
			d, ok := r.Dst[t]
			if !ok {
				continue
			}
			pp := Part{Node: t.Name, Dst: d.String(), Srcs: []string{}}
			for _, s := range r.Src[t] {
				pp.Srcs = append(pp.Srcs, s.String())
			}
			pr.Parts = append(pr.Parts, pp)
		}
		p.Regions = append(p.Regions, pr)
	}
	p.BytesCopiedPerEval = g.BytesCopiedPerEval()
	for _, b := range g.Buffers {
		p.Buffers = append(p.Buffers, Buffer{b.BufferType, b.Size, b.LowerBound, b.NaiveSize})
	}
	for k, b := range g.Backends {
		if ws, n := g.PackedWeights(k); len(ws) > 0 {
			pp := Packed{Backend: b.Name, Bytes: n}
			for _, t := range ws {
				pp.Weights = append(pp.Weights, t.Name)
			}
			p.Packed = append(p.Packed, pp)
		}
	}
	return p
}
