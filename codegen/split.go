package codegen

import (
	"fmt"
	"math"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/graphc/graphc/ir"
)

func splitName(k int) string { return fmt.Sprintf("split%d", k) }

// split emits one method running split k: its input copies, then its ops,
// each computed node reported to the eval callback.
func (gen *generator) split(f *jen.File, k int) {
	g := gen.g
	s := g.Splits[k]
	be := jen.Id("m").Dot(gen.beField[s.Backend])
	vars := map[*ir.Tensor]string{}
	local := newNamer("d", "m", "c", "be")
	var body []jen.Code
	ref := func(t *ir.Tensor) jen.Code {
		if t.ViewSrc == nil && (t.Alloc.Kind == ir.AllocWeight || t.Alloc.Kind == ir.AllocState) {
			return jen.Op("&").Add(gen.tensor(t))
		}
		if v, ok := vars[t]; ok {
			return jen.Op("&").Id(v)
		}
		v := local.local("", t.Name)
		vars[t] = v
		body = append(body, jen.Id(v).Op(":=").Add(gen.tensor(t)))
		return jen.Op("&").Id(v)
	}
	sched := jen.Id("m").Dot("sched")
	body = append(body, sched.Clone().Dot("BeginSplit").Call(jen.Lit(k)))
	var names []string
	for _, in := range s.Inputs {
		from := gen.memBackend(in.Tensor)
		dst := ref(in.Copies[0])
		src := ref(in.Tensor)
		user := in.Tensor.Kind == ir.KindInput
		body = append(body, sched.Clone().Dot("CopyInput").Call(jen.Lit(k), jen.Id(gen.beConst[from]), dst, src, jen.Lit(user)).
			Comment(fmt.Sprintf("%s: %d bytes from %s", in.Tensor.Name, in.Tensor.MaxBytes(), g.Backends[from].Name)))
		names = append(names, in.Tensor.Name)
	}
	body = append(body, sched.Clone().Dot("Compute").Call(jen.Lit(k)))
	regionAt := map[int]int{}
	for i, r := range g.Regions {
		regionAt[r.First] = i
	}
	for i := s.First; i < s.End; i++ {
		t := g.Nodes[i]
		if r, ok := regionAt[i]; ok {
			body = append(body, gen.regionCall(r, be.Clone(), gen.beConst[s.Backend])...)
			i = g.Regions[r].End - 1
			continue
		}
		if t.Op.IsView() {
			continue
		}
		call := gen.kernel(t, ref)
		body = append(body,
			jen.Add(be.Clone()).Dot(call.method).Call(call.args...).Comment(fmt.Sprintf("%s %s", t.Name, t.Op)),
			sched.Clone().Dot("Inspect").Call(jen.Id(gen.beConst[s.Backend]), jen.Lit(t.Name), ref(t)),
		)
	}
	body = append(body, sched.Clone().Dot("EndSplit").Call(jen.Lit(k)))
	f.Commentf("%s runs nodes %d..%d (%s … %s) on %s%s.", splitName(k), s.First, s.End-1, g.Nodes[s.First].Name, g.Nodes[s.End-1].Name, g.Backends[s.Backend].Name, copiesIn(names))
	f.Func().Params(jen.Id("m").Op("*").Id("Model")).Id(splitName(k)).Params(jen.Id("d").Op("*").Id("Dims"), jen.Id("c").Int()).Block(body...)
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
	if info.Flags&ir.FlagWritesSrc != 0 {
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
	for _, p := range info.Params {
		args = append(args, param(p, &t.Params))
	}
	return kernelCall{info.Kernel, append([]jen.Code{dst}, args...)}
}

// param renders scalar operand p as its kernel argument.
func param(p ir.Param, params *ir.Params) jen.Code {
	switch p.Field {
	case ir.ParamEps:
		return f32(params.Eps)
	case ir.ParamScale:
		return f32(params.Scale)
	case ir.ParamMaxBias:
		return f32(params.MaxBias)
	case ir.ParamRope:
		r := params.Rope
		return jen.Qual(pkgRuntime, "RopeParams").Values(jen.Dict{
			jen.Id("NDims"):      jen.Lit(r.NDims),
			jen.Id("Mode"):       jen.Lit(r.Mode),
			jen.Id("NCtxOrig"):   jen.Lit(r.NCtxOrig),
			jen.Id("FreqBase"):   f32(r.FreqBase),
			jen.Id("FreqScale"):  f32(r.FreqScale),
			jen.Id("ExtFactor"):  f32(r.ExtFactor),
			jen.Id("AttnFactor"): f32(r.AttnFactor),
			jen.Id("BetaFast"):   f32(r.BetaFast),
			jen.Id("BetaSlow"):   f32(r.BetaSlow),
		})
	}
	panic(fmt.Sprintf("BUG: parameter %s: field %d has no kernel-argument form in param (codegen/split.go)", p.Key, p.Field))
}
