package codegen

import (
	"fmt"
	"math"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/tensor"
)

// main emits a runnable main: weights filled by the ggml traces' rule or
// loaded from a GGUF file, state filled by the rule in both cases (a GGUF
// file holds no state, and with the rule's weights the two runs agree bit
// for bit), inputs by their fill expressions, one evaluation, outputs
// printed. A language model's main first takes runtime/lm/lmcli's
// commands (generate, chat, serve).
func (gen *generator) main(f *jen.File) {
	g := gen.g
	flags := []jen.Code{
		jen.Id("asJSON").Op(":=").Qual("flag", "Bool").Call(jen.Lit("json"), jen.False(), jen.Lit(`print the outputs as JSON: {"outputs":[{"name", "shape", "values"}]}`)),
		jen.Id("threads").Op(":=").Qual("flag", "Int").Call(jen.Lit("threads"), jen.Lit(0), jen.Lit("worker threads (0: every core)")),
		jen.Id("stats").Op(":=").Qual("flag", "Bool").Call(jen.Lit("stats"), jen.False(), jen.Lit("print the evaluation's statistics (per split time, bytes copied) to stderr")),
		jen.Id("weightsFile").Op(":=").Qual("flag", "String").Call(jen.Lit("weights"), jen.Lit(""), jen.Lit("load the weights from this GGUF file, by mmap, instead of filling them (state is filled either way)")),
		jen.Id("allowUnused").Op(":=").Qual("flag", "Bool").Call(jen.Lit("allow-unused"), jen.False(), jen.Lit("load a -weights file even though the model does not read all of its tensors")),
	}
	// Kinds that need a word from the run (rpc: where its servers are)
	// take it from a flag of their own.
	var kindFlags []jen.Code
	seenFlag := map[string]bool{}
	for _, k := range gen.kinds {
		if k.Flag == "" || seenFlag[k.Flag] {
			continue
		}
		seenFlag[k.Flag] = true
		v := "flag" + strings.ToUpper(k.Flag[:1]) + k.Flag[1:]
		flags = append(flags, jen.Id(v).Op(":=").Qual("flag", "String").Call(jen.Lit(k.Flag), jen.Lit(""), jen.Lit(k.FlagUsage)))
		kindFlags = append(kindFlags, jen.If(jen.Op("*").Id(v).Op("!=").Lit("")).Block(
			jen.If(jen.Err().Op(":=").Qual(k.Package, k.FlagSet).Call(jen.Op("*").Id(v)), jen.Err().Op("!=").Nil()).Block(
				jen.Qual("fmt", "Fprintln").Call(jen.Qual("os", "Stderr"), jen.Err()),
				jen.Qual("os", "Exit").Call(jen.Lit(2)),
			),
		))
	}
	dims := jen.Dict{}
	// A dim bounded by another defaults to that one's value, as the
	// others default to their bounds.
	var dimDefaults []jen.Code
	for _, d := range gen.bounded {
		v := "dim" + gen.dimField[d]
		if d.AtMost != nil {
			flags = append(flags, jen.Id(v).Op(":=").Qual("flag", "Int").Call(jen.Lit(d.Name), jen.Lit(0), jen.Lit(fmt.Sprintf("value of the bounded dim %s (at most %s; default: %s's value)", d.Name, d.AtMost.Name, d.AtMost.Name))))
			dimDefaults = append(dimDefaults, jen.If(jen.Op("!").Qual(pkgMainutil, "FlagGiven").Call(jen.Lit(d.Name))).Block(
				jen.Id("d").Dot(gen.dimField[d]).Op("=").Id("d").Dot(gen.dimField[d.AtMost]),
			))
		} else {
			flags = append(flags, jen.Id(v).Op(":=").Qual("flag", "Int").Call(jen.Lit(d.Name), jen.Id(gen.boundConst[d]), jen.Lit(fmt.Sprintf("value of the bounded dim %s (at most %d)", d.Name, d.Bound))))
		}
		dims[jen.Id(gen.dimField[d])] = jen.Op("*").Id(v)
	}
	flags = append(flags, jen.Qual("flag", "Parse").Call())
	mainBody := append(append([]jen.Code{gen.lmCommands()}, flags...), kindFlags...)
	mainBody = append(mainBody, jen.Id("d").Op(":=").Id("Dims").Values(dims))
	mainBody = append(mainBody, dimDefaults...)
	f.Func().Id("main").Params().Block(append(mainBody,
		jen.If(jen.Err().Op(":=").Id("run").Call(jen.Op("*").Id("weightsFile"), jen.Op("*").Id("allowUnused"), jen.Op("*").Id("asJSON"), jen.Op("*").Id("threads"), jen.Op("*").Id("stats"), jen.Id("d")), jen.Err().Op("!=").Nil()).Block(
			jen.Qual("fmt", "Fprintln").Call(jen.Qual("os", "Stderr"), jen.Err()),
			jen.Qual("os", "Exit").Call(jen.Lit(1)),
		),
	)...)

	var wFill, sFill []jen.Code
	for k, t := range g.Params {
		if t.Kind == ir.KindWeight {
			wFill = append(wFill, jen.Lit(k))
		} else {
			sFill = append(sFill, jen.Lit(k))
		}
	}
	f.Comment("fillIndex is each weight's and state's place in declaration order: the k of the ggml fill rule.")
	f.Var().Defs(
		jen.Id("weightFillIndex").Op("=").Index().Int().Values(wFill...),
		jen.Id("stateFillIndex").Op("=").Index().Int().Values(sFill...),
	)

	checkMeta := jen.Null()
	if len(g.Meta) > 0 {
		checkMeta = jen.If(jen.Err().Op(":=").Id("f").Dot("CheckMeta").Call(jen.Id("Meta")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err()))
	}
	body := []jen.Code{
		jen.Var().Id("weights").Map(jen.String()).Qual(pkgTensor, "Tensor"),
		jen.If(jen.Id("weightsFile").Op("!=").Lit("")).Block(
			jen.List(jen.Id("f"), jen.Err()).Op(":=").Qual(pkgGGUF, "Open").Call(jen.Id("weightsFile")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
			jen.Defer().Id("f").Dot("Close").Call(),
			checkMeta,
			jen.Var().Id("opts").Index().Qual(pkgGGUF, "WeightsOption"),
			jen.If(jen.Id("allowUnused")).Block(
				jen.Id("opts").Op("=").Append(jen.Id("opts"), jen.Qual(pkgGGUF, "AllowUnused")),
				jen.If(jen.Id("u").Op(":=").Id("f").Dot("Unused").Call(jen.Id("Weights")), jen.Len(jen.Id("u")).Op(">").Lit(0)).Block(
					jen.Qual("fmt", "Fprintf").Call(jen.Qual("os", "Stderr"), jen.Lit("-allow-unused: ignoring them: %s\n"), jen.Qual(pkgGGUF, "UnusedList").Call(jen.Id("u"))),
				),
			),
			jen.If(jen.List(jen.Id("weights"), jen.Err()).Op("=").Id("f").Dot("Weights").Call(jen.Id("Weights"), jen.Id("opts").Op("...")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		).Else().Block(
			jen.If(jen.Err().Op(":=").Qual(pkgEngine, "CheckHostMemory").Call(gen.hostNeeds([]string{"the filled weights", "compute buffers", "state"}, "weightBytes", "hostBytes")...), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
			jen.Id("weights").Op("=").Map(jen.String()).Qual(pkgTensor, "Tensor").Values(),
			jen.For(jen.List(jen.Id("k"), jen.Id("w")).Op(":=").Range().Id("Weights")).Block(
				jen.Id("t").Op(":=").Qual(pkgTensor, "NewTensor").Call(jen.Id("w").Dot("Type"), jen.Id("w").Dot("Ne")),
				jen.Qual(pkgTensor, "Fill").Call(jen.Op("&").Id("t"), jen.Qual(pkgTensor, "GGMLFill").Call(jen.Id("weightFillIndex").Index(jen.Id("k")))),
				jen.Id("weights").Index(jen.Id("w").Dot("Name")).Op("=").Id("t"),
			),
		),
		jen.List(jen.Id("m"), jen.Err()).Op(":=").Id("New").Call(jen.Id("weights"), jen.Id("threads")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.Defer().Id("m").Dot("Close").Call(),
		jen.For(jen.List(jen.Id("k"), jen.Id("s")).Op(":=").Range().Id("States")).Block(
			jen.Id("t").Op(":=").Qual(pkgTensor, "NewTensor").Call(jen.Id("s").Dot("Type"), jen.Id("s").Dot("Ne")),
			jen.Qual(pkgTensor, "Fill").Call(jen.Op("&").Id("t"), jen.Qual(pkgTensor, "GGMLFill").Call(jen.Id("stateFillIndex").Index(jen.Id("k")))),
			jen.If(jen.Err().Op(":=").Id("m").Dot("WriteState").Call(jen.Id("s").Dot("Name"), jen.Id("t")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		),
		jen.Id("in").Op(":=").Op("&").Id("Inputs").Values(jen.Dict{jen.Id("Dims"): jen.Id("d")}),
	}
	acc := map[tensor.DType]string{tensor.F32: "F32s", tensor.F16: "F16s", tensor.I32: "I32s"}
	for _, t := range g.Inputs {
		fe := t.Fill
		if fe == nil {
			fe = ir.DefaultFill(t.Type)
		}
		gen.fillUses = map[string]bool{}
		fill := gen.fillGo(fe)
		iName, cName := "_", "_"
		if gen.fillUses["i"] {
			iName = "i"
		}
		if gen.fillUses["c"] {
			cName = "c"
		}
		body = append(body, jen.Block(
			jen.Id("t").Op(":=").Qual(pkgTensor, "NewTensor").Call(dtypeCode(t.Type), gen.shapeIn(t.Ne, "d")),
			jen.Qual(pkgTensor, "Fill").Call(jen.Op("&").Id("t"), jen.Func().Params(jen.Id(iName).Int(), jen.Id(cName).Index(jen.Lit(4)).Int()).Float64().Block(
				jen.Return(fill),
			)),
			jen.Id("in").Dot(gen.inField[t]).Op("=").Id("t").Dot(acc[t.Type]).Call(),
		))
	}
	body = append(body,
		jen.List(jen.Id("out"), jen.Err()).Op(":=").Id("m").Dot("Eval").Call(jen.Id("in")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.If(jen.Id("stats")).Block(jen.Qual("fmt", "Fprint").Call(jen.Qual("os", "Stderr"), jen.Id("m").Dot("Stats").Call())),
		jen.Return(jen.Qual(pkgMainutil, "PrintOutputs").Call(jen.Qual("os", "Stdout"), jen.Id("asJSON"), jen.Id("out").Dot("Named").Call())),
	)
	f.Comment("run loads the weights from weightsFile (with allowUnused, ignoring the tensors the model does not read) or fills them with the ggml traces' rule,")
	f.Comment("fills state with the rule and the inputs with their fill expressions, evaluates")
	f.Comment("once and prints the outputs (and with stats the statistics).")
	f.Func().Id("run").Params(jen.Id("weightsFile").String(), jen.Id("allowUnused").Bool(), jen.Id("asJSON").Bool(), jen.Id("threads").Int(), jen.Id("stats").Bool(), jen.Id("d").Id("Dims")).Error().Block(body...)
}

// shapeIn renders ne as a [4]int over a Dims value named d (not a pointer).
func (gen *generator) shapeIn(ne [4]*ir.Expr, d string) jen.Code {
	var vals []jen.Code
	for _, e := range ne {
		vals = append(vals, jen.Id(e.Format(func(dim *ir.Dim) string { return d + "." + gen.dimField[dim] })))
	}
	return jen.Index(jen.Lit(4)).Int().Values(vals...)
}

// fillGo renders a fill expression as a Go float64 expression over i (flat
// index), c (coordinates) and d (the dims). It records which of i and c it
// used in gen.fillUses.
func (gen *generator) fillGo(e *ir.FillExpr) jen.Code {
	switch e.Op {
	case "num":
		if math.IsInf(e.Num, 1) {
			return jen.Qual("math", "Inf").Call(jen.Lit(1))
		}
		return jen.Float64().Call(jen.Lit(e.Num))
	case "var":
		if e.Var == "i" {
			gen.fillUses["i"] = true
			return jen.Float64().Call(jen.Id("i"))
		}
		gen.fillUses["c"] = true
		return jen.Float64().Call(jen.Id("c").Index(jen.Lit(int(e.Var[1] - '0'))))
	case "dim":
		if e.Dim.Bounded {
			return jen.Float64().Call(jen.Id("d").Dot(gen.dimField[e.Dim]))
		}
		return jen.Float64().Call(jen.Lit(int(e.Dim.Bound)))
	case "neg":
		return jen.Op("-").Add(gen.fillGo(e.Args[0]))
	case "call":
		if e.Func == "where" {
			return jen.Qual(pkgMainutil, "Where").Call(gen.cond(e.Args[0]), gen.fillGo(e.Args[1]), gen.fillGo(e.Args[2]))
		}
		return jen.Qual("math", strings.ToUpper(e.Func[:1])+e.Func[1:]).Call(gen.fillGo(e.Args[0]))
	case "%":
		return jen.Qual("math", "Mod").Call(gen.fillGo(e.Args[0]), gen.fillGo(e.Args[1]))
	case "<", "<=", ">", ">=", "==", "!=":
		return jen.Qual(pkgMainutil, "B2F").Call(gen.cond(e))
	}
	return jen.Parens(jen.Add(gen.fillGo(e.Args[0])).Op(e.Op).Add(gen.fillGo(e.Args[1])))
}

// cond renders e as a Go bool.
func (gen *generator) cond(e *ir.FillExpr) jen.Code {
	switch e.Op {
	case "<", "<=", ">", ">=", "==", "!=":
		return jen.Add(gen.fillGo(e.Args[0])).Op(e.Op).Add(gen.fillGo(e.Args[1]))
	}
	return jen.Add(gen.fillGo(e)).Op("!=").Lit(0)
}
