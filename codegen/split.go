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

// kernel renders the backend call computing node t.
func (gen *generator) kernel(t *ir.Tensor, ref func(*ir.Tensor) jen.Code) kernelCall {
	if t.Op == ir.OpCpy {
		// The result is the destination view itself: copy a into it.
		dst := ref(t)
		return kernelCall{"Cpy", []jen.Code{dst, ref(t.Src[0])}}
	}
	var args []jen.Code
	for _, s := range t.Src {
		args = append(args, ref(s))
	}
	dst := ref(t)
	all := append([]jen.Code{dst}, args...)
	p := t.Params
	switch t.Op {
	case ir.OpGetRows:
		return kernelCall{"GetRows", all}
	case ir.OpMulMat:
		return kernelCall{"MulMat", all}
	case ir.OpAdd:
		return kernelCall{"Add", all}
	case ir.OpSub:
		return kernelCall{"Sub", all}
	case ir.OpMul:
		return kernelCall{"Mul", all}
	case ir.OpDiv:
		return kernelCall{"Div", all}
	case ir.OpScale:
		return kernelCall{"Scale", append(all, f32(p.Scale))}
	case ir.OpRelu:
		return kernelCall{"Relu", all}
	case ir.OpGelu:
		return kernelCall{"Gelu", all}
	case ir.OpSilu:
		return kernelCall{"Silu", all}
	case ir.OpRMSNorm:
		return kernelCall{"RMSNorm", append(all, f32(p.Eps))}
	case ir.OpNorm:
		return kernelCall{"Norm", append(all, f32(p.Eps))}
	case ir.OpSoftMax:
		if len(t.Src) == 1 {
			all = append(all, jen.Nil())
		}
		return kernelCall{"SoftMax", append(all, f32(p.Scale), f32(p.MaxBias))}
	case ir.OpRope:
		r := p.Rope
		return kernelCall{"Rope", append(all, jen.Qual(pkgRuntime, "RopeParams").Values(jen.Dict{
			jen.Id("NDims"):      jen.Lit(r.NDims),
			jen.Id("Mode"):       jen.Lit(r.Mode),
			jen.Id("NCtxOrig"):   jen.Lit(r.NCtxOrig),
			jen.Id("FreqBase"):   f32(r.FreqBase),
			jen.Id("FreqScale"):  f32(r.FreqScale),
			jen.Id("ExtFactor"):  f32(r.ExtFactor),
			jen.Id("AttnFactor"): f32(r.AttnFactor),
			jen.Id("BetaFast"):   f32(r.BetaFast),
			jen.Id("BetaSlow"):   f32(r.BetaSlow),
		}))}
	case ir.OpCont:
		return kernelCall{"Cpy", all}
	}
	panic(fmt.Sprintf("BUG: no kernel for op %s", t.Op))
}
