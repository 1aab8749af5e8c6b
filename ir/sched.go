package ir

import "github.com/graphc/graphc/ops"

// Helpers the scheduling passes, Verify and trace importers share: where a
// tensor's bytes live, and building graphs whose order is given rather than
// derived.

// SetOrder installs leafs and nodes as the graph order as given (for
// example ggml's recorded order from a trace), instead of deriving it with
// Expand. Every tensor listed is a member of the graph afterwards.
func (g *Graph) SetOrder(leafs, nodes []*Tensor) {
	g.Leafs, g.Nodes = leafs, nodes
	g.inGraph = map[*Tensor]bool{}
	for _, t := range leafs {
		g.inGraph[t] = true
	}
	for _, t := range nodes {
		g.inGraph[t] = true
	}
}

// NewCopy creates the KindCopy tensor name that receives of's value on
// backend (ggml_dup_tensor_layout: same type, shape and strides, memory of
// its own). It is a member of the graph, in neither Leafs nor Nodes: the
// split that imports it lists it.
func (g *Graph) NewCopy(of *Tensor, name string, backend int) *Tensor {
	t := g.newTensor(name, ops.None, nil, of.Type, of.Ne, of.Pos)
	t.Nb = of.Nb
	t.Kind = KindCopy
	t.CopyOf = of
	t.Backend = backend
	if g.inGraph == nil {
		g.inGraph = map[*Tensor]bool{}
	}
	g.inGraph[t] = true
	return t
}

// Preallocated reports whether t's memory is a weight or state buffer
// (t is a weight or state, or a view of one): ggml's tensor->buffer, or
// view_src->buffer, set before scheduling.
func (t *Tensor) Preallocated() bool {
	k := t.Root().Kind
	return k == KindWeight || k == KindState
}

// PlacedBackend is the index of the backend whose buffer type holds t's
// preallocated memory: the backend named by the root's Placement, the last
// backend (the CPU) when it names none. It is -1 when t is not
// preallocated or names a backend the target does not have.
func (g *Graph) PlacedBackend(t *Tensor) int {
	if !t.Preallocated() {
		return -1
	}
	r := t.Root()
	if r.Placement == "" {
		return len(g.Backends) - 1
	}
	return g.BackendIndex(r.Placement)
}

// BackendIndex finds a backend of the target by name, -1 if none.
func (g *Graph) BackendIndex(name string) int {
	for i, b := range g.Backends {
		if b.Name == name {
			return i
		}
	}
	return -1
}

// BufferTypeOf is the buffer type t's bytes live in as far as the plan
// says, like ggml_backend_sched_buffer_supported: a preallocated tensor's
// is its placement's; any other tensor lives in a compute buffer of its
// backend, or of its view source's backend while it has none. ok is false
// when that is not known yet.
func (g *Graph) BufferTypeOf(t *Tensor) (name string, ok bool) {
	b := g.PlacedBackend(t)
	if b < 0 && !t.Preallocated() {
		b = t.Backend
		if b < 0 && t.ViewSrc != nil {
			b = t.ViewSrc.Backend
		}
	}
	if b < 0 || b >= len(g.Backends) {
		return "", false
	}
	return g.Backends[b].BufferType, true
}

// ReadsBufferType reports whether backend b's ops read buffers of type
// name directly: its own buffer type, or one listed in its Reads.
func (b *Backend) ReadsBufferType(name string) bool {
	if name == b.BufferType {
		return true
	}
	for _, r := range b.Reads {
		if r == name {
			return true
		}
	}
	return false
}

// PackedWeights lists the weights backend b keeps packed copies of, in
// declaration order, and the copies' bytes together: what the backend
// allocates beside the weights when the model is made.
func (g *Graph) PackedWeights(b int) (ws []*Tensor, bytes int64) {
	for _, t := range g.Params {
		if t.IsPacked() && t.Packed.Backend == b {
			ws = append(ws, t)
			bytes = SumBytes(bytes, t.Packed.Bytes)
		}
	}
	return ws, bytes
}
