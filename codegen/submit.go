package codegen

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// submit emits Submit, Pending and Eval.
func (gen *generator) submit(f *jen.File) {
	g := gen.g
	fail := func(err jen.Code) jen.Code { return jen.Return(jen.Nil(), err) }
	var body []jen.Code
	body = append(body,
		jen.If(jen.Id("in").Op("==").Nil()).Block(fail(jen.Qual(pkgEngine, "ErrNoInputs"))),
		jen.Id("d").Op(":=").Op("&").Id("in").Dot("Dims"))
	for _, d := range gen.bounded {
		fd := jen.Id("d").Dot(gen.dimField[d])
		bound, msg := jen.Id(gen.boundConst[d]), fmt.Sprintf("dim %s = %%d is outside [0, %%d]", d.Name)
		if d.AtMost != nil {
			bound, msg = jen.Id("d").Dot(gen.dimField[d.AtMost]), fmt.Sprintf("dim %s = %%d is outside [0, %s = %%d]", d.Name, d.AtMost.Name)
		}
		body = append(body, jen.If(fd.Clone().Op("<").Lit(0).Op("||").Add(fd.Clone()).Op(">").Add(bound)).Block(
			fail(jen.Qual("fmt", "Errorf").Call(jen.Lit(msg), fd.Clone(), bound.Clone())),
		))
	}
	for _, t := range g.Inputs {
		want := gen.expr(t.NElem())
		field := jen.Id("in").Dot(gen.inField[t])
		body = append(body, jen.If(jen.Len(field.Clone()).Op("!=").Add(want)).Block(
			fail(jen.Qual("fmt", "Errorf").Call(jen.Lit(fmt.Sprintf("input %s: got %%d elements, want %%d (%s%s)", t.Name, t.Type, t.ShapeString())), jen.Len(field.Clone()), gen.expr(t.NElem()))),
		))
	}
	body = append(body, gen.indexChecks()...)
	// Views whose extent or alignment depends on the dims must stay inside
	// their source and start and step on whole elements.
	if len(gen.viewChecks) > 0 {
		body = append(body, jen.For(jen.Id("i").Op(":=").Range().Id("viewChecks")).Block(
			jen.List(jen.Id("lo"), jen.Id("hi")).Op(":=").Id("d").Dot("extent").Call(jen.Id("viewChecks").Index(jen.Id("i")).Dot("Extent")),
			jen.If(jen.Err().Op(":=").Id("viewChecks").Index(jen.Id("i")).Dot("Check").Call(jen.Id("lo"), jen.Id("hi"), jen.Id("d")), jen.Err().Op("!=").Nil()).Block(
				fail(jen.Err()),
			),
		))
	}
	for _, v := range gen.viewChecks {
		t := v.t
		unit := t.Type.Size()
		for _, e := range t.ViewUnaligned() {
			var args []jen.Code
			var text []string
			for _, d := range e.Dims(nil) {
				args = append(args, jen.Id("d").Dot(gen.dimField[d]))
				text = append(text, d.Name+" = %d")
			}
			msg := fmt.Sprintf("%s: view %s of %s: %s = %%d is not a multiple of %d bytes, the size of one %s element (%s)", t.Pos, t.Name, t.ViewSrc.Name, e, unit, t.Type, strings.Join(text, ", "))
			body = append(body, jen.If(
				jen.Id("v").Op(":=").Add(gen.expr(e)),
				jen.Id("v").Op("%").Lit(unit).Op("!=").Lit(0),
			).Block(
				fail(jen.Qual("fmt", "Errorf").Call(append([]jen.Code{jen.Lit(msg), jen.Id("v")}, args...)...)),
			))
		}
	}
	// The evaluation proper, on pipeline slot c. User inputs are copied in
	// right away: the caller may reuse its slices.
	var issue []jen.Code
	for _, t := range g.Inputs {
		if !g.InGraph(t) {
			continue
		}
		acc := map[tensor.DType]string{tensor.F32: "F32s", tensor.F16: "F16s", tensor.I32: "I32s"}[t.Type]
		v := gen.names.local("", t.Name)
		issue = append(issue,
			jen.Id(v).Op(":=").Add(gen.tensor(t)),
			jen.Copy(jen.Id(v).Dot(acc).Call(), jen.Id("in").Dot(gen.inField[t])),
		)
	}
	for k := range g.Splits {
		issue = append(issue, jen.Id("m").Dot(splitName(k)).Call(jen.Id("d"), jen.Id("c")))
	}
	if len(g.Splits) == 0 {
		issue = append(issue, jen.List(jen.Id("_"), jen.Id("_")).Op("=").List(jen.Id("d"), jen.Id("c")))
	}
	issue = append(issue, jen.Id("out").Op(":=").Op("&").Id("Outputs").Values())
	if len(g.Outputs) > 0 {
		issue = append(issue,
			jen.Id("reuse").Op(":=").Id("in").Dot("Reuse"),
			jen.If(jen.Id("reuse").Op("==").Nil()).Block(jen.Id("reuse").Op("=").Op("&").Id("Outputs").Values()),
		)
	}
	for _, t := range g.Outputs {
		v := gen.names.local("", t.Name)
		issue = append(issue,
			jen.Id(v).Op(":=").Add(gen.tensor(t)),
			jen.Id("out").Dot(gen.outField[t]).Op("=").Id("m").Dot("sched").Dot("Output").Call(jen.Id(gen.beConst[gen.memBackend(t)]), jen.Op("&").Id(v), jen.Id("reuse").Dot(gen.outField[t]).Dot("Data")),
		)
	}
	issue = append(issue, jen.Return(jen.Id("out")))
	body = append(body, jen.Return(jen.Qual(pkgEngine, "Issue").Call(
		jen.Op("&").Id("m").Dot("driver"),
		jen.Func().Params(jen.Id("c").Int()).Op("*").Id("Outputs").Block(issue...),
	)))
	f.Comment("Submit starts an evaluation: it checks the dims against their bounds, the")
	f.Comment("inputs' lengths and the row indices get_rows reads from them, copies the inputs")
	f.Comment("in (the caller may reuse them once Submit returns) and runs the splits in")
	f.Comment("planned order, queuing the work of asynchronous backends. Wait on the result for")
	f.Comment("the outputs, or a backend's failure. Evaluations run in the order they are")
	f.Comment("submitted and concurrent calls are safe; up to NCopies evaluations are in flight at")
	f.Comment("once (pipeline parallelism). State persists from one evaluation to the next.")
	f.Func().Params(jen.Id("m").Op("*").Id("Model")).Id("Submit").Params(jen.Id("in").Op("*").Id("Inputs")).Params(jen.Op("*").Id("Pending"), jen.Error()).Block(body...)

	f.Comment("Pending is a submitted evaluation: Wait returns its outputs, Done reports without")
	f.Comment("blocking whether it is done.")
	f.Type().Id("Pending").Op("=").Qual(pkgEngine, "Pending").Types(jen.Id("Outputs"))
	f.Comment("Eval runs one evaluation and returns its outputs: Submit, then Wait.")
	f.Func().Params(jen.Id("m").Op("*").Id("Model")).Id("Eval").Params(jen.Id("in").Op("*").Id("Inputs")).Params(jen.Op("*").Id("Outputs"), jen.Error()).Block(
		jen.List(jen.Id("p"), jen.Err()).Op(":=").Id("m").Dot("Submit").Call(jen.Id("in")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
		jen.Return(jen.Id("p").Dot("Wait").Call()),
	)
}

// indexChecks checks, before an evaluation starts, every input that
// get_rows reads as row indices (token ids) against the rows of its table:
// a value out of range is an error naming the input, the element and the
// table, on every backend, instead of a read outside the table.
func (gen *generator) indexChecks() []jen.Code {
	type check struct{ input, table *ir.Tensor }
	var checks []check
	seen := map[check]bool{}
	for _, t := range gen.g.Nodes {
		if t.Op != ops.GetRows || !gen.g.InGraph(t) {
			continue
		}
		c := check{input: t.Src[1], table: t.Src[0]}
		if c.input.Kind != ir.KindInput || seen[c] {
			continue
		}
		seen[c] = true
		checks = append(checks, c)
	}
	var code []jen.Code
	for _, c := range checks {
		code = append(code, jen.If(
			jen.Err().Op(":=").Qual(pkgEngine, "CheckIndices").Call(jen.Lit(c.input.Name), jen.Lit(c.table.Name),
				jen.Id("in").Dot(gen.inField[c.input]), gen.expr(c.table.Ne[1])),
			jen.Err().Op("!=").Nil(),
		).Block(jen.Return(jen.Nil(), jen.Err())))
	}
	return code
}

// viewCheck is one view Submit checks: its row in viewChecks.
type viewCheck struct {
	t      *ir.Tensor
	extent int
}

// collectViewChecks lists the views whose bytes depend on the dims, and
// the distinct byte ranges they cover.
func (gen *generator) collectViewChecks() {
	index := map[string]int{}
	for _, t := range gen.g.Nodes {
		if t.ViewSrc == nil || !gen.g.InGraph(t) || !t.ViewNeedsEvalCheck() {
			continue
		}
		lo, hi := t.ViewOffs, ir.Add(t.ViewOffs, t.Bytes())
		key := lo.String() + " " + hi.String()
		k, ok := index[key]
		if !ok {
			k = len(gen.extents)
			index[key] = k
			gen.extents = append(gen.extents, [2]*ir.Expr{lo, hi})
		}
		gen.viewChecks = append(gen.viewChecks, viewCheck{t, k})
	}
}

// views emits the table of checked views, the Dims method computing
// their extents, and the Dims' String the checks' errors print.
func (gen *generator) views(f *jen.File) {
	var dimText []string
	var dimArgs []jen.Code
	for _, d := range gen.bounded {
		dimText = append(dimText, d.Name+" = %d")
		dimArgs = append(dimArgs, jen.Id("d").Dot(gen.dimField[d]))
	}
	if len(gen.bounded) > 0 {
		f.Comment("String prints the dims' values, as errors name them.")
		f.Func().Params(jen.Id("d").Op("*").Id("Dims")).Id("String").Params().String().Block(
			jen.Return(jen.Qual("fmt", "Sprintf").Call(append([]jen.Code{jen.Lit(strings.Join(dimText, ", "))}, dimArgs...)...)),
		)
	}
	if len(gen.viewChecks) == 0 {
		return
	}
	var rows []jen.Code
	for _, v := range gen.viewChecks {
		t := v.t
		rows = append(rows, jen.Values(field("Pos", jen.Lit(t.Pos.String())), field("View", jen.Lit(t.Name)), field("Source", jen.Lit(t.ViewSrc.Name)),
			field("Size", jen.Lit(int(t.ViewSrc.MaxBytes()))), field("Extent", jen.Lit(v.extent))))
	}
	f.Comment("viewChecks are the views whose bytes depend on the dims, checked by Submit against their")
	f.Comment("sources' sizes; Extent is the case of Dims.extent covering each.")
	f.Var().Id("viewChecks").Op("=").Index().Qual(pkgEngine, "ViewCheck").Custom(multi, rows...)
	var cases []jen.Code
	for k, e := range gen.extents {
		cases = append(cases, jen.Case(jen.Lit(k)).Block(jen.Return(gen.expr(e[0]), gen.expr(e[1]))))
	}
	cases = append(cases, jen.Default().Block(jen.Panic(jen.Lit("BUG: no such extent"))))
	f.Comment("extent is the byte range [lo, hi) extent k covers at these dims.")
	f.Func().Params(jen.Id("d").Op("*").Id("Dims")).Id("extent").Params(jen.Id("k").Int()).Params(jen.Id("lo"), jen.Id("hi").Int()).Block(
		jen.Switch(jen.Id("k")).Block(cases...),
	)
}
