package codegen

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/tensor"
)

func (gen *generator) types(f *jen.File) {
	var dimFields []jen.Code
	for _, d := range gen.bounded {
		dimFields = append(dimFields, jen.Id(gen.dimField[d]).Int().Comment(fmt.Sprintf("%s, at most %s", d.Name, boundText(d))))
	}
	f.Comment("Dims are the bounded dims' values for one evaluation.")
	f.Type().Id("Dims").Struct(dimFields...)

	f.Comment("Inputs are one evaluation's inputs, flat in ggml order (ne[0] fastest).")
	inFields := []jen.Code{jen.Id("Dims")}
	for _, t := range gen.g.Inputs {
		inFields = append(inFields, jen.Id(gen.inField[t]).Index().Add(elemType(t.Type)).Comment(fmt.Sprintf("%s: %s%s", t.Name, t.Type, t.ShapeString())))
	}
	if len(gen.g.Outputs) > 0 {
		inFields = append(inFields,
			jen.Comment("Reuse, where not nil, is earlier outputs the caller no longer reads: this"),
			jen.Comment("evaluation's outputs take their memory where it is large enough."),
			jen.Id("Reuse").Op("*").Id("Outputs"))
	}
	f.Type().Id("Inputs").Struct(inFields...)

	f.Comment("Outputs are one evaluation's results; they own their memory.")
	var outFields []jen.Code
	for _, t := range gen.g.Outputs {
		outFields = append(outFields, jen.Id(gen.outField[t]).Qual(pkgTensor, "Tensor").Comment(fmt.Sprintf("%s: %s%s", t.Name, t.Type, t.ShapeString())))
	}
	f.Type().Id("Outputs").Struct(outFields...)

	// Named returns the outputs with their tensor names, in declaration order.
	var named []jen.Code
	for _, t := range gen.g.Outputs {
		named = append(named, jen.Values(jen.Dict{jen.Id("Name"): jen.Lit(t.Name), jen.Id("Tensor"): jen.Id("o").Dot(gen.outField[t])}))
	}
	f.Comment("Named lists the outputs with their names, in declaration order.")
	f.Func().Params(jen.Id("o").Op("*").Id("Outputs")).Id("Named").Params().Index().Qual(pkgEngine, "Named").Block(
		jen.Return(jen.Index().Qual(pkgEngine, "Named").Values(named...)),
	)
}

// boundText is what a bounded dim is at most: its bound, or the dim
// bounding it and that one's bound.
func boundText(d *ir.Dim) string {
	if d.AtMost != nil {
		return fmt.Sprintf("%s (%d)", d.AtMost.Name, d.Bound)
	}
	return fmt.Sprint(d.Bound)
}

func elemType(t tensor.DType) jen.Code {
	switch t {
	case tensor.F32:
		return jen.Float32()
	case tensor.F16:
		return jen.Uint16()
	case tensor.I32:
		return jen.Int32()
	}
	panic("BUG: elemType " + t.String())
}

func dtypeCode(t tensor.DType) jen.Code { return jen.Qual(pkgTensor, strings.ToUpper(t.String())) }

var multi = jen.Options{Open: "{", Close: "}", Separator: ",", Multi: true}

func (gen *generator) decls(f *jen.File) {
	declList := func(ts []*ir.Tensor) []jen.Code {
		var vals []jen.Code
		for _, t := range ts {
			vals = append(vals, jen.Values(field("Name", jen.Lit(t.Name)), field("Type", dtypeCode(t.Type)), field("Ne", gen.shape(t.Ne, nil))))
		}
		return vals
	}
	f.Comment("Weights are the weights New expects, in declaration order.")
	f.Var().Id("Weights").Op("=").Index().Qual(pkgTensor, "Decl").Custom(multi, declList(gen.weights)...)
	if len(gen.g.Meta) > 0 {
		var metas []jen.Code
		for _, m := range gen.g.Meta {
			fields := []jen.Code{field("Key", jen.Lit(m.Key)), field("Value", jen.Lit(m.Value))}
			if m.Default {
				fields = append(fields, field("Default", jen.True()))
			}
			metas = append(metas, jen.Values(fields...))
		}
		f.Comment("Meta are the weights-file metadata values the model was compiled for; a file's are checked")
		f.Comment("against them (gguf's CheckMeta) before its weights are used.")
		f.Var().Id("Meta").Op("=").Index().Qual(pkgTensor, "Meta").Custom(multi, metas...)
	}
	f.Comment("States are the persistent tensors the model keeps across evaluations, in declaration order.")
	f.Var().Id("States").Op("=").Index().Qual(pkgTensor, "Decl").Custom(multi, declList(gen.states)...)
	var idx []jen.Code
	for _, t := range gen.states {
		idx = append(idx, jen.Id(gen.paramConst[t]).Op("=").Lit(gen.paramIndex[t]).Comment(t.Name))
	}
	if len(idx) > 0 {
		f.Comment("Indexes of the state in States. The code indexes weights by their place in Weights,")
		f.Comment("and each kernel call's comment names its operands.")
		f.Const().Defs(idx...)
	}
	placed := func(ts []*ir.Tensor) []jen.Code {
		var vals []jen.Code
		for _, t := range ts {
			vals = append(vals, jen.Id(gen.beConst[gen.g.PlacedBackend(t)]))
		}
		return vals
	}
	for k, be := range gen.g.Backends {
		if gen.packedVar[k] == "" {
			continue
		}
		ws, n := gen.g.PackedWeights(k)
		var vals []jen.Code
		for _, t := range ws {
			what := fmt.Sprintf("%s %s%s: %d bytes packed", t.Name, t.Type, t.ShapeString(), t.Packed.Bytes)
			if !t.Packed.Release {
				what += ", read as loaded by other ops too"
			}
			// jen writes a list's separators after each item's comment:
			// the comma is written by hand, before it.
			vals = append(vals, jen.Values(gen.paramRef(t), jen.Lit(t.Packed.Release)).Op(",").Comment(what))
		}
		f.Comment(fmt.Sprintf("%s are the weights whose packed copy %s's matrix products read (Pack, ggml's", gen.packedVar[k], be.Name))
		f.Comment(fmt.Sprintf("CPU_REPACK), made once by New: %d bytes beside the weights. Other ops read the weights;", n))
		f.Comment("a weight only its copy reads, or get_rows besides, is released once packed (release).")
		f.Var().Id(gen.packedVar[k]).Op("=").Index().Struct(
			jen.Id("weight").Int(),
			jen.Id("release").Bool(),
		).Custom(jen.Options{Open: "{", Close: "}", Multi: true}, vals...)
	}
	f.Comment("weightBackend and stateBackend are the backends whose memory holds each weight and")
	f.Comment("state tensor, in declaration order.")
	f.Var().Defs(
		jen.Id("weightBackend").Op("=").Index().Int().Add(wrapped(placed(gen.weights))),
		jen.Id("stateBackend").Op("=").Index().Int().Add(wrapped(placed(gen.states))),
	)
}

// plan emits the plan's description for the scheduler: the buffer types
// the plan was made for and the splits.
func (gen *generator) plan(f *jen.File) {
	g := gen.g
	var bts []jen.Code
	for _, be := range g.Backends {
		bts = append(bts, jen.Values(jen.Dict{
			jen.Id("Name"):      jen.Lit(be.BufferType),
			jen.Id("Host"):      jen.Lit(be.Host),
			jen.Id("Alignment"): jen.Lit(int(max(be.Alignment, 1))),
		}))
	}
	f.Comment("bufferTypes are the memory the plan was made for on each backend, in target order;")
	f.Comment("New checks the backends it gets against them.")
	f.Var().Id("bufferTypes").Op("=").Index().Qual(pkgBackend, "BufferType").Custom(multi, bts...)
	var sps []jen.Code
	for _, s := range g.Splits {
		nodes := 0
		for _, t := range g.Nodes[s.First:s.End] {
			if !t.Op.IsView() {
				nodes++
			}
		}
		info := jen.Dict{
			jen.Id("Backend"): jen.Id(gen.beConst[s.Backend]),
			jen.Id("Inputs"):  jen.Lit(len(s.Inputs)),
			jen.Id("Nodes"):   jen.Lit(nodes),
			jen.Id("First"):   jen.Lit(g.Nodes[s.First].Name),
			jen.Id("Last"):    jen.Lit(g.Nodes[s.End-1].Name),
		}
		if s.EstimateNs != 0 {
			info[jen.Id("Estimate")] = jen.Lit(int(s.EstimateNs)) // ns
		}
		sps = append(sps, jen.Values(info))
	}
	f.Comment("splits are the plan's splits in order, for the scheduler.")
	f.Var().Id("splits").Op("=").Index().Qual(pkgEngine, "SplitInfo").Custom(multi, sps...)
	gen.opTables(f)
}

// opTables emits, for each backend that checks its ops when New opens
// it, the distinct ops the plan gives it: each node's op, result and
// sources (type, shape and strides) at the dims' bounds, so that the
// device is asked about the largest shapes the plan runs.
func (gen *generator) opTables(f *jen.File) {
	g := gen.g
	for k, be := range g.Backends {
		if gen.opsVar[k] == "" {
			continue
		}
		var rows []jen.Code
		seen := map[string]bool{}
		for _, s := range g.Splits {
			if s.Backend != k {
				continue
			}
			for _, t := range g.Nodes[s.First:s.End] {
				if t.Op.IsView() {
					continue
				}
				key := fmt.Sprint(t.Op, t.Type, atBounds(t.Ne))
				var srcs []jen.Code
				for _, src := range t.Src {
					ne, nb := atBounds(src.Ne), atBounds(src.Nb)
					key += fmt.Sprint(src.Type, ne, nb)
					fields := []jen.Code{field("Type", dtypeCode(src.Type)), field("Ne", int64s(ne))}
					if src.Contiguous() {
						fields = append(fields, field("Contiguous", jen.True()))
					} else {
						fields = append(fields, field("Nb", int64s(nb)))
					}
					srcs = append(srcs, jen.Values(fields...))
				}
				if seen[key] {
					continue
				}
				seen[key] = true
				rows = append(rows, jen.Values(
					field("Op", jen.Qual(pkgOps, t.Op.GoName())),
					field("Type", dtypeCode(t.Type)),
					field("Ne", int64s(atBounds(t.Ne))),
					field("Src", jen.Index().Qual(pkgBackend, "OpSrc").Values(srcs...)),
				))
			}
		}
		f.Commentf("%s are the distinct ops the plan runs on %s, at the dims' bounds: New asks the", gen.opsVar[k], be.Name)
		f.Comment("device about each, so that one it cannot run stops the program before any work.")
		f.Var().Id(gen.opsVar[k]).Op("=").Index().Qual(pkgBackend, "OpQuery").Custom(multi, rows...)
	}
}

// field is one keyed element of a composite literal, kept on one line
// (jen.Dict sorts its keys and breaks the lines).
func field(name string, v jen.Code) jen.Code { return jen.Id(name).Op(":").Add(v) }

// wrapped is a composite literal's values, as many to a line as fit in
// about 100 columns.
func wrapped(vals []jen.Code) jen.Code {
	const width = 100
	var lines []jen.Code
	var line []jen.Code
	n := 0
	for _, v := range vals {
		w := len(fmt.Sprintf("%#v", v)) + 2
		if len(line) > 0 && n+w > width {
			lines = append(lines, jen.List(line...))
			line, n = nil, 0
		}
		line, n = append(line, v), n+w
	}
	if len(line) > 0 {
		lines = append(lines, jen.List(line...))
	}
	if len(lines) <= 1 {
		return jen.Values(vals...)
	}
	return jen.Custom(multi, lines...)
}

func atBounds(ne [4]*ir.Expr) [4]int64 {
	var out [4]int64
	for i, e := range ne {
		out[i] = e.AtBounds()
	}
	return out
}

func int64s(v [4]int64) jen.Code {
	return jen.Index(jen.Lit(4)).Int64().Values(jen.Lit(int(v[0])), jen.Lit(int(v[1])), jen.Lit(int(v[2])), jen.Lit(int(v[3])))
}

// shape renders ne (or nb) as a [4]int literal over the dims in d.
func (gen *generator) shape(ne [4]*ir.Expr, d jen.Code) jen.Code {
	var vals []jen.Code
	for _, e := range ne {
		vals = append(vals, gen.expr(e))
	}
	return jen.Index(jen.Lit(4)).Int().Values(vals...)
}

// expr renders a size expression over the evaluation's dims, d.Field.
func (gen *generator) expr(e *ir.Expr) jen.Code {
	if _, ok := e.Constant(); !ok {
		gen.dimsUsed = true
	}
	return jen.Id(e.Format(func(dim *ir.Dim) string { return "d." + gen.dimField[dim] }))
}
