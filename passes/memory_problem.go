package passes

import (
	"slices"
	"sort"

	"github.com/graphc/graphc/ir"
)

// The memory problem: what plan_memory's strategies place. An evaluation is
// a sequence of steps:
//
//	step 0       the evaluation starts: graph inputs have been written
//	then, for every split in order:
//	  one step per split input: its copy is written (reading the original)
//	  one step per node of the split
//
// Every tensor that needs compute memory (graph inputs, non-view nodes, copy
// tensors) is live from the step that writes it (0 for inputs) to the last
// step that reads it or any view of it. Outputs, and with NCopies > 1 graph
// inputs and copies, are pinned: live to the last step. This is the order
// ggml_backend_sched gives ggml-alloc (its graph copy puts each split's
// input copies before the split's nodes) with the lifetimes known exactly.

type stepKind uint8

const (
	stepStart stepKind = iota
	stepCopy
	stepNode
)

// memStep is one step of the evaluation.
type memStep struct {
	kind  stepKind
	t     *ir.Tensor   // the copy tensor or the node
	src   *ir.Tensor   // stepCopy: the split input copied from
	reads []*ir.Tensor // stepNode: the node's sources as read (copies substituted)
	buf   int          // buffer of t's backend (ggml's node_buffer_ids)
	// srcBuf is, for a copy, the buffer of the original's backend: ggml's
	// graph copy has an "input_dep" view there that keeps it alive.
	srcBuf int
}

// memBuffer is one compute buffer: one per buffer type, in backend order.
type memBuffer struct {
	bufType string
	backend int // first backend with this buffer type
	align   int64
	maxSize int64 // 0: unlimited
}

// memTensor is a tensor that needs compute memory.
type memTensor struct {
	t     *ir.Tensor
	buf   int32 // buffer of its backend's buffer type
	raw   int64 // bytes at the dims' bounds (t.MaxBytes)
	size  int64 // raw rounded up to the buffer's alignment
	write int32 // the step that writes it
	start int32 // first step its memory is in use
	end   int32 // last step its memory is in use
	// pinned: live to the end of the evaluation (an output, or a root of
	// an output view, or with NCopies > 1 an input or a copy).
	pinned bool
	// ggmlIn is ggml's INPUT flag as ggml-alloc sees it: graph inputs, and
	// pipeline copies (ggml_backend_sched sets INPUT and OUTPUT on those;
	// OUTPUT is pinned).
	ggmlIn bool
	// inplace lists, in source order, the tensors (indices into
	// allocationProblem.tensors) whose memory this node may take over at its
	// write step under graphc's rule: see inPlaceCandidates.
	inplace []int32
}

// allocationProblem is what every memory strategy solves: the buffers, the
// evaluation steps and each compute tensor's live range and in-place options.
type allocationProblem struct {
	g       *ir.Graph
	ncopies int
	bufs    []memBuffer
	bufOf   []int // backend index → buffer index
	steps   []memStep
	tensors []memTensor
	// ids numbers every tensor the plan touches; mem maps an id to its
	// index in tensors, -1 for tensors without compute memory.
	ids       tensorIDs
	mem       []int32
	backendOf []int32 // by id: the backend (split backend for copies without one)
	// leafOrder is the order ggml-alloc allocates leafs in: with NCopies > 1
	// the pipeline copies first, then the graph's leafs.
	leafOrder []*ir.Tensor

	groupCache *memGroups // in-place chains, shared by the greedy strategies

	stepOf map[*ir.Tensor]int32 // node → its step, for the regions
}

// regionSpans returns the steps of every parallel region, first and last.
func regionSpans(g *ir.Graph, stepOf map[*ir.Tensor]int32) [][2]int32 {
	spans := make([][2]int32, 0, len(g.Regions))
	for _, r := range g.Regions {
		spans = append(spans, [2]int32{stepOf[g.Nodes[r.First]], stepOf[g.Nodes[r.End-1]]})
	}
	return spans
}

// widenForRegions stretches a lifetime that begins or ends inside a
// parallel region over the whole region: its parts run at their own pace,
// so while one part writes a tensor another may still read one that died
// earlier in node order. Memory freed in a region is reused only after it.
func widenForRegions(start, end *int32, spans [][2]int32) {
	for _, sp := range spans {
		if (sp[0] <= *start && *start <= sp[1]) || (sp[0] <= *end && *end <= sp[1]) {
			*start, *end = min(*start, sp[0]), max(*end, sp[1])
		}
	}
}

// inSpans reports whether step s lies in a region: no node there reuses a
// source in place, as parts may cut the two differently.
func inSpans(s int32, spans [][2]int32) bool {
	for _, sp := range spans {
		if sp[0] <= s && s <= sp[1] {
			return true
		}
	}
	return false
}

// tensorIDs gives every tensor a dense number: its ID when it is the
// graph's tensor of that ID, a fresh number otherwise.
type tensorIDs struct {
	g     *ir.Graph
	n     int
	extra map[*ir.Tensor]int
}

func (x *tensorIDs) id(t *ir.Tensor) int {
	if t.ID >= 0 && t.ID < len(x.g.Tensors) && x.g.Tensors[t.ID] == t {
		return t.ID
	}
	if id, ok := x.extra[t]; ok {
		return id
	}
	if x.extra == nil {
		x.extra = map[*ir.Tensor]int{}
	}
	id := x.n
	x.n++
	x.extra[t] = id
	return id
}

// get returns t's id if it has one, else -1.
func (x *tensorIDs) get(t *ir.Tensor) int {
	if t.ID >= 0 && t.ID < len(x.g.Tensors) && x.g.Tensors[t.ID] == t {
		return t.ID
	}
	if id, ok := x.extra[t]; ok {
		return id
	}
	return -1
}

func alignUp(n, align int64) int64 { return (n + align - 1) / align * align }

// maxBytes bounds t.MaxBytes() without building the expression (the
// planner asks for it once per tensor on graphs of 100k nodes): each
// extent and stride at its largest within the dims' bounds, which is
// t.MaxBytes() exactly when they grow with their dims, as they usually do.
func maxBytes(t *ir.Tensor) int64 {
	n := int64(t.Type.Size())
	for i := 0; i < 4; i++ {
		ne, cne := t.Ne[i].Constant()
		nb, cnb := t.Nb[i].Constant()
		if cne && ne == 0 {
			return 0
		}
		if !cne {
			if t.Ne[i].Max() == 0 {
				return 0
			}
			ne = t.Ne[i].Max()
		}
		if !cnb {
			nb = t.Nb[i].Max()
		}
		n += (ne - 1) * nb
	}
	return n
}

// needsCompute reports whether t lives in a compute buffer.
func needsCompute(t *ir.Tensor) bool {
	return t.ViewSrc == nil && t.Kind != ir.KindWeight && t.Kind != ir.KindState
}

// sameLayout mirrors ggml_are_same_layout for symbolic shapes: equal for
// every value of the dims.
func sameLayout(a, b *ir.Tensor) bool {
	if a.Type != b.Type {
		return false
	}
	for i := 0; i < 4; i++ {
		if !ir.Equal(a.Ne[i], b.Ne[i]) || !ir.Equal(a.Nb[i], b.Nb[i]) {
			return false
		}
	}
	return true
}

// startsAtRoot reports whether view (or non-view) x addresses its root's
// first byte for every value of the dims.
func startsAtRoot(x *ir.Tensor) bool {
	if x.ViewSrc == nil {
		return true
	}
	v, ok := x.ViewOffs.Constant()
	return ok && v == 0
}

type copyKey struct {
	t       *ir.Tensor
	backend int
}

// newMemProblem derives steps, lifetimes and in-place candidates from the
// scheduled graph. Inconsistent scheduling is a bug in an earlier pass.
func newMemProblem(g *ir.Graph, pc *Context) *allocationProblem {
	p := &allocationProblem{g: g, ncopies: max(g.NCopies, 1), ids: tensorIDs{g: g, n: len(g.Tensors)}}
	pos := ir.Pos{File: g.Source}

	// Buffers: one per buffer type, in backend priority order.
	byType := map[string]int{}
	for i, be := range g.Backends {
		k, ok := byType[be.BufferType]
		if !ok {
			align := be.Alignment
			if align <= 0 {
				align = 1
			}
			if align&(align-1) != 0 {
				pc.Fatalf(pos, "backend %s: alignment %d is not a power of two", be.Name, be.Alignment)
			}
			k = len(p.bufs)
			byType[be.BufferType] = k
			p.bufs = append(p.bufs, memBuffer{bufType: be.BufferType, backend: i, align: align, maxSize: max(be.MaxSize, 0)})
		}
		p.bufOf = append(p.bufOf, k)
	}
	bufFor := func(t *ir.Tensor, backend int) int {
		if backend < 0 || backend >= len(g.Backends) {
			pc.Fatalf(t.Pos, "%s has no backend (%d)", t.Name, backend)
		}
		return p.bufOf[backend]
	}

	// Steps, with split inputs' copies substituted for the originals the
	// way ggml_backend_sched rewrites node sources: one copy per (tensor,
	// backend), made by the first split that needs it and reused after.
	splits := g.Splits
	if len(splits) == 0 && len(g.Nodes) > 0 {
		b := g.Nodes[0].Backend
		splits = []*ir.Split{{Backend: b, First: 0, End: len(g.Nodes)}}
	}
	backendOf := map[*ir.Tensor]int{}
	copyFor := map[copyKey]*ir.Tensor{}
	nSteps := 1 + len(g.Nodes)
	for _, s := range splits {
		nSteps += len(s.Inputs)
	}
	p.steps = make([]memStep, 1, nSteps)
	p.stepOf = map[*ir.Tensor]int32{}
	for _, s := range splits {
		for _, in := range s.Inputs {
			if len(in.Copies) == 0 {
				pc.Fatalf(in.Tensor.Pos, "split input %s has no copies", in.Tensor.Name)
			}
			for _, c := range in.Copies {
				backendOf[c] = s.Backend
			}
			c := in.Copies[0]
			copyFor[copyKey{in.Tensor, s.Backend}] = c
			p.steps = append(p.steps, memStep{kind: stepCopy, t: c, src: in.Tensor,
				buf: bufFor(c, s.Backend), srcBuf: bufFor(in.Tensor, in.Tensor.Backend)})
		}
		if s.First < 0 || s.End > len(g.Nodes) || s.First > s.End {
			pc.Fatalf(pos, "split [%d, %d) out of %d nodes", s.First, s.End, len(g.Nodes))
		}
		for _, n := range g.Nodes[s.First:s.End] {
			reads := n.Src
			if len(copyFor) > 0 {
				reads = make([]*ir.Tensor, len(n.Src))
				for k, x := range n.Src {
					if c, ok := copyFor[copyKey{x, s.Backend}]; ok {
						x = c
					}
					reads[k] = x
				}
			}
			p.steps = append(p.steps, memStep{kind: stepNode, t: n, reads: reads, buf: bufFor(n, n.Backend)})
			if len(g.Regions) > 0 {
				p.stepOf[n] = int32(len(p.steps) - 1)
			}
		}
	}
	for _, in := range g.InputCopies {
		for _, c := range in.Copies {
			backendOf[c] = in.Tensor.Backend
		}
	}
	last := int32(len(p.steps) - 1)

	// Tensors that need compute memory, numbered in allocation order.
	p.mem = make([]int32, len(g.Tensors), len(g.Tensors)+16)
	p.backendOf = make([]int32, len(g.Tensors), len(g.Tensors)+16)
	for i := range p.mem {
		p.mem[i], p.backendOf[i] = -1, -1
	}
	p.tensors = make([]memTensor, 0, len(g.Leafs)+len(p.steps))
	pipelined := p.ncopies > 1
	add := func(t *ir.Tensor, write int32, extra bool) {
		id := p.ids.id(t)
		for len(p.mem) <= id {
			p.mem = append(p.mem, -1)
			p.backendOf = append(p.backendOf, -1)
		}
		be := t.Backend
		if b, ok := backendOf[t]; ok && (be < 0 || t.Kind == ir.KindCopy) {
			be = b
		}
		p.backendOf[id] = int32(be)
		if !needsCompute(t) {
			return
		}
		if p.mem[id] >= 0 {
			pc.Fatalf(t.Pos, "%s is written twice (steps %d and %d)", t.Name, p.tensors[p.mem[id]].write, write)
		}
		raw := maxBytes(t)
		buf := int32(bufFor(t, be))
		m := memTensor{t: t, buf: buf, raw: raw, size: alignUp(raw, p.bufs[buf].align), write: write, start: write, end: write}
		isCopy := t.Kind == ir.KindCopy
		m.ggmlIn = t.Kind == ir.KindInput || (pipelined && isCopy)
		if t.Output || (pipelined && m.ggmlIn) || extra {
			m.pinned = true
			m.end = last
		}
		if (pipelined && m.ggmlIn) || extra {
			m.start = 0
		}
		p.mem[id] = int32(len(p.tensors))
		p.tensors = append(p.tensors, m)
	}
	for _, t := range g.Leafs {
		add(t, 0, false)
	}
	for _, in := range g.InputCopies {
		for _, c := range in.Copies {
			if c != in.Tensor {
				add(c, 0, true)
			}
		}
	}
	for s, st := range p.steps {
		if st.kind != stepStart {
			add(st.t, int32(s), false)
		}
	}
	for _, s := range splits {
		for _, in := range s.Inputs {
			for _, c := range in.Copies[1:] {
				add(c, 0, true) // pipeline versions other evaluations use
			}
		}
	}
	p.ensureIDs()

	// Lifetimes: every read (a view's reads read its root) extends the
	// root's life; a view that is an output pins its root.
	for s, st := range p.steps {
		switch st.kind {
		case stepCopy:
			p.touch(st.src, int32(s))
		case stepNode:
			for _, x := range st.reads {
				p.touch(x, int32(s))
			}
			if st.t.ViewSrc != nil && st.t.Output {
				if i := p.memOf(st.t.ViewSrc); i >= 0 {
					p.tensors[i].pinned = true
					p.tensors[i].end = last
				}
			}
		}
	}
	spans := regionSpans(g, p.stepOf)
	for i := range p.tensors {
		widenForRegions(&p.tensors[i].start, &p.tensors[i].end, spans)
	}
	for s, st := range p.steps {
		if st.kind == stepNode && st.t.ViewSrc == nil && st.t.Op.CanInPlace() && !inSpans(int32(s), spans) {
			p.inPlaceCandidates(int32(s))
		}
	}

	// ggml's leaf order: pipeline copies (graph inputs' versions, then
	// split inputs'), then the graph's leafs.
	if pipelined {
		for _, in := range g.InputCopies {
			p.leafOrder = append(p.leafOrder, in.Copies...)
		}
		for _, s := range splits {
			for _, in := range s.Inputs {
				p.leafOrder = append(p.leafOrder, in.Copies...)
			}
		}
	}
	p.leafOrder = append(p.leafOrder, g.Leafs...)
	return p
}

// ensureIDs gives ids to every tensor a step reads, so that the strategies
// can index per-tensor state by id without lookups failing.
func (p *allocationProblem) ensureIDs() {
	grow := func(t *ir.Tensor) {
		id := p.ids.id(t)
		for len(p.mem) <= id {
			p.mem = append(p.mem, -1)
			p.backendOf = append(p.backendOf, -1)
		}
		if p.backendOf[id] < 0 {
			p.backendOf[id] = int32(t.Backend)
		}
	}
	for _, st := range p.steps {
		if st.src != nil {
			grow(st.src)
			grow(st.src.Root())
		}
		for _, x := range st.reads {
			grow(x)
			grow(x.Root())
		}
		if st.t != nil && st.t.ViewSrc != nil {
			grow(st.t.ViewSrc)
		}
	}
	for _, t := range p.g.Leafs {
		grow(t)
	}
}

// memOf returns the index in p.tensors of t's compute memory, or -1.
func (p *allocationProblem) memOf(t *ir.Tensor) int32 {
	id := p.ids.get(t)
	if id < 0 || id >= len(p.mem) {
		return -1
	}
	return p.mem[id]
}

// touch records that step s reads x's memory.
func (p *allocationProblem) touch(x *ir.Tensor, s int32) {
	if i := p.memOf(x.Root()); i >= 0 && p.tensors[i].end < s {
		p.tensors[i].end = s
	}
}

// inPlaceCandidates lists the sources whose memory node st may take over:
// the op allows it (ggml_op_can_inplace), the source has the node's layout
// and starts at its root's first byte (a reshape of a dying tensor
// qualifies: ggml-alloc never reuses through views), the root dies at this
// step, is not pinned, is read only once by the node, and is at least as
// large. ggml's own rule (memory_ggml.go) is stricter; every pair it picks
// is one of these, which is what the lower bound and the verifier rely on.
func (p *allocationProblem) inPlaceCandidates(s int32) {
	st := &p.steps[s]
	n := p.memOf(st.t)
	if n < 0 || p.tensors[n].raw == 0 {
		return
	}
	for _, x := range st.reads {
		r := p.memOf(x.Root())
		if r < 0 || r == n {
			continue
		}
		rt := &p.tensors[r]
		if rt.pinned || rt.end != s || rt.write >= s || rt.raw < p.tensors[n].raw {
			continue
		}
		if !startsAtRoot(x) || !sameLayout(st.t, x) {
			continue
		}
		uses := 0
		for _, y := range st.reads {
			if y.Root() == x.Root() {
				uses++
			}
		}
		if uses != 1 {
			continue
		}
		dup := false
		for _, c := range p.tensors[n].inplace {
			dup = dup || c == r
		}
		if !dup {
			p.tensors[n].inplace = append(p.tensors[n].inplace, r)
		}
	}
}

// memAssign is one strategy's placement of every memTensor.
type memAssign struct {
	name   string
	buf    []int32 // by memTensor; ggml may differ from memTensor.buf (in place across buffers)
	chunk  []int32
	off    []int64
	chunks [][]int64 // by buffer: chunk sizes
	// skipped marks buffers the strategy did not plan (too large a
	// problem for an optional strategy).
	skipped []bool
}

func newMemAssign(name string, p *allocationProblem) *memAssign {
	a := &memAssign{name: name, buf: make([]int32, len(p.tensors)), chunk: make([]int32, len(p.tensors)),
		off: make([]int64, len(p.tensors)), chunks: make([][]int64, len(p.bufs)), skipped: make([]bool, len(p.bufs))}
	for i := range p.tensors {
		a.buf[i] = p.tensors[i].buf
	}
	return a
}

// size is the total of buffer b's chunks.
func (a *memAssign) size(b int) int64 {
	var n int64
	for _, c := range a.chunks[b] {
		n += c
	}
	return n
}

// ownBuffers reports whether every tensor is in its backend's buffer.
func (a *memAssign) ownBuffers(p *allocationProblem) bool {
	for i := range p.tensors {
		if a.buf[i] != p.tensors[i].buf {
			return false
		}
	}
	return true
}

// bounds computes buffer b's lower bound (the most bytes live at any step,
// a node that may take over a dying source's memory counted from the step
// after its write) and naive size (every tensor in its own memory), for
// the tensors assignment a put there.
func (p *allocationProblem) bounds(a *memAssign, b int) (lower, naive int64) {
	align := p.bufs[b].align
	diff := make([]int64, len(p.steps)+1)
	for i := range p.tensors {
		m := &p.tensors[i]
		if a.buf[i] != int32(b) {
			continue
		}
		size := alignUp(m.raw, align)
		naive += size
		from := m.start
		for _, r := range m.inplace {
			if a.buf[r] == int32(b) {
				from = m.write + 1
				break
			}
		}
		if from <= m.end {
			diff[from] += size
			diff[m.end+1] -= size
		}
	}
	var live int64
	for _, d := range diff {
		live += d
		lower = max(lower, live)
	}
	return lower, naive
}

// overlapPairs counts the pairs of intervals that intersect (each pair
// counted from both sides, plus each interval with itself): the work the
// greedy strategies would do.
func overlapPairs(start, end []int32) int64 {
	s := slices.Clone(start)
	e := slices.Clone(end)
	slices.Sort(s)
	slices.Sort(e)
	var n int64
	for i := range start {
		le := sort.Search(len(s), func(k int) bool { return s[k] > end[i] })
		lt := sort.Search(len(e), func(k int) bool { return e[k] >= start[i] })
		n += int64(le - lt)
	}
	return n
}
