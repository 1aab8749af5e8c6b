package codegen

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/tensor"
)

func (gen *generator) model(f *jen.File) {
	g := gen.g
	fields := []jen.Code{
		jen.Id("driver").Comment("evaluations in order, state access, statistics, Close"),
		jen.Id("sched").Op("*").Qual(pkgEngine, "Sched").Comment("the driver's: copies, events, statistics, eval callback"),
	}
	for k := range g.Backends {
		kind := gen.kinds[k]
		fields = append(fields, jen.Id(gen.beField[k]).Op("*").Qual(kind.Package, kind.Type))
	}
	for k, b := range g.Buffers {
		where := ""
		if be := g.Backends[b.Backend]; !gen.kinds[b.Backend].Host {
			where = ", in " + be.Name + "'s memory"
		}
		fields = append(fields, jen.Id(gen.bufField[k]).Index().Byte().Comment("compute buffer "+b.BufferType+where))
	}
	if len(g.Regions) > 0 {
		fields = append(fields, jen.Id("regions").Id("regionParts").Comment("the parallel region being run"))
	}
	fields = append(fields,
		jen.Id("weights").Index().Qual(pkgTensor, "Tensor").Comment("in the order of Weights, each in its backend's memory"),
		jen.Id("state").Index().Qual(pkgTensor, "Tensor").Comment("the driver's: in the order of States, each in its backend's memory"),
	)
	f.Comment("Model is the compiled model, ready to evaluate. The engine.Driver it embeds")
	f.Comment("provides State, ReadState, WriteState, Stats, SetEvalCallback and Close.")
	f.Type().Id("Model").Struct(fields...)
	f.Comment("driver is engine.Driver, embedded in Model under an unexported name.")
	f.Type().Id("driver").Op("=").Qual(pkgEngine, "Driver")

	ret := jen.Return(jen.Err())
	var body []jen.Code
	var execs []jen.Code
	for k, be := range g.Backends {
		kind := gen.kinds[k]
		var args []jen.Code
		if kind.Indexed {
			args = append(args, jen.Lit(gen.devNum[k]))
		}
		args = append(args, jen.Id("threads"))
		field := jen.Id("m").Dot(gen.beField[k])
		if kind.Fallible {
			body = append(body, jen.If(
				jen.List(field.Clone(), jen.Err()).Op("=").Qual(kind.Package, kind.New).Call(args...),
				jen.Err().Op("!=").Nil(),
			).Block(ret.Clone()))
		} else {
			body = append(body, field.Clone().Op("=").Qual(kind.Package, kind.New).Call(args...))
		}
		body = append(body, jen.Qual(pkgEngine, "OnClose").Call(jen.Op("&").Id("m").Dot("driver"), field.Clone().Dot("Close")))
		if ops := gen.opsVar[k]; ops != "" {
			body = append(body, jen.If(jen.Err().Op("=").Add(field.Clone()).Dot("Check").Call(jen.Id(ops)), jen.Err().Op("!=").Nil()).Block(ret.Clone()))
		}
		if kind.Host {
			execs = append(execs, jen.Qual(pkgEngine, "NewHostBackend").Call(jen.Lit(be.Name), jen.Id("bufferTypes").Index(jen.Id(gen.beConst[k]))))
		} else {
			execs = append(execs, field.Clone())
		}
	}
	body = append(body,
		jen.If(
			jen.List(jen.Id("m").Dot("sched"), jen.Err()).Op("=").Qual(pkgEngine, "NewSched").Call(
				jen.Index().Qual(pkgEngine, "Backend").Custom(multi, execs...),
				jen.Id("bufferTypes"), jen.Id("splits"), jen.Id("NCopies")),
			jen.Err().Op("!=").Nil(),
		).Block(ret.Clone()),
	)
	for k, b := range g.Buffers {
		body = append(body, jen.If(
			jen.List(jen.Id("m").Dot(gen.bufField[k]), jen.Err()).Op("=").Id("m").Dot("sched").Dot("Backend").Call(jen.Id(gen.beConst[b.Backend])).Dot("Alloc").Call(jen.Id(gen.bufConst[k])),
			jen.Err().Op("!=").Nil(),
		).Block(ret.Clone()))
	}
	body = append(body,
		jen.If(
			jen.List(jen.Id("m").Dot("weights"), jen.Err()).Op("=").Id("m").Dot("sched").Dot("UploadAll").Call(jen.Id("weightBackend"), jen.Id("w")),
			jen.Err().Op("!=").Nil(),
		).Block(ret.Clone()),
	)
	for k, be := range g.Backends {
		if gen.packedVar[k] == "" {
			continue
		}
		w := jen.Id("m").Dot("weights").Index(jen.Id("p").Dot("weight"))
		body = append(body, jen.For(jen.List(jen.Id("_"), jen.Id("p")).Op(":=").Range().Id(gen.packedVar[k])).Block(
			jen.If(
				jen.Err().Op("=").Id("m").Dot(gen.beField[k]).Dot("Pack").Call(jen.Op("&").Add(w.Clone()), jen.Id("p").Dot("release")),
				jen.Err().Op("!=").Nil(),
			).Block(jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit("packing weight %s for "+be.Name+": %w"), jen.Id("Weights").Index(jen.Id("p").Dot("weight")).Dot("Name"), jen.Err()))),
		))
	}
	body = append(body,
		jen.List(jen.Id("m").Dot("state"), jen.Err()).Op("=").Qual(pkgEngine, "StartDriver").Call(
			jen.Op("&").Id("m").Dot("driver"), jen.Id("m").Dot("sched"), jen.Id("States"), jen.Id("stateBackend")),
		jen.Return(jen.Err()),
	)
	f.Comment("New starts the backends, binds the weights (used in place in host memory, copied to")
	f.Comment("the others) and allocates the compute buffers and zeroed state. threads <= 0 uses")
	f.Comment("every core. A backend this machine cannot run is an error.")
	f.Func().Id("New").Params(jen.Id("weights").Map(jen.String()).Qual(pkgTensor, "Tensor"), jen.Id("threads").Int()).Params(jen.Op("*").Id("Model"), jen.Error()).Block(
		jen.List(jen.Id("w"), jen.Err()).Op(":=").Qual(pkgEngine, "BindWeights").Call(jen.Id("Weights"), jen.Id("weights")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
		jen.If(jen.Err().Op(":=").Qual(pkgEngine, "CheckHostMemory").Call(gen.hostNeeds([]string{"the compute buffers", "state"}, "hostBytes")...), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
		jen.Id("m").Op(":=").Op("&").Id("Model").Values(),
		jen.If(jen.Err().Op(":=").Id("m").Dot("start").Call(jen.Id("w"), jen.Id("threads")), jen.Err().Op("!=").Nil()).Block(
			jen.Id("m").Dot("Close").Call(),
			jen.Return(jen.Nil(), jen.Err()),
		),
		jen.Return(jen.Id("m"), jen.Nil()),
	)
	f.Comment("start is New's work on the bound weights w; on an error New closes what it started.")
	f.Func().Params(jen.Id("m").Op("*").Id("Model")).Id("start").Params(jen.Id("w").Index().Qual(pkgTensor, "Tensor"), jen.Id("threads").Int()).Params(jen.Err().Error()).Block(body...)
}

// loc renders the buffer and byte offset where t's first element lives.
func (gen *generator) loc(t *ir.Tensor) (buf, off jen.Code) {
	root := t.Root()
	var base jen.Code
	switch root.Alloc.Kind {
	case ir.AllocCompute:
		buf = jen.Id("m").Dot(gen.bufField[root.Alloc.Buffer])
		if _, ok := gen.versions[root]; ok {
			base = jen.Id(gen.versionVar[root]).Index(jen.Id("c"))
		} else {
			base = jen.Lit(int(root.Alloc.Offset))
		}
	case ir.AllocWeight:
		buf = jen.Id("m").Dot("weights").Index(gen.paramRef(root)).Dot("Data")
	case ir.AllocState:
		buf = jen.Id("m").Dot("state").Index(gen.paramRef(root)).Dot("Data")
	default:
		panic(fmt.Sprintf("BUG: tensor %s (root %s) has no allocation", t.Name, root.Name))
	}
	if t.ViewSrc == nil {
		if base == nil {
			return buf, jen.Lit(0)
		}
		return buf, base
	}
	vo := t.ViewOffs
	if c, ok := vo.Constant(); ok && c == 0 && base != nil {
		return buf, base
	}
	if base == nil {
		return buf, gen.expr(vo)
	}
	return buf, jen.Add(base).Op("+").Add(gen.expr(vo))
}

// paramRef is weight or state t's index in Weights or States: a state by
// its constant, a weight by its number (kernel calls name it).
func (gen *generator) paramRef(t *ir.Tensor) jen.Code {
	if c, ok := gen.paramConst[t]; ok {
		return jen.Id(c)
	}
	return jen.Lit(gen.paramIndex[t])
}

// tensor renders an expression of type tensor.Tensor for t.
func (gen *generator) tensor(t *ir.Tensor) jen.Code {
	if t.ViewSrc == nil && (t.Alloc.Kind == ir.AllocWeight || t.Alloc.Kind == ir.AllocState) {
		field := "weights"
		if t.Alloc.Kind == ir.AllocState {
			field = "state"
		}
		return jen.Id("m").Dot(field).Index(gen.paramRef(t))
	}
	buf, off := gen.loc(t)
	if dense(t.Type, t.Ne, t.Nb, 4) {
		return jen.Qual(pkgTensor, "Dense").Call(buf, off, dtypeCode(t.Type), gen.shape(t.Ne, nil))
	}
	return jen.Qual(pkgTensor, "At").Call(buf, off, dtypeCode(t.Type), gen.shape(t.Ne, nil), gen.shape(t.Nb, nil))
}

// dense reports whether strides nb are those of a contiguous tensor of
// type dt and shape ne in dims 0..upto-1, wherever a stride matters (a dim
// of one element may have any), and ne has one element in the dims after.
func dense(dt tensor.DType, ne, nb [4]*ir.Expr, upto int) bool {
	for i := upto; i < 4; i++ {
		if c, ok := ne[i].Constant(); !ok || c != 1 {
			return false
		}
	}
	want := ir.Const(int64(dt.Size()))
	for i := range upto {
		if c, ok := ne[i].Constant(); !ok || c != 1 {
			if !ir.Equal(nb[i], want) {
				return false
			}
		}
		if i == 0 {
			// A row of whole blocks.
			n, ok := ne[0].Constant()
			switch {
			case dt.BlockSize() == 1:
				want = ir.Mul(want, ne[0])
			case ok && n%int64(dt.BlockSize()) == 0:
				want = ir.Const(int64(dt.RowSize(int(n))))
			default:
				return false
			}
			continue
		}
		want = ir.Mul(want, ne[i])
	}
	return true
}

// hostNeeds are CheckHostMemory's arguments for what (phrases) of the
// named sizes, and for the packed copies of weights when the plan makes
// some.
func (gen *generator) hostNeeds(what []string, sizes ...string) []jen.Code {
	if _, _, packed := gen.hostMemory(); packed > 0 {
		what = append(what, "the weights' packed copies")
		sizes = append(sizes, "packedBytes")
	}
	args := []jen.Code{jen.Lit(strings.Join(what[:len(what)-1], ", ") + " and " + what[len(what)-1])}
	for _, s := range sizes {
		args = append(args, jen.Id(s))
	}
	return args
}
