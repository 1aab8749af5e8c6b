package codegen

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/graphc/graphc/ir"
)

// Parallel regions (ir.Region) become one method each, regionK, that runs
// the region's nodes on the units [lo, hi) with a single-threaded lane of
// the CPU backend, and a regionParts value that the backend's RunParts
// calls once per part.

func regionName(k int) string { return fmt.Sprintf("region%d", k) }

// regionCall renders the statements of a split that run region k, then
// report its nodes to the eval callback, if any: only once every part is
// done are the nodes whole (nothing a region touches is reused before it
// ends). A region of more than maxChunkNodes nodes reports them through
// chunk methods, as a long split runs its nodes.
func (gen *generator) regionCall(k int, be jen.Code, beConst string) []jen.Code {
	g := gen.g
	r := g.Regions[k]
	m := jen.Id("m").Dot("regions")
	out := []jen.Code{
		m.Clone().Op("=").Id("regionParts").Values(field("m", jen.Id("m")), field("d", jen.Op("*").Id("d")), field("c", jen.Id("c")), field("region", jen.Lit(k))),
		jen.Add(be).Dot("RunParts").Call(jen.Op("&").Add(m.Clone()), gen.expr(r.Units)).
			Comment(fmt.Sprintf("%s … %s", g.Nodes[r.First].Name, g.Nodes[r.End-1].Name)),
	}
	chunks := gen.chunks(r.First, r.End, false)
	var show []jen.Code
	if len(chunks) == 1 {
		show = gen.reportRegion(k, r.First, r.End, beConst)
	} else {
		for c := range chunks {
			show = append(show, jen.Id("m").Dot(reportChunkName(k, c)).Call(jen.Id("d"), jen.Id("c")))
		}
	}
	return append(out, jen.If(jen.Id("m").Dot("sched").Dot("Inspecting").Call()).Block(show...))
}

func reportChunkName(k, c int) string { return fmt.Sprintf("report%sChunk%d", camel(regionName(k)), c) }

// reportRegion renders the statements reporting the nodes of region k in
// [first, end) to the eval callback.
func (gen *generator) reportRegion(k, first, end int, beConst string) []jen.Code {
	g := gen.g
	r := g.Regions[k]
	var show []jen.Code
	for _, t := range g.Nodes[first:end] {
		if _, ok := r.Dst[t]; ok {
			show = append(show, jen.Id("m").Dot("sched").Dot("Inspect").Call(jen.Id(beConst), jen.Lit(t.Name), gen.tensor(t)))
		}
	}
	return show
}

// regions emits regionParts and the region methods.
func (gen *generator) regions(f *jen.File) {
	g := gen.g
	if len(g.Regions) == 0 {
		return
	}
	kind := gen.kinds[gen.regionBackend(0)]
	lane := jen.Op("*").Qual(kind.Package, kind.Type)
	f.Comment("regionParts is the parallel region being run: the CPU backend calls RunPart once")
	f.Comment("per part, each on a lane of its own.")
	f.Type().Id("regionParts").Struct(
		jen.Id("m").Op("*").Id("Model"),
		jen.Id("d").Id("Dims"),
		jen.Id("c").Int(),
		jen.Id("region").Int(),
	)
	var methods []jen.Code
	for k := range g.Regions {
		methods = append(methods, jen.Parens(jen.Op("*").Id("Model")).Dot(regionName(k)))
	}
	f.Comment("regionMethods are the regions' methods, by region.")
	f.Var().Id("regionMethods").Op("=").Index().Func().Params(jen.Op("*").Id("Model"), jen.Op("*").Id("Dims"), jen.Int(), lane, jen.Int(), jen.Int()).Add(wrapped(methods))
	f.Comment("RunPart runs units [lo, hi) of the region on be.")
	f.Func().Params(jen.Id("p").Op("*").Id("regionParts")).Id("RunPart").Params(jen.Id("be").Add(lane), jen.List(jen.Id("lo"), jen.Id("hi")).Int()).Block(
		jen.Id("regionMethods").Index(jen.Id("p").Dot("region")).Call(jen.Id("p").Dot("m"), jen.Op("&").Id("p").Dot("d"), jen.Id("p").Dot("c"), jen.Id("be"), jen.Id("lo"), jen.Id("hi")),
	)
	for k := range g.Regions {
		gen.region(f, k, lane)
	}
}

// regionBackend is the backend of the split holding region k.
func (gen *generator) regionBackend(k int) int {
	r := gen.g.Regions[k]
	for _, s := range gen.g.Splits {
		if s.First <= r.First && r.End <= s.End {
			return s.Backend
		}
	}
	panic(fmt.Sprintf("BUG: region %d [%d, %d) is in no split", k, r.First, r.End))
}

type sliceKey struct {
	t *ir.Tensor
	s ir.Slice
}

func regionChunkName(k, c int) string { return fmt.Sprintf("%sChunk%d", regionName(k), c) }

// region emits the method computing part [lo, hi) of region k; a region of
// more than maxChunkNodes nodes computes them through chunk methods, called
// in order, and reports them through others (regionCall).
func (gen *generator) region(f *jen.File, k int, lane jen.Code) {
	g := gen.g
	r := g.Regions[k]
	params := []jen.Code{jen.Id("d").Op("*").Id("Dims"), jen.Id("c").Int(), jen.Id("be").Add(lane), jen.List(jen.Id("lo"), jen.Id("hi")).Int()}
	chunks := gen.chunks(r.First, r.End, false)
	var body []jen.Code
	if len(chunks) == 1 {
		body = gen.regionNodes(k, r.First, r.End)
	} else {
		for c := range chunks {
			body = append(body, jen.Id("m").Dot(regionChunkName(k, c)).Call(jen.Id("d"), jen.Id("c"), jen.Id("be"), jen.Id("lo"), jen.Id("hi")))
		}
	}
	f.Commentf("%s runs units [lo, hi) of %s of nodes %d..%d (%s … %s): a parallel region, one part per thread.",
		regionName(k), r.Units, r.First, r.End-1, g.Nodes[r.First].Name, g.Nodes[r.End-1].Name)
	f.Func().Params(jen.Id("m").Op("*").Id("Model")).Id(regionName(k)).Params(params...).Block(body...)
	if len(chunks) == 1 {
		return
	}
	be := gen.beConst[gen.regionBackend(k)]
	for c, ch := range chunks {
		f.Commentf("%s runs units [lo, hi) of nodes %d..%d (%s … %s) of %s.",
			regionChunkName(k, c), ch.first, ch.end-1, g.Nodes[ch.first].Name, g.Nodes[ch.end-1].Name, regionName(k))
		f.Func().Params(jen.Id("m").Op("*").Id("Model")).Id(regionChunkName(k, c)).Params(params...).Block(gen.regionNodes(k, ch.first, ch.end)...)
	}
	for c, ch := range chunks {
		f.Commentf("%s reports nodes %d..%d (%s … %s) of %s to the eval callback.",
			reportChunkName(k, c), ch.first, ch.end-1, g.Nodes[ch.first].Name, g.Nodes[ch.end-1].Name, regionName(k))
		f.Func().Params(jen.Id("m").Op("*").Id("Model")).Id(reportChunkName(k, c)).Params(jen.Id("d").Op("*").Id("Dims"), jen.Id("c").Int()).
			Block(gen.reportRegion(k, ch.first, ch.end, be)...)
	}
}

// regionNodes renders the kernel calls computing part [lo, hi) of the
// nodes of region k in [first, end).
func (gen *generator) regionNodes(k, first, end int) []jen.Code {
	g := gen.g
	r := g.Regions[k]
	vars := map[sliceKey]string{}
	local := newNamer("d", "m", "c", "be", "lo", "hi")
	var body []jen.Code
	ref := func(t *ir.Tensor, s ir.Slice) jen.Code {
		if s.IsWhole() && t.ViewSrc == nil && (t.Alloc.Kind == ir.AllocWeight || t.Alloc.Kind == ir.AllocState) {
			return jen.Op("&").Add(gen.tensor(t))
		}
		key := sliceKey{t, s}
		if v, ok := vars[key]; ok {
			return jen.Op("&").Id(v)
		}
		v := local.local("", t.Name)
		vars[key] = v
		body = append(body, jen.Id(v).Op(":=").Add(gen.slice(t, s)))
		return jen.Op("&").Id(v)
	}
	for _, t := range g.Nodes[first:end] {
		d, ok := r.Dst[t]
		if !ok {
			continue
		}
		srcs := r.Src[t]
		call := gen.kernel(t, func(x *ir.Tensor) jen.Code {
			if x == t {
				return ref(t, d)
			}
			for i, s := range t.Src {
				if s == x {
					return ref(x, srcs[i])
				}
			}
			panic(fmt.Sprintf("BUG: node %s has no source %s", t.Name, x.Name))
		})
		body = append(body, jen.Id("be").Dot(call.method).Call(call.args...).Comment(fmt.Sprintf("%s, part %s", statement(t), d)))
	}
	return body
}

// slice renders an expression of type tensor.Tensor for the part of t
// that units [lo, hi) cover under s.
func (gen *generator) slice(t *ir.Tensor, s ir.Slice) jen.Code {
	if s.IsWhole() {
		return gen.tensor(t)
	}
	buf, off := gen.loc(t)
	step := ir.Mul(ir.Const(s.Per), t.Nb[s.Axis])
	var shift jen.Code = jen.Id("lo").Op("*").Add(gen.expr(step))
	if _, ok := step.Constant(); !ok {
		shift = jen.Id("lo").Op("*").Parens(gen.expr(step))
	}
	if t.ViewSrc == nil && t.Alloc.Kind != ir.AllocCompute {
		off = shift // a weight or state from its first byte
	} else {
		off = jen.Add(off).Op("+").Add(shift)
	}
	var ne []jen.Code
	for k, e := range t.Ne {
		switch {
		case k != s.Axis:
			ne = append(ne, gen.expr(e))
		case s.Per == 1:
			ne = append(ne, jen.Id("hi").Op("-").Id("lo"))
		default:
			ne = append(ne, jen.Parens(jen.Id("hi").Op("-").Id("lo")).Op("*").Lit(int(s.Per)))
		}
	}
	shape := jen.Index(jen.Lit(4)).Int().Values(ne...)
	if dense(t.Type, t.Ne, t.Nb, s.Axis+1) {
		// The part is contiguous too: only dims of one element follow
		// the cut.
		return jen.Qual(pkgTensor, "Dense").Call(buf, off, dtypeCode(t.Type), shape)
	}
	return jen.Qual(pkgTensor, "At").Call(buf, off, dtypeCode(t.Type), shape, gen.shape(t.Nb, nil))
}
