package ggml

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/internal/ggmlapi"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// ggmlTypeI8 is GGML_TYPE_I8, the type of the byte tensors raw copies go
// through.
const ggmlTypeI8 = 24

// place is where a gtensor is: its allocation, offset, type and layout.
type place struct {
	alloc int
	off   uintptr
	typ   tensor.DType
	ne    [4]int
	nb    [4]int
}

// launch is one recorded kernel: the first op of the table computed by
// it (cpy for cont), dst and up to three sources (a nil optional source
// has alloc -1), and its scalars as ggml's op_params lay them out (kept
// as words, not as the op's Params, so that recording allocates nothing).
type launch struct {
	op     ops.Op
	dst    place
	src    [maxSrcs]place
	nsrc   int
	params [16]int32
}

// record appends one kernel to the split being recorded.
func (b *Backend) record(op ops.Op, params [16]int32, dst *tensor.Tensor, srcs ...*tensor.Tensor) {
	if b.Err() != nil {
		return
	}
	l := launch{op: op, params: params, dst: b.place(dst), nsrc: len(srcs)}
	for i, s := range srcs {
		if s == nil {
			l.src[i].alloc = -1
			continue
		}
		l.src[i] = b.place(s)
	}
	b.rec = append(b.rec, l)
}

func (b *Backend) place(t *tensor.Tensor) place {
	i, off := b.locate(t)
	return place{alloc: i, off: off, typ: t.Type, ne: t.Ne, nb: t.Nb}
}

// Kernels: recorded.

// builtGraph is the ggml graph of one recording, with the context holding
// its tensors and the buffer holding the results that could not be
// computed in place.
type builtGraph struct {
	ctx     ggmlapi.Context
	graph   ggmlapi.Graph
	scratch ggmlapi.Buffer
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
	if st := b.a.GraphComputeAsync(b.be, g.graph); st != 0 {
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
		a.BufferFree(g.scratch)
	}
	a.Free(g.ctx)
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
		put(uint64(l.op))
		putPlace(&l.dst)
		put(uint64(l.nsrc))
		for s := range l.nsrc {
			putPlace(&l.src[s])
		}
		for _, w := range l.params {
			put(uint64(uint32(w)))
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
	ctx := a.InitContext(a.TensorOver()*size+a.GraphOver(size, false)+4096, true)
	if ctx == 0 {
		return nil, fmt.Errorf("ggml_init failed")
	}
	// g is not the result, which every failure returns as nil: the
	// deferred free needs the graph being built.
	g := &builtGraph{ctx: ctx, graph: a.NewGraphCustom(ctx, size, false)}
	defer func() {
		if err != nil {
			g.free(a)
		}
	}()
	known := map[place]ggmlapi.Tensor{}
	type pendingScratch struct {
		t    ggmlapi.Tensor
		size uintptr
	}
	var scratch []pendingScratch
	align := max(a.BuftAlignment(b.buft), 1)
	var scratchSize uintptr
	toScratch := func(t ggmlapi.Tensor) {
		scratch = append(scratch, pendingScratch{t, scratchSize})
		scratchSize += (a.Nbytes(t) + align - 1) / align * align
	}
	var nodes []ggmlapi.Tensor
	for i := range rec {
		l := &rec[i]
		var src [maxSrcs]ggmlapi.Tensor
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
			return nil, fmt.Errorf("the device does not support %s (ggml op %s)", describeLaunch(l), a.OpDesc(bad))
		}
		for _, c := range n.conts {
			toScratch(c)
			a.SetOutput(c)
			nodes = append(nodes, c)
		}
		switch {
		case l.op == ops.Cpy:
			if st := a.ViewInit(n.op); st != 0 {
				return nil, fmt.Errorf("placing %s: ggml status %d", describeLaunch(l), st)
			}
		case n.out == n.op:
			al := b.mem.At(l.dst.alloc)
			if st := a.TensorAlloc(al.buf, n.op, al.base+l.dst.off); st != 0 {
				return nil, fmt.Errorf("placing %s: ggml status %d", describeLaunch(l), st)
			}
		default:
			toScratch(n.op)
			if st := a.ViewInit(n.out); st != 0 {
				return nil, fmt.Errorf("placing %s: ggml status %d", describeLaunch(l), st)
			}
		}
		a.SetOutput(n.op)
		a.SetOutput(n.out)
		forgetOverlapping(known, &l.dst)
		known[l.dst] = n.out
		nodes = append(nodes, n.out)
	}
	if len(scratch) > 0 {
		g.scratch = a.BuftAllocBuffer(b.buft, scratchSize)
		if g.scratch == 0 {
			return nil, fmt.Errorf("could not allocate %d bytes of scratch for results computed out of place", scratchSize)
		}
		base := a.BufferBase(g.scratch)
		for _, s := range scratch {
			if st := a.TensorAlloc(g.scratch, s.t, base+s.size); st != 0 {
				return nil, fmt.Errorf("placing a scratch result: ggml status %d", st)
			}
		}
	}
	for _, n := range nodes {
		a.BuildForwardExpand(g.graph, n)
	}
	return g, nil
}

// kernelNodes are the ggml nodes computing one kernel: conts, operands
// ggml's constructor needs contiguous, computed into scratch first; op, the
// op itself; out, op placed in dst, or, when op cannot be (dst strided, or
// of another type than ggml's op yields), the copy of op, computed into
// scratch, into dst. A cpy is its own out: ggml_cpy writes dst.
type kernelNodes struct {
	conts   []ggmlapi.Tensor
	op, out ggmlapi.Tensor
}

// kernelNodes constructs the nodes of kernel l on operand tensors src
// (0 for an optional source left out) and dst, placing nothing: build
// places them, Check only asks the device about them.
func (a *api) kernelNodes(ctx ggmlapi.Context, l *launch, src [maxSrcs]ggmlapi.Tensor, dst ggmlapi.Tensor) (kernelNodes, error) {
	var n kernelNodes
	for s := range l.nsrc {
		if src[s] != 0 && needsCont(l, s) {
			// ggml's constructor asserts a layout graphc's kernels do
			// without: the operand is made contiguous in scratch first.
			src[s] = a.Cont(ctx, src[s])
			n.conts = append(n.conts, src[s])
		}
	}
	if l.op == ops.FlashAttnExt && src[3] != 0 && l.src[3].typ == tensor.F32 {
		// ggml's op takes an f16 mask: llama.cpp casts its f32 one.
		src[3] = a.Cast(ctx, src[3], int32(tensor.F16))
		n.conts = append(n.conts, src[3])
	}
	var p ops.Params
	if proto := l.op.Info().Params; proto != nil {
		p = proto.FromGGML(l.params)
	}
	r := constructors[l.op](a, ctx, src, dst, p)
	if r == 0 {
		return n, fmt.Errorf("ggml could not construct %s", describeLaunch(l))
	}
	n.op, n.out = r, r
	if l.op == ops.Cpy {
		return n, nil
	}
	if !a.SameShape(r, dst) {
		return n, fmt.Errorf("ggml's %s has another shape than graphc's %v", describeLaunch(l), l.dst.ne)
	}
	if resultType(l) != l.dst.typ || !contiguous(&l.dst) {
		n.out = a.Cpy(ctx, r, dst)
	}
	return n, nil
}

// unsupported returns the first of n's nodes the device does not
// support, or 0.
func (b *Backend) unsupported(n *kernelNodes) ggmlapi.Tensor {
	for _, t := range append(n.conts, n.op, n.out) {
		if !b.a.DevSupportsOp(b.dev, t) {
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
	ctx := a.InitContext(a.TensorOver()*24+4096, true)
	if ctx == 0 {
		return "", fmt.Errorf("ggml_init failed")
	}
	defer a.Free(ctx)
	var src [maxSrcs]ggmlapi.Tensor
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
		return a.OpDesc(bad), nil
	}
	return "", nil
}

// launchOf is the kernel computing q, with q's operands at no particular
// place and scalars that ggml's support checks do not depend on.
func launchOf(q *backend.OpQuery) (launch, error) {
	var l launch
	op := kernelOp(q.Op)
	if constructors[op] == nil {
		return l, fmt.Errorf("op %s has no ggml kernel in graphc", q.Op)
	}
	l.op = op
	srcs := q.Src
	l.dst = placeOf(q.Type, q.Ne, [4]int64{})
	if q.Op.Info().Flags&ops.FlagWritesSrc != 0 {
		// ggml_cpy(a, b): the result is b itself, the last source.
		if len(srcs) != q.Op.Info().MaxSrcs {
			return l, fmt.Errorf("op %s with %d sources, want %d", q.Op, len(srcs), q.Op.Info().MaxSrcs)
		}
		l.dst = placeOf(srcs[len(srcs)-1].Type, srcs[len(srcs)-1].Ne, srcs[len(srcs)-1].Nb)
		srcs = srcs[:len(srcs)-1]
	}
	l.nsrc = kernelSrcs(op)
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
	if p := op.Info().Params; p != nil {
		p = ops.Defaults(p)
		if r, ok := p.(ops.RopeParams); ok {
			r.NDims = l.src[0].ne[0]
			p = r
		}
		l.params = p.GGML()
	}
	return l, nil
}

// maxSrcs is the most operands a kernel takes (flash_attn_ext's q, k, v,
// mask).
const maxSrcs = 4

// A constructor builds the ggml node of one kernel (the op it is keyed by
// in constructors) on its operands src, writing dst for ops that write a
// source (cpy), with the kernel's Params.
type constructor func(a *api, ctx ggmlapi.Context, src [maxSrcs]ggmlapi.Tensor, dst ggmlapi.Tensor, p ops.Params) ggmlapi.Tensor

// constructors are ggml's constructor of each kernel, by its first op in
// the table (kernelOp); TestEveryKernelConstructs names a kernel without one.
var constructors = map[ops.Op]constructor{
	ops.MulMat: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, _ ggmlapi.Tensor, p ops.Params) ggmlapi.Tensor {
		r := a.MulMat(ctx, s[0], s[1])
		if w := p.GGML(); w[0] != 0 {
			a.MulMatSetPrec(r, w[0])
		}
		return r
	},
	ops.Add: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, _ ggmlapi.Tensor, _ ops.Params) ggmlapi.Tensor {
		return a.Add(ctx, s[0], s[1])
	},
	ops.Sub: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, _ ggmlapi.Tensor, _ ops.Params) ggmlapi.Tensor {
		return a.Sub(ctx, s[0], s[1])
	},
	ops.Mul: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, _ ggmlapi.Tensor, _ ops.Params) ggmlapi.Tensor {
		return a.Mul(ctx, s[0], s[1])
	},
	ops.Div: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, _ ggmlapi.Tensor, _ ops.Params) ggmlapi.Tensor {
		return a.Div(ctx, s[0], s[1])
	},
	ops.Scale: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, _ ggmlapi.Tensor, p ops.Params) ggmlapi.Tensor {
		return a.Scale(ctx, s[0], p.(ops.ScaleParams).S)
	},
	ops.Relu: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, _ ggmlapi.Tensor, _ ops.Params) ggmlapi.Tensor {
		return a.Relu(ctx, s[0])
	},
	ops.Gelu: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, _ ggmlapi.Tensor, _ ops.Params) ggmlapi.Tensor {
		return a.Gelu(ctx, s[0])
	},
	ops.Silu: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, _ ggmlapi.Tensor, _ ops.Params) ggmlapi.Tensor {
		return a.Silu(ctx, s[0])
	},
	ops.Tanh: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, _ ggmlapi.Tensor, _ ops.Params) ggmlapi.Tensor {
		return a.Tanh(ctx, s[0])
	},
	ops.Sigmoid: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, _ ggmlapi.Tensor, _ ops.Params) ggmlapi.Tensor {
		return a.Sigmoid(ctx, s[0])
	},
	ops.RMSNorm: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, _ ggmlapi.Tensor, p ops.Params) ggmlapi.Tensor {
		return a.RmsNorm(ctx, s[0], p.(ops.NormParams).Eps)
	},
	ops.Norm: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, _ ggmlapi.Tensor, p ops.Params) ggmlapi.Tensor {
		return a.Norm(ctx, s[0], p.(ops.NormParams).Eps)
	},
	ops.SoftMax: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, _ ggmlapi.Tensor, p ops.Params) ggmlapi.Tensor {
		q := p.(ops.SoftMaxParams)
		return a.SoftMaxExt(ctx, s[0], s[1], q.Scale, q.MaxBias)
	},
	ops.Rope: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, _ ggmlapi.Tensor, p ops.Params) ggmlapi.Tensor {
		r := p.(ops.RopeParams)
		return a.RopeExt(ctx, s[0], s[1], s[2], int32(r.NDims), int32(r.Mode), int32(r.NCtxOrig),
			r.FreqBase, r.FreqScale, r.ExtFactor, r.AttnFactor, r.BetaFast, r.BetaSlow)
	},
	ops.GetRows: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, _ ggmlapi.Tensor, _ ops.Params) ggmlapi.Tensor {
		return a.GetRows(ctx, s[0], s[1])
	},
	ops.Cpy: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, dst ggmlapi.Tensor, _ ops.Params) ggmlapi.Tensor {
		return a.Cpy(ctx, s[0], dst)
	},
	ops.FlashAttnExt: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, _ ggmlapi.Tensor, p ops.Params) ggmlapi.Tensor {
		q := p.(ops.FlashAttnParams)
		r := a.FlashAttnExt(ctx, s[0], s[1], s[2], s[3], q.Scale, q.MaxBias, q.LogitSoftcap)
		if w := q.GGML(); w[3] != 0 {
			a.FlashAttnExtSetPrec(r, w[3])
		}
		return r
	},
	ops.MulMatID: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, _ ggmlapi.Tensor, _ ops.Params) ggmlapi.Tensor {
		return a.MulMatID(ctx, s[0], s[1], s[2])
	},
	ops.ArgSort: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, _ ggmlapi.Tensor, p ops.Params) ggmlapi.Tensor {
		return a.Argsort(ctx, s[0], int32(p.(ops.ArgSortParams).Order))
	},
	ops.TopK: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, _ ggmlapi.Tensor, p ops.Params) ggmlapi.Tensor {
		return a.TopK(ctx, s[0], int32(p.(ops.TopKParams).K))
	},
	ops.SumRows: func(a *api, ctx ggmlapi.Context, s [maxSrcs]ggmlapi.Tensor, _ ggmlapi.Tensor, _ ops.Params) ggmlapi.Tensor {
		return a.SumRows(ctx, s[0])
	},
}

// kernelOp is the op whose kernel computes op: the first of the table's
// rows naming the same Kernels method (cpy for cont).
func kernelOp(op ops.Op) ops.Op {
	for _, k := range ops.All() {
		if k.Info().Kernel == op.Info().Kernel {
			return k
		}
	}
	return op
}

// kernelSrcs is the number of gtensor operands op's kernel takes: its
// operands, less the one it writes.
func kernelSrcs(op ops.Op) int {
	if op.Info().Flags&ops.FlagWritesSrc != 0 {
		return op.Info().MaxSrcs - 1
	}
	return op.Info().MaxSrcs
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
// mask (ggml_soft_max_ext asserts contiguity), and the like of mul_mat_id,
// sum_rows, argsort and top_k.
func needsCont(l *launch, s int) bool {
	p := &l.src[s]
	switch {
	case l.op == ops.MulMat && s == 0:
		return p.nb[0] > p.nb[1]
	case l.op == ops.MulMat && s == 1:
		return p.nb[0] != p.typ.Size()
	case l.op == ops.SoftMax:
		return !contiguous(p)
	case l.op == ops.MulMatID && s == 1, l.op == ops.SumRows:
		// ggml-cpu asserts x's and sum_rows' elements adjacent.
		return p.nb[0] != p.typ.Size()
	case l.op == ops.ArgSort, l.op == ops.TopK:
		// ggml-cpu reads row i at i·nb01.
		return !contiguous(p)
	}
	return false
}

// resultType is the type ggml's constructor gives the kernel's result.
func resultType(l *launch) tensor.DType {
	switch l.op {
	case ops.MulMat, ops.MulMatID:
		return tensor.F32
	case ops.ArgSort, ops.TopK:
		return tensor.I32
	case ops.GetRows:
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

// forgetOverlapping drops the gtensors of known whose bytes a kernel
// writing p overwrites. A later kernel reading one of those places gets a
// gtensor of its own: ggml's devices may key what they derived from an
// operand by its gtensor (ggml-vulkan converts a strided right-hand side
// of a matrix product once and reuses the conversion while the same
// gtensor comes again), so a gtensor must not outlive its contents. Where
// the memory planner puts two layers' queries at one offset, reusing the
// first layer's view gave the second layer's attention the first's
// queries.
func forgetOverlapping(known map[place]ggmlapi.Tensor, p *place) {
	lo, hi := p.off, p.off+uintptr(p.span())
	for q := range known {
		if q.alloc == p.alloc && q.off < hi && lo < q.off+uintptr(q.span()) {
			delete(known, q)
		}
	}
}

func (p *place) span() int { return (&tensor.Tensor{Type: p.typ, Ne: p.ne, Nb: p.nb}).Span() }

// tensorAt returns a ggml gtensor at place p: the node that wrote exactly
// there, or a new gtensor placed there.
func (b *Backend) tensorAt(ctx ggmlapi.Context, known map[place]ggmlapi.Tensor, p *place) (ggmlapi.Tensor, error) {
	if t, ok := known[*p]; ok {
		return t, nil
	}
	a := b.a
	t, base, views, err := a.layout(ctx, p)
	if err != nil {
		return 0, err
	}
	al := b.mem.At(p.alloc)
	if st := a.TensorAlloc(al.buf, base, al.base+p.off); st != 0 {
		return 0, fmt.Errorf("placing a %s%v gtensor: ggml status %d", p.typ, p.ne, st)
	}
	for _, v := range views {
		if st := a.ViewInit(v); st != 0 {
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
func (a *api) layout(ctx ggmlapi.Context, p *place) (t, base ggmlapi.Tensor, views []ggmlapi.Tensor, err error) {
	typ := int32(uint32(p.typ))
	if contiguous(p) {
		t = a.NewTensor4d(ctx, typ, int64(p.ne[0]), int64(p.ne[1]), int64(p.ne[2]), int64(p.ne[3]))
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
	elems := int64(p.span() / p.typ.Size() * p.typ.BlockSize())
	base = a.NewTensor1d(ctx, typ, elems)
	t = a.View4d(ctx, base, int64(p.ne[q[0]]), int64(p.ne[q[1]]), int64(p.ne[q[2]]), int64(p.ne[q[3]]),
		uintptr(p.nb[q[1]]), uintptr(p.nb[q[2]]), uintptr(p.nb[q[3]]), 0)
	views = append(views, t)
	if q != [4]int{0, 1, 2, 3} {
		t = a.Permute(ctx, t, int32(q[0]), int32(q[1]), int32(q[2]), int32(q[3]))
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
	return fmt.Sprintf("%s → %s%v from %s", l.op, l.dst.typ, l.dst.ne, strings.Join(s, ", "))
}

// Graphs is the number of graphs built and kept.
func (b *Backend) Graphs() int { return len(b.graphs) }
