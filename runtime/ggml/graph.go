package ggml

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// ggmlTypeI8 is GGML_TYPE_I8, the type of the byte tensors raw copies go
// through.
const ggmlTypeI8 = 24

// kernel names a engine.Kernels method.
type kernel uint8

const (
	kMulMat kernel = iota
	kAdd
	kSub
	kMul
	kDiv
	kScale
	kRelu
	kGelu
	kSilu
	kRMSNorm
	kNorm
	kSoftMax
	kRope
	kGetRows
	kCpy
)

var kernelNames = [...]string{"mul_mat", "add", "sub", "mul", "div", "scale", "relu", "gelu", "silu", "rms_norm", "norm", "soft_max", "rope", "get_rows", "cpy"}

// place is where a gtensor is: its allocation, offset, type and layout.
type place struct {
	alloc int
	off   uintptr
	typ   tensor.DType
	ne    [4]int
	nb    [4]int
}

// launch is one recorded kernel: dst and up to three sources (a nil
// optional source has alloc -1), and its scalars.
type launch struct {
	k    kernel
	dst  place
	src  [3]place
	nsrc int
	f    [7]float32
	i    [3]int32
}

// record appends one kernel to the split being recorded.
func (b *Backend) record(k kernel, dst *tensor.Tensor, srcs ...*tensor.Tensor) *launch {
	if b.Err() != nil {
		return &launch{}
	}
	l := launch{k: k, dst: b.place(dst), nsrc: len(srcs)}
	for i, s := range srcs {
		if s == nil {
			l.src[i].alloc = -1
			continue
		}
		l.src[i] = b.place(s)
	}
	b.rec = append(b.rec, l)
	return &b.rec[len(b.rec)-1]
}

func (b *Backend) place(t *tensor.Tensor) place {
	i, off := b.locate(t)
	return place{alloc: i, off: off, typ: t.Type, ne: t.Ne, nb: t.Nb}
}

// Kernels: recorded.

func (b *Backend) MulMat(dst, a, x *tensor.Tensor) { b.record(kMulMat, dst, a, x) }
func (b *Backend) Add(dst, a, x *tensor.Tensor)    { b.record(kAdd, dst, a, x) }
func (b *Backend) Sub(dst, a, x *tensor.Tensor)    { b.record(kSub, dst, a, x) }
func (b *Backend) Mul(dst, a, x *tensor.Tensor)    { b.record(kMul, dst, a, x) }
func (b *Backend) Div(dst, a, x *tensor.Tensor)    { b.record(kDiv, dst, a, x) }
func (b *Backend) Scale(dst, a *tensor.Tensor, s float32) {
	b.record(kScale, dst, a).f[0] = s
}
func (b *Backend) Relu(dst, a *tensor.Tensor) { b.record(kRelu, dst, a) }
func (b *Backend) Gelu(dst, a *tensor.Tensor) { b.record(kGelu, dst, a) }
func (b *Backend) Silu(dst, a *tensor.Tensor) { b.record(kSilu, dst, a) }
func (b *Backend) RMSNorm(dst, a *tensor.Tensor, eps float32) {
	b.record(kRMSNorm, dst, a).f[0] = eps
}
func (b *Backend) Norm(dst, a *tensor.Tensor, eps float32) { b.record(kNorm, dst, a).f[0] = eps }
func (b *Backend) SoftMax(dst, a, mask *tensor.Tensor, scale, maxBias float32) {
	l := b.record(kSoftMax, dst, a, mask)
	l.f[0], l.f[1] = scale, maxBias
}
func (b *Backend) Rope(dst, a, pos *tensor.Tensor, p ops.RopeParams) {
	l := b.record(kRope, dst, a, pos)
	l.i = [3]int32{int32(p.NDims), int32(p.Mode), int32(p.NCtxOrig)}
	l.f = [7]float32{p.FreqBase, p.FreqScale, p.ExtFactor, p.AttnFactor, p.BetaFast, p.BetaSlow}
}
func (b *Backend) GetRows(dst, table, idx *tensor.Tensor) { b.record(kGetRows, dst, table, idx) }
func (b *Backend) Cpy(dst, src *tensor.Tensor)            { b.record(kCpy, dst, src) }

// builtGraph is the ggml graph of one recording, with the context holding
// its tensors and the buffer holding the results that could not be
// computed in place.
type builtGraph struct {
	ctx     context
	graph   cgraph
	scratch buffer
}

// flush computes the recorded kernels as one graph, built on first use.
func (b *Backend) flush() {
	if len(b.rec) == 0 {
		return
	}
	rec := b.rec
	b.rec = b.rec[:0]
	if b.Err() != nil {
		return
	}
	b.key = appendKey(b.key[:0], rec)
	g := b.graphs[string(b.key)]
	if g == nil {
		if len(b.graphs) >= maxGraphs {
			b.Synchronize()
			b.dropGraphs()
		}
		var err error
		if g, err = b.build(rec); err != nil {
			b.fail(err)
			return
		}
		b.graphs[string(b.key)] = g
	}
	if st := b.a.graphComputeAsync(b.be, g.graph); st != 0 {
		b.fail(fmt.Errorf("ggml_backend_graph_compute_async of %d kernels failed (ggml status %d)", len(rec), st))
		return
	}
	b.mu.Lock()
	b.sent++
	b.mu.Unlock()
}

// dropGraphs frees the cached graphs; the device must be idle.
func (b *Backend) dropGraphs() {
	for k, g := range b.graphs {
		g.free(b.a)
		delete(b.graphs, k)
	}
}

func (g *builtGraph) free(a *api) {
	if g.scratch != 0 {
		a.bufferFree(g.scratch)
	}
	a.free(g.ctx)
}

// appendKey encodes a recording: two recordings with one key build the
// same graph.
func appendKey(key []byte, rec []launch) []byte {
	put := func(v uint64) { key = binary.AppendUvarint(key, v) }
	putPlace := func(p *place) {
		put(uint64(p.alloc + 1))
		put(uint64(p.off))
		put(uint64(p.typ))
		for d := range 4 {
			put(uint64(p.ne[d]))
			put(uint64(p.nb[d]))
		}
	}
	for i := range rec {
		l := &rec[i]
		put(uint64(l.k))
		putPlace(&l.dst)
		put(uint64(l.nsrc))
		for s := range l.nsrc {
			putPlace(&l.src[s])
		}
		for _, f := range l.f {
			put(uint64(math.Float32bits(f)))
		}
		for _, v := range l.i {
			put(uint64(uint32(v)))
		}
	}
	return key
}

// build makes the ggml graph of a recording. Every gtensor sits at its
// place in the device's buffers; a gtensor read again at exactly the place
// a kernel wrote is that kernel's node, so that ggml sees the dependency.
// A result ggml cannot compute in place (dst strided, or of another type
// than ggml's op yields) is computed into a scratch buffer and copied.
// Every node is marked an output: graphc reads results through other
// views and in later graphs, which ggml's fusion cannot see.
func (b *Backend) build(rec []launch) (_ *builtGraph, err error) {
	a := b.a
	size := uintptr(24*len(rec) + 16)
	ctx := a.initContext(a.tensorOver()*size+a.graphOver(size, false)+4096, true)
	if ctx == 0 {
		return nil, fmt.Errorf("ggml_init failed")
	}
	// g is not the result, which every failure returns as nil: the
	// deferred free needs the graph being built.
	g := &builtGraph{ctx: ctx, graph: a.newGraphCustom(ctx, size, false)}
	defer func() {
		if err != nil {
			g.free(a)
		}
	}()
	known := map[place]gtensor{}
	type pendingScratch struct {
		t    gtensor
		size uintptr
	}
	var scratch []pendingScratch
	align := max(a.buftAlignment(b.buft), 1)
	var scratchSize uintptr
	toScratch := func(t gtensor) {
		scratch = append(scratch, pendingScratch{t, scratchSize})
		scratchSize += (a.nbytes(t) + align - 1) / align * align
	}
	var nodes []gtensor
	for i := range rec {
		l := &rec[i]
		var src [3]gtensor
		for s := range l.nsrc {
			if l.src[s].alloc < 0 {
				continue
			}
			if src[s], err = b.tensorAt(ctx, known, &l.src[s]); err != nil {
				return nil, err
			}
		}
		dst, err := b.tensorAt(ctx, known, &l.dst)
		if err != nil {
			return nil, err
		}
		n, err := a.kernelNodes(ctx, l, src, dst)
		if err != nil {
			return nil, err
		}
		if bad := b.unsupported(&n); bad != 0 {
			return nil, fmt.Errorf("the device does not support %s (ggml op %s)", describeLaunch(l), a.opDesc(bad))
		}
		for _, c := range n.conts {
			toScratch(c)
			a.setOutput(c)
			nodes = append(nodes, c)
		}
		switch {
		case l.k == kCpy:
			if st := a.viewInit(n.op); st != 0 {
				return nil, fmt.Errorf("placing %s: ggml status %d", describeLaunch(l), st)
			}
		case n.out == n.op:
			al := b.mem.At(l.dst.alloc)
			if st := a.tensorAlloc(al.buf, n.op, al.base+l.dst.off); st != 0 {
				return nil, fmt.Errorf("placing %s: ggml status %d", describeLaunch(l), st)
			}
		default:
			toScratch(n.op)
			if st := a.viewInit(n.out); st != 0 {
				return nil, fmt.Errorf("placing %s: ggml status %d", describeLaunch(l), st)
			}
		}
		a.setOutput(n.op)
		a.setOutput(n.out)
		known[l.dst] = n.out
		nodes = append(nodes, n.out)
	}
	if len(scratch) > 0 {
		g.scratch = a.buftAllocBuffer(b.buft, scratchSize)
		if g.scratch == 0 {
			return nil, fmt.Errorf("could not allocate %d bytes of scratch for results computed out of place", scratchSize)
		}
		base := a.bufferBase(g.scratch)
		for _, s := range scratch {
			if st := a.tensorAlloc(g.scratch, s.t, base+s.size); st != 0 {
				return nil, fmt.Errorf("placing a scratch result: ggml status %d", st)
			}
		}
	}
	for _, n := range nodes {
		a.buildForwardExpand(g.graph, n)
	}
	return g, nil
}

// kernelNodes are the ggml nodes computing one kernel: conts, operands
// ggml's constructor needs contiguous, computed into scratch first; op, the
// op itself; out, op placed in dst, or, when op cannot be (dst strided, or
// of another type than ggml's op yields), the copy of op, computed into
// scratch, into dst. A cpy is its own out: ggml_cpy writes dst.
type kernelNodes struct {
	conts   []gtensor
	op, out gtensor
}

// kernelNodes constructs the nodes of kernel l on operand tensors src
// (0 for an optional source left out) and dst, placing nothing: build
// places them, Check only asks the device about them.
func (a *api) kernelNodes(ctx context, l *launch, src [3]gtensor, dst gtensor) (kernelNodes, error) {
	var n kernelNodes
	for s := range l.nsrc {
		if src[s] != 0 && needsCont(l, s) {
			// ggml's constructor asserts a layout graphc's kernels do
			// without: the operand is made contiguous in scratch first.
			src[s] = a.cont(ctx, src[s])
			n.conts = append(n.conts, src[s])
		}
	}
	var r gtensor
	switch l.k {
	case kMulMat:
		r = a.mulMat(ctx, src[0], src[1])
	case kAdd:
		r = a.add(ctx, src[0], src[1])
	case kSub:
		r = a.sub(ctx, src[0], src[1])
	case kMul:
		r = a.mul(ctx, src[0], src[1])
	case kDiv:
		r = a.div(ctx, src[0], src[1])
	case kScale:
		r = a.scale(ctx, src[0], l.f[0])
	case kRelu:
		r = a.relu(ctx, src[0])
	case kGelu:
		r = a.gelu(ctx, src[0])
	case kSilu:
		r = a.silu(ctx, src[0])
	case kRMSNorm:
		r = a.rmsNorm(ctx, src[0], l.f[0])
	case kNorm:
		r = a.norm(ctx, src[0], l.f[0])
	case kSoftMax:
		r = a.softMaxExt(ctx, src[0], src[1], l.f[0], l.f[1])
	case kRope:
		r = a.ropeExt(ctx, src[0], src[1], 0, l.i[0], l.i[1], l.i[2], l.f[0], l.f[1], l.f[2], l.f[3], l.f[4], l.f[5])
	case kGetRows:
		r = a.getRows(ctx, src[0], src[1])
	case kCpy:
		r = a.cpy(ctx, src[0], dst)
	default:
		panic(fmt.Sprintf("BUG: ggml: kernel %d has no ggml constructor", l.k))
	}
	if r == 0 {
		return n, fmt.Errorf("ggml could not construct %s", describeLaunch(l))
	}
	n.op, n.out = r, r
	if l.k == kCpy {
		return n, nil
	}
	if !a.sameShape(r, dst) {
		return n, fmt.Errorf("ggml's %s has another shape than graphc's %v", describeLaunch(l), l.dst.ne)
	}
	if resultType(l) != l.dst.typ || !contiguous(&l.dst) {
		n.out = a.cpy(ctx, r, dst)
	}
	return n, nil
}

// unsupported returns the first of n's nodes the device does not
// support, or 0.
func (b *Backend) unsupported(n *kernelNodes) gtensor {
	for _, t := range append(n.conts, n.op, n.out) {
		if !b.a.devSupportsOp(b.dev, t) {
			return t
		}
	}
	return 0
}

// Check asks the device whether it supports each of ops, the kernels a
// plan puts on this backend (generated code lists them, at the dims'
// bounds, and calls Check once the device is open), built as the split's
// graph will build them. Without it an op the device cannot run would
// surface only at the first evaluation, after the weights' upload.
func (b *Backend) Check(ops []backend.OpQuery) error {
	for i := range ops {
		l, err := launchOf(&ops[i])
		if err != nil {
			return fmt.Errorf("%s: %w", b.name, err)
		}
		refused, err := b.check(&l)
		if err != nil {
			return fmt.Errorf("%s: checking the plan's ops: %w", b.name, err)
		}
		if refused != "" {
			return fmt.Errorf("%s: ggml device %s (%s) does not support %s (ggml op %s), which the plan puts on it; place it on another backend (-ot, or a target without %s)",
				b.name, b.info.Name, b.info.Description, describeLaunch(&l), refused, b.name)
		}
	}
	return nil
}

// check constructs l's nodes, without placing them, and asks the device:
// refused is ggml's name of the first node it does not support, "" if
// none.
func (b *Backend) check(l *launch) (refused string, err error) {
	a := b.a
	ctx := a.initContext(a.tensorOver()*24+4096, true)
	if ctx == 0 {
		return "", fmt.Errorf("ggml_init failed")
	}
	defer a.free(ctx)
	var src [3]gtensor
	for s := range l.nsrc {
		if l.src[s].alloc < 0 {
			continue
		}
		if src[s], _, _, err = a.layout(ctx, &l.src[s]); err != nil {
			return "", fmt.Errorf("%s: %v", describeLaunch(l), err)
		}
	}
	dst, _, _, err := a.layout(ctx, &l.dst)
	if err != nil {
		return "", fmt.Errorf("%s: %v", describeLaunch(l), err)
	}
	n, err := a.kernelNodes(ctx, l, src, dst)
	if err != nil {
		return "", err
	}
	if bad := b.unsupported(&n); bad != 0 {
		return a.opDesc(bad), nil
	}
	return "", nil
}

// launchOf is the kernel computing q, with q's operands at no particular
// place and scalars that ggml's support checks do not depend on.
func launchOf(q *backend.OpQuery) (launch, error) {
	var l launch
	k, ok := kernelOf(q.Op.String())
	if !ok {
		return l, fmt.Errorf("op %q has no ggml kernel in graphc", q.Op)
	}
	l.k = k
	srcs := q.Src
	l.dst = placeOf(q.Type, q.Ne, [4]int64{})
	if k == kCpy && q.Op == ops.Cpy {
		// ggml_cpy(a, b): the result is b itself, the last source.
		if len(srcs) != 2 {
			return l, fmt.Errorf("op cpy with %d sources, want 2", len(srcs))
		}
		l.dst = placeOf(srcs[1].Type, srcs[1].Ne, srcs[1].Nb)
		srcs = srcs[:1]
	}
	l.nsrc = kernelSrcs[k]
	if len(srcs) > l.nsrc || len(srcs) == 0 {
		return l, fmt.Errorf("op %s with %d sources, want at most %d", q.Op, len(srcs), l.nsrc)
	}
	for s := range l.nsrc {
		if s >= len(srcs) {
			l.src[s].alloc = -1
			continue
		}
		l.src[s] = placeOf(srcs[s].Type, srcs[s].Ne, srcs[s].Nb)
	}
	switch k {
	case kScale, kSoftMax:
		l.f[0] = 1
	case kRMSNorm, kNorm:
		l.f[0] = 1e-5
	case kRope:
		l.i[0] = int32(l.src[0].ne[0])
		l.f = [7]float32{10000, 1, 0, 1, 32, 1}
	}
	return l, nil
}

// kernelSrcs is the number of gtensor operands each kernel takes.
var kernelSrcs = [...]int{kMulMat: 2, kAdd: 2, kSub: 2, kMul: 2, kDiv: 2, kScale: 1, kRelu: 1, kGelu: 1, kSilu: 1, kRMSNorm: 1, kNorm: 1, kSoftMax: 2, kRope: 2, kGetRows: 2, kCpy: 1}

// kernelOf maps an op's DSL name to its kernel: the kernel's own name,
// or cpy for cont (a copy into contiguous memory).
func kernelOf(op string) (kernel, bool) {
	if op == "cont" {
		return kCpy, true
	}
	for k, name := range kernelNames {
		if name == op {
			return kernel(k), true
		}
	}
	return 0, false
}

// placeOf is a place of the type, shape and strides (all zero: the
// contiguous ones) a query gives.
func placeOf(typ tensor.DType, ne, nb [4]int64) place {
	p := place{typ: typ}
	for d := range 4 {
		p.ne[d], p.nb[d] = int(ne[d]), int(nb[d])
	}
	if nb == [4]int64{} {
		p.nb[0] = typ.Size()
		p.nb[1] = typ.Size() * (p.ne[0] / typ.BlockSize())
		p.nb[2] = p.nb[1] * p.ne[1]
		p.nb[3] = p.nb[2] * p.ne[2]
	}
	return p
}

// needsCont reports whether source s of l has a layout ggml's
// constructor refuses: a transposed left operand of a matrix product
// (ggml_mul_mat asserts !ggml_is_transposed), a right operand whose
// elements are not adjacent (ggml-cpu asserts nb10 == the type's size), a
// strided softmax input or
// mask (ggml_soft_max_ext asserts contiguity).
func needsCont(l *launch, s int) bool {
	p := &l.src[s]
	switch {
	case l.k == kMulMat && s == 0:
		return p.nb[0] > p.nb[1]
	case l.k == kMulMat && s == 1:
		return p.nb[0] != p.typ.Size()
	case l.k == kSoftMax:
		return !contiguous(p)
	}
	return false
}

// resultType is the type ggml's constructor gives the kernel's result.
func resultType(l *launch) tensor.DType {
	switch l.k {
	case kMulMat:
		return tensor.F32
	case kGetRows:
		if l.src[0].typ == tensor.I32 {
			return tensor.I32
		}
		return tensor.F32
	}
	return l.src[0].typ
}

func contiguous(p *place) bool {
	t := tensor.Tensor{Type: p.typ, Ne: p.ne, Nb: p.nb}
	return t.Contiguous()
}

// tensorAt returns a ggml gtensor at place p: the node that wrote exactly
// there, or a new gtensor placed there.
func (b *Backend) tensorAt(ctx context, known map[place]gtensor, p *place) (gtensor, error) {
	if t, ok := known[*p]; ok {
		return t, nil
	}
	a := b.a
	t, base, views, err := a.layout(ctx, p)
	if err != nil {
		return 0, err
	}
	al := b.mem.At(p.alloc)
	if st := a.tensorAlloc(al.buf, base, al.base+p.off); st != 0 {
		return 0, fmt.Errorf("placing a %s%v gtensor: ggml status %d", p.typ, p.ne, st)
	}
	for _, v := range views {
		if st := a.viewInit(v); st != 0 {
			return 0, fmt.Errorf("placing a %s%v view: ggml status %d", p.typ, p.ne, st)
		}
	}
	known[*p] = t
	return t, nil
}

// layout makes a ggml gtensor t with p's type and layout, not yet placed:
// base is the gtensor to place at p's offset (t itself when contiguous) and
// views the views over it, base first, to initialize once it is placed. A
// strided layout is a view of a byte span, permuted when its innermost
// stride is not dimension 0's. Check describes ops with it without
// placing anything, so that what it asks the device is what build builds.
func (a *api) layout(ctx context, p *place) (t, base gtensor, views []gtensor, err error) {
	typ := int32(p.typ.GGMLType())
	if contiguous(p) {
		t = a.newTensor4d(ctx, typ, int64(p.ne[0]), int64(p.ne[1]), int64(p.ne[2]), int64(p.ne[3]))
		return t, t, nil, nil
	}
	// Order the axes by stride, size-1 axes last, so that the view's
	// first axis is the element stride ggml_view_4d assumes.
	q := [4]int{0, 1, 2, 3}
	sort.SliceStable(q[:], func(i, j int) bool {
		ki, kj := p.nb[q[i]], p.nb[q[j]]
		if p.ne[q[i]] == 1 {
			ki = math.MaxInt
		}
		if p.ne[q[j]] == 1 {
			kj = math.MaxInt
		}
		return ki < kj
	})
	if p.nb[q[0]] != p.typ.Size() && p.ne[q[3]] == 1 {
		// No axis has adjacent elements, but one of size 1 (a KV
		// cache's view of one slot) has none to place: it is the
		// first axis, whose stride ggml_view_4d leaves implicit.
		q = [4]int{q[3], q[0], q[1], q[2]}
	}
	if p.nb[q[0]] != p.typ.Size() && p.ne[q[0]] != 1 {
		return 0, 0, nil, fmt.Errorf("a %s%v gtensor with strides %v: ggml tensors need one dimension of adjacent elements", p.typ, p.ne, p.nb)
	}
	span := (&tensor.Tensor{Type: p.typ, Ne: p.ne, Nb: p.nb}).Span()
	elems := int64(span / p.typ.Size() * p.typ.BlockSize())
	base = a.newTensor1d(ctx, typ, elems)
	t = a.view4d(ctx, base, int64(p.ne[q[0]]), int64(p.ne[q[1]]), int64(p.ne[q[2]]), int64(p.ne[q[3]]),
		uintptr(p.nb[q[1]]), uintptr(p.nb[q[2]]), uintptr(p.nb[q[3]]), 0)
	views = append(views, t)
	if q != [4]int{0, 1, 2, 3} {
		t = a.permute(ctx, t, int32(q[0]), int32(q[1]), int32(q[2]), int32(q[3]))
		views = append(views, t)
	}
	return t, base, views, nil
}

// describeLaunch names a kernel with its operands' types and shapes, for
// errors.
func describeLaunch(l *launch) string {
	var s []string
	for i := range l.nsrc {
		if l.src[i].alloc < 0 {
			s = append(s, "none")
			continue
		}
		s = append(s, fmt.Sprintf("%s%v", l.src[i].typ, l.src[i].ne))
	}
	return fmt.Sprintf("%s → %s%v from %s", kernelNames[l.k], l.dst.typ, l.dst.ne, strings.Join(s, ", "))
}

// Graphs is the number of graphs built and kept.
func (b *Backend) Graphs() int { return len(b.graphs) }
