package codegen

import (
	"fmt"
	"math"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
)

// maxChunkNodes bounds the nodes one generated method runs. The Go
// toolchain is superlinear in a function's size: every call site in a
// function carries a stack map as long as the function's frame, and each
// node adds a tensor to the frame and calls to the body, so one method of n
// nodes costs O(n²) bytes of stack maps and compile time. Measured on a
// chain of 2-node layers (add(mul(x, w), b)) built as one method per split:
// at 1k nodes 5.6 MB of binary, 1 s of go build; at 10k 159 MB (150 MB of
// it the split method's stack maps), 45 s and 1.9 GB of compiler memory.
// Methods of at most maxChunkNodes nodes make both linear (8.9 MB and 4.8 s
// at 10k nodes); RATIONALE.md ("Why chunk methods …") has the numbers and
// why 128.
const maxChunkNodes = 128

func splitName(k int) string        { return fmt.Sprintf("split%d", k) }
func chunkName(k, chunk int) string { return fmt.Sprintf("split%dChunk%d", k, chunk) }

// split emits one method running split k: its input copies, then its ops,
// each computed node reported to the eval callback. A split of more than
// maxChunkNodes nodes runs them through chunk methods, called in order.
func (gen *generator) split(f *jen.File, k int) {
	g := gen.g
	s := g.Splits[k]
	b := gen.newBody()
	sched := jen.Id("m").Dot("sched")
	b.add(sched.Clone().Dot("BeginSplit").Call(jen.Lit(k)))
	var names []string
	for _, in := range s.Inputs {
		from := gen.memBackend(in.Tensor)
		dst := b.ref(in.Copies[0])
		src := b.ref(in.Tensor)
		if e := in.Experts; e != nil {
			// ggml's copy of the used experts: the ids, read on the
			// host, say which of the tensor's experts to copy.
			idsFrom := gen.memBackend(e.IDs)
			b.add(sched.Clone().Dot("CopyExperts").Call(jen.Lit(k), jen.Id(gen.beConst[from]), dst, src, jen.Id(gen.beConst[idsFrom]), b.ref(e.IDs), jen.Lit(e.IDs.ID)).
				Comment(fmt.Sprintf("%s: the experts %s uses, at most %d bytes from %s", in.Tensor.Name, e.IDs.Name, in.Tensor.MaxBytes(), g.Backends[from].Name)))
			names = append(names, in.Tensor.Name)
			continue
		}
		user := in.Tensor.Kind == ir.KindInput
		b.add(sched.Clone().Dot("CopyInput").Call(jen.Lit(k), jen.Id(gen.beConst[from]), dst, src, jen.Lit(user)).
			Comment(fmt.Sprintf("%s: %d bytes from %s", in.Tensor.Name, in.Tensor.MaxBytes(), g.Backends[from].Name)))
		names = append(names, in.Tensor.Name)
	}
	b.add(sched.Clone().Dot("Compute").Call(jen.Lit(k)))
	chunks := gen.chunks(s.First, s.End, true)
	if len(chunks) == 1 {
		gen.nodes(b, s, s.First, s.End)
	} else {
		for c := range chunks {
			b.add(jen.Id("m").Dot(chunkName(k, c)).Call(jen.Id("d"), jen.Id("c")))
		}
	}
	b.add(sched.Clone().Dot("EndSplit").Call(jen.Lit(k)))
	f.Commentf("%s runs nodes %d..%d (%s … %s) on %s%s.", splitName(k), s.First, s.End-1, g.Nodes[s.First].Name, g.Nodes[s.End-1].Name, g.Backends[s.Backend].Name, copiesIn(names))
	f.Func().Params(jen.Id("m").Op("*").Id("Model")).Id(splitName(k)).Params(jen.Id("d").Op("*").Id("Dims"), jen.Id("c").Int()).Block(b.stmts...)
	if len(chunks) > 1 {
		for c, r := range chunks {
			gen.chunk(f, k, c, r)
		}
	}
}

// nodeRange is the half-open range [first, end) of node indexes.
type nodeRange struct{ first, end int }

// chunks cuts nodes [first, end) into consecutive ranges of at most
// maxChunkNodes computed nodes each. With wholeRegions it never cuts a
// parallel region (a longer region is a chunk of its own).
func (gen *generator) chunks(first, end int, wholeRegions bool) []nodeRange {
	g := gen.g
	var out []nodeRange
	start, n := first, 0
	for i := first; i < end; {
		next, computed := i+1, 0
		if r, ok := gen.regionAt[i]; ok && wholeRegions {
			next = g.Regions[r].End
		}
		if n := g.Nodes[i].Group; n > 0 {
			next = i + n // one call: its results are the call's locals
		}
		for _, t := range g.Nodes[i:next] {
			if !t.Op.IsView() {
				computed++
			}
		}
		if n > 0 && n+computed > maxChunkNodes {
			out = append(out, nodeRange{start, i})
			start, n = i, 0
		}
		n += computed
		i = next
	}
	return append(out, nodeRange{start, end})
}

// chunk emits method chunkName(k, c), running nodes r of split k.
func (gen *generator) chunk(f *jen.File, k, c int, r nodeRange) {
	g := gen.g
	b := gen.newBody()
	gen.nodes(b, g.Splits[k], r.first, r.end)
	f.Commentf("%s runs nodes %d..%d (%s … %s) of %s.", chunkName(k, c), r.first, r.end-1, g.Nodes[r.first].Name, g.Nodes[r.end-1].Name, splitName(k))
	f.Func().Params(jen.Id("m").Op("*").Id("Model")).Id(chunkName(k, c)).Params(jen.Id("d").Op("*").Id("Dims"), jen.Id("c").Int()).Block(b.stmts...)
}

// body is the statements of a method being emitted, with the locals it has
// declared for tensors.
type body struct {
	gen   *generator
	stmts []jen.Code
	vars  map[*ir.Tensor]string
	local *namer
}

func (gen *generator) newBody() *body {
	return &body{gen: gen, vars: map[*ir.Tensor]string{}, local: newNamer("d", "m", "c", "be")}
}

func (b *body) add(stmts ...jen.Code) { b.stmts = append(b.stmts, stmts...) }

// ref renders a pointer to tensor t: weights and state in place, any other
// tensor through a local declared on its first use.
func (b *body) ref(t *ir.Tensor) jen.Code { return jen.Op("&").Add(b.value(t)) }

// value renders tensor t as ref does, by value.
func (b *body) value(t *ir.Tensor) jen.Code {
	if t.ViewSrc == nil && (t.Alloc.Kind == ir.AllocWeight || t.Alloc.Kind == ir.AllocState) {
		return b.gen.tensor(t)
	}
	if v, ok := b.vars[t]; ok {
		return jen.Id(v)
	}
	v := b.local.local("", t.Name)
	b.vars[t] = v
	b.add(jen.Id(v).Op(":=").Add(b.gen.tensor(t)))
	return jen.Id(v)
}

// nodes adds the statements running nodes [first, end) of split s: each
// op's kernel call and its report to the eval callback, each parallel
// region's run.
func (gen *generator) nodes(b *body, s *ir.Split, first, end int) {
	g := gen.g
	be := jen.Id("m").Dot(gen.beField[s.Backend])
	sched := jen.Id("m").Dot("sched")
	for i := first; i < end; i++ {
		t := g.Nodes[i]
		if r, ok := gen.regionAt[i]; ok {
			b.add(gen.regionCall(r, be.Clone(), gen.beConst[s.Backend])...)
			i = g.Regions[r].End - 1
			continue
		}
		if t.Op.IsView() {
			continue
		}
		if t.Group > 0 {
			gen.group(b, be, s, g.Nodes[i:i+t.Group])
			i += t.Group - 1
			continue
		}
		call := gen.kernel(t, b.ref)
		b.add(
			jen.Add(be.Clone()).Dot(call.method).Call(call.args...).Comment(statement(t)),
			sched.Clone().Dot("Inspect").Call(jen.Id(gen.beConst[s.Backend]), jen.Lit(t.Name), b.value(t)),
		)
	}
}

// group adds the statements running a group of products (group_products)
// on split s's backend: one MulMats call, then each product's report.
func (gen *generator) group(b *body, be jen.Code, s *ir.Split, ms []*ir.Tensor) {
	x := b.ref(ms[0].Src[1])
	args := []jen.Code{x}
	var names []string
	for _, m := range ms {
		args = append(args, jen.Qual(pkgEngine, "Product").Values(field("Dst", b.ref(m)), field("W", b.ref(m.Src[0]))))
		names = append(names, m.Name)
	}
	b.add(jen.Add(be).Dot("MulMats").Call(args...).Comment(strings.Join(names, ", ") + " mul_mat"))
	for _, m := range ms {
		b.add(jen.Id("m").Dot("sched").Dot("Inspect").Call(jen.Id(gen.beConst[s.Backend]), jen.Lit(m.Name), b.value(m)))
	}
}

// statement is node t as the plan prints it, "y = op(a, b)", for the
// comment of its kernel call.
func statement(t *ir.Tensor) string {
	var srcs []string
	for _, s := range t.Src {
		srcs = append(srcs, s.Name)
	}
	return fmt.Sprintf("%s = %s(%s)", t.Name, t.Op, strings.Join(srcs, ", "))
}

// copiesIn describes a split's inputs for its doc comment.
func copiesIn(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return ", after copying in " + names[0]
	}
	return ", after copying in " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

type kernelCall struct {
	method string
	args   []jen.Code
}

func f32(v float32) jen.Code {
	if math.IsInf(float64(v), 0) || math.IsNaN(float64(v)) {
		return jen.Qual("math", "Float32frombits").Call(jen.Lit(int(math.Float32bits(v))))
	}
	return jen.Lit(v)
}

// kernel renders the backend call computing node t, from the op table:
// Kernel(dst, srcs…, params…).
func (gen *generator) kernel(t *ir.Tensor, ref func(*ir.Tensor) jen.Code) kernelCall {
	info := t.Op.Info()
	if info.Kernel == "" {
		panic(fmt.Sprintf("BUG: op %s has no kernel in the op table (ir/ops.go)", t.Op))
	}
	srcs := t.Src
	var dst jen.Code
	if info.Flags&ops.FlagWritesSrc != 0 {
		// The result is the last source itself, declared before what is
		// copied into it.
		dst = ref(t)
		srcs = srcs[:len(srcs)-1]
	}
	var args []jen.Code
	for _, s := range srcs {
		args = append(args, ref(s))
	}
	if dst == nil {
		dst = ref(t)
	}
	for range info.MaxSrcs - len(t.Src) {
		args = append(args, jen.Nil()) // an optional source left out
	}
	if info.Params != nil {
		args = append(args, gen.paramsRef(t))
	}
	return kernelCall{info.Kernel, append([]jen.Code{dst}, args...)}
}
