package codegen

import (
	"github.com/dave/jennifer/jen"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/tensor"
)

const (
	pkgLM    = "github.com/graphc/graphc/runtime/lm"
	pkgLMCLI = "github.com/graphc/graphc/runtime/lm/lmcli"
)

// decoder is a graph's llama.cpp decoder interface, what runtime/lm
// drives: a batch's tokens, their positions and their mask over the KV
// cache's slots in use, the rows whose logits are wanted, and the logits.
type decoder struct {
	nKV, nTokens, nOutputs       *ir.Dim
	tokens, pos, mask, outputIDs *ir.Tensor
	// maskSWA, where not nil, is the sliding-window layers' mask over
	// the last nSWA positions (llama.cpp's KQ_mask_swa).
	maskSWA      *ir.Tensor
	nSWA         int64
	logits       *ir.Tensor
	nCtx, nVocab int64
}

// findDecoder returns g's decoder interface, or nil when g lacks any part
// of it: bounded dims n_kv (at most the constant n_ctx), n_tokens and
// n_outputs (up to n_tokens' bound) and no other; inputs inp_tokens and
// inp_pos i32[n_tokens], KQ_mask f32[n_kv, n_tokens] and inp_out_ids
// i32[n_outputs] and no other but KQ_mask_swa f32[n_kv, n_tokens], the
// sliding-window layers' mask, whose window is the constant dim n_swa;
// output result_output f32[n_vocab, n_outputs].
func findDecoder(g *ir.Graph) *decoder {
	dims := map[string]*ir.Dim{}
	bounded := 0
	for _, d := range g.Dims {
		dims[d.Name] = d
		if d.Bounded {
			bounded++
		}
	}
	dec := &decoder{nKV: dims["n_kv"], nTokens: dims["n_tokens"], nOutputs: dims["n_outputs"]}
	nCtx := dims["n_ctx"]
	for _, d := range []*ir.Dim{dec.nKV, dec.nTokens, dec.nOutputs} {
		if d == nil || !d.Bounded {
			return nil
		}
	}
	if bounded != 3 || nCtx == nil || nCtx.Bounded || dec.nKV.Bound != nCtx.Bound || dec.nOutputs.Bound < dec.nTokens.Bound {
		return nil
	}
	dec.nCtx = nCtx.Bound
	inputs := map[string]*ir.Tensor{}
	for _, t := range g.Inputs {
		inputs[t.Name] = t
	}
	dec.tokens, dec.pos, dec.mask, dec.outputIDs = inputs["inp_tokens"], inputs["inp_pos"], inputs["KQ_mask"], inputs["inp_out_ids"]
	want := 4
	if swa, ok := inputs["KQ_mask_swa"]; ok {
		nSWA := dims["n_swa"]
		if nSWA == nil || nSWA.Bounded || !hasShape(swa, tensor.F32, dec.nKV, dec.nTokens) {
			return nil
		}
		dec.maskSWA, dec.nSWA = swa, nSWA.Bound
		want++
	}
	if len(g.Inputs) != want ||
		!hasShape(dec.tokens, tensor.I32, dec.nTokens) ||
		!hasShape(dec.pos, tensor.I32, dec.nTokens) ||
		!hasShape(dec.mask, tensor.F32, dec.nKV, dec.nTokens) ||
		!hasShape(dec.outputIDs, tensor.I32, dec.nOutputs) {
		return nil
	}
	for _, t := range g.Outputs {
		if t.Name == "result_output" {
			dec.logits = t
		}
	}
	if dec.logits == nil || dec.logits.Type != tensor.F32 {
		return nil
	}
	vocab, ok := dec.logits.Ne[0].Constant()
	if !ok || !sameShape(dec.logits.Ne[1:], dec.nOutputs) {
		return nil
	}
	dec.nVocab = vocab
	return dec
}

// hasShape reports whether t is a tensor of type dt shaped [dims…].
func hasShape(t *ir.Tensor, dt tensor.DType, dims ...*ir.Dim) bool {
	return t != nil && t.Type == dt && sameShape(t.Ne[:], dims...)
}

// sameShape reports whether ne is [dims…, 1, …].
func sameShape(ne []*ir.Expr, dims ...*ir.Dim) bool {
	for i, e := range ne {
		if i < len(dims) {
			if e.Op != ir.ExprDim || e.Dim != dims[i] {
				return false
			}
		} else if c, ok := e.Constant(); !ok || c != 1 {
			return false
		}
	}
	return true
}

// lm emits (*Model).LM, the model as runtime/lm's Model: a Batch is one
// Eval, the logits of its Outputs the result.
func (gen *generator) lm(f *jen.File) {
	dec := gen.decoder
	if dec == nil {
		return
	}
	b := func(name string) *jen.Statement { return jen.Id("b").Dot(name) }
	// Keyed fields in a list, not a jen.Dict: one line where they fit.
	dims := jen.Id("Dims").Values(
		field(gen.dimField[dec.nTokens], jen.Len(b("Tokens"))),
		field(gen.dimField[dec.nKV], b("NKV")),
		field(gen.dimField[dec.nOutputs], jen.Len(b("Outputs"))),
	)
	inFields := []jen.Code{
		field("Dims", jen.Id("d")),
		field(gen.inField[dec.tokens], b("Tokens")),
		field(gen.inField[dec.pos], b("Pos")),
		field(gen.inField[dec.mask], b("Mask")),
	}
	infoFields := []jen.Code{
		field("NCtx", jen.Lit(int(dec.nCtx))),
		field("NBatch", jen.Id(gen.boundConst[dec.nTokens])),
		field("NVocab", jen.Lit(int(dec.nVocab))),
	}
	if dec.maskSWA != nil {
		inFields = append(inFields, field(gen.inField[dec.maskSWA], b("MaskSWA")))
		infoFields = append(infoFields, field("SlidingWindow", jen.Lit(int(dec.nSWA))))
	}
	inFields = append(inFields, field(gen.inField[dec.outputIDs], b("Outputs")), field("Reuse", jen.Id("reuse")))
	reuse := jen.Op("&").Id("Outputs").Values(field(gen.outField[dec.logits],
		jen.Qual(pkgTensor, "Tensor").Values(field("Data", jen.Qual(pkgTensor, "F32Bytes").Call(b("Logits"))))))
	in := jen.Values(inFields...)
	info := jen.Qual(pkgLM, "Info").Values(infoFields...)
	f.Comment("LM is the model as runtime/lm's Model, for generating text.")
	f.Func().Params(jen.Id("m").Op("*").Id("Model")).Id("LM").Params().Qual(pkgLM, "Model").Block(
		jen.Return(jen.Qual(pkgLM, "Func").Call(info, jen.Func().Params(jen.Id("b").Op("*").Qual(pkgLM, "Batch")).Params(jen.Index().Float32(), jen.Error()).Block(
			jen.Id("d").Op(":=").Add(dims),
			jen.Id("reuse").Op(":=").Add(reuse),
			jen.List(jen.Id("out"), jen.Err()).Op(":=").Id("m").Dot("Eval").Call(jen.Op("&").Id("Inputs").Add(in)),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.Return(jen.Id("out").Dot(gen.outField[dec.logits]).Dot("F32s").Call(), jen.Nil()),
		))),
	)
}

// lmCommands is the start of a language model's main: generate, chat and
// serve go to runtime/lm/lmcli with the model's New.
func (gen *generator) lmCommands() jen.Code {
	if gen.decoder == nil {
		return jen.Null()
	}
	fields := []jen.Code{field("Source", jen.Lit(gen.opts.Source)), field("Weights", jen.Id("Weights"))}
	if len(gen.g.Meta) > 0 {
		fields = append(fields, field("Meta", jen.Id("Meta")))
	}
	fields = append(fields, field("New", jen.Func().Params(jen.Id("w").Map(jen.String()).Qual(pkgTensor, "Tensor"), jen.Id("threads").Int()).Params(jen.Qual(pkgLM, "Model"), jen.Func().Params(), jen.Error()).Block(
		jen.List(jen.Id("m"), jen.Err()).Op(":=").Id("New").Call(jen.Id("w"), jen.Id("threads")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Nil(), jen.Err())),
		jen.Return(jen.Id("m").Dot("LM").Call(), jen.Id("m").Dot("Close"), jen.Nil()),
	)))
	args := jen.Qual("os", "Args")
	return jen.If(jen.Len(args.Clone()).Op(">").Lit(1).Op("&&").Qual(pkgLMCLI, "IsCommand").Call(args.Clone().Index(jen.Lit(1)))).Block(
		jen.Qual(pkgLMCLI, "Main").Call(args.Clone().Index(jen.Lit(1), jen.Empty()), jen.Qual(pkgLMCLI, "Program").Values(fields...)),
		jen.Return(),
	)
}
