package ir

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// NewLeaf declares an input, weight or state tensor, contiguous. A shape
// that is negative, overflows int64 or exceeds ByteLimit is a ShapeError,
// and no tensor is declared.
func (g *Graph) NewLeaf(kind Kind, name string, dt DType, ne []*Expr, pos Pos) (*Tensor, error) {
	probe := &Tensor{Name: name, Kind: kind, Type: dt, Ne: pad4(ne)}
	probe.Nb = contiguousStrides(dt, probe.Ne)
	if err := CheckSizes(probe); err != nil {
		return nil, shapeErrorf("%s %s: %v", kind, name, err)
	}
	t := g.newTensor(name, ops.None, nil, dt, probe.Ne, pos)
	t.Kind = kind
	t.Nb = probe.Nb
	switch kind {
	case KindInput:
		g.Inputs = append(g.Inputs, t)
	case KindWeight, KindState:
		g.Params = append(g.Params, t)
	}
	return t, nil
}

func (g *Graph) newTensor(name string, op ops.Op, src []*Tensor, dt DType, ne [4]*Expr, pos Pos) *Tensor {
	t := &Tensor{ID: len(g.Tensors), Name: name, Op: op, Src: src, Type: dt, Ne: ne, Pos: pos, Backend: -1}
	g.Tensors = append(g.Tensors, t)
	return t
}

func pad4(ne []*Expr) [4]*Expr {
	var out [4]*Expr
	for i := range out {
		if i < len(ne) {
			out[i] = ne[i]
		} else {
			out[i] = Const(1)
		}
	}
	return out
}

func contiguousStrides(dt DType, ne [4]*Expr) [4]*Expr {
	var nb [4]*Expr
	nb[0] = Const(int64(dt.Size()))
	nb[1] = rowSize(dt, ne[0])
	for i := 2; i < 4; i++ {
		nb[i] = Mul(nb[i-1], ne[i-1])
	}
	return nb
}

// rowSize is the bytes of n elements of dt (ggml_row_size).
func rowSize(dt DType, n *Expr) *Expr {
	if bs := dt.BlockSize(); bs > 1 {
		return Mul(Binary(ExprDiv, n, Const(int64(bs))), Const(int64(dt.Size())))
	}
	return Mul(Const(int64(dt.Size())), n)
}

// Args are an op's non-tensor operands.
type Args struct {
	Ne     []*Expr    // view, reshape, cont: the result's shape
	Nb     []*Expr    // view: strides nb[1..]
	Offset *Expr      // view: byte offset into the source
	Params ops.Params // the op's (its table row's type); nil: the defaults
}

// ShapeError is a user-fixable problem with an op's operands.
type ShapeError struct{ Msg string }

func (e *ShapeError) Error() string { return e.Msg }

func shapeErrorf(format string, a ...any) error { return &ShapeError{fmt.Sprintf(format, a...)} }

// NewOp creates the node op(srcs, args), inferring type, shape and strides
// with ggml's rules, and checking operands as ggml's constructors assert.
func (g *Graph) NewOp(op ops.Op, name string, srcs []*Tensor, args Args, pos Pos) (*Tensor, error) {
	info := op.Info()
	if op == ops.None || len(srcs) < info.MinSrcs || len(srcs) > info.MaxSrcs {
		return nil, shapeErrorf("%s takes %d..%d tensor operands, got %d", info.Name, info.MinSrcs, info.MaxSrcs, len(srcs))
	}
	switch {
	case args.Params == nil && info.Params != nil:
		args.Params = ops.Defaults(info.Params)
	case reflect.TypeOf(args.Params) != reflect.TypeOf(info.Params):
		panic(fmt.Sprintf("BUG: ir: %s given parameters %T, want %T", info.Name, args.Params, info.Params))
	}
	a := srcs[0]
	var b *Tensor
	if len(srcs) > 1 {
		b = srcs[1]
	}
	if err := checkTypes(op, srcs); err != nil {
		return nil, err
	}
	if err := checkArgs(info.Name, args); err != nil {
		return nil, err
	}
	if info.Flags&ops.FlagWritesSrc != 0 {
		if err := checkWritable(info.Name, srcs[len(srcs)-1]); err != nil {
			return nil, err
		}
	}
	dt := a.Type
	ne := a.Ne
	var nb [4]*Expr
	var view *Tensor
	offs := Const(0)

	// Elementwise ops (FlagElementwise) need no case of their own: the
	// result is a's; a second operand is repeated to it; a single one
	// must be f32, as ggml's unary kernels want.
	elementwise := info.Flags&ops.FlagElementwise != 0
	switch {
	case elementwise && b != nil:
		for i := 0; i < 4; i++ {
			if !divides(b.Ne[i], a.Ne[i]) {
				return nil, shapeErrorf("%s: %s cannot be repeated to %s", info.Name, b.ShapeString(), a.ShapeString())
			}
		}
		if err := needFloat(info.Name, a, b); err != nil {
			return nil, err
		}
	case elementwise:
		if a.Type != tensor.F32 {
			return nil, shapeErrorf("%s: operand must be f32, got %s", info.Name, a.Type)
		}
	}
	switch op {
	case ops.GetRows:
		if b.Type != tensor.I32 {
			return nil, shapeErrorf("get_rows: indices must be i32, got %s", b.Type)
		}
		if !Equal(a.Ne[2], b.Ne[1]) || !Equal(a.Ne[3], b.Ne[2]) {
			return nil, shapeErrorf("get_rows: table %s and indices %s disagree in batch dims", a.ShapeString(), b.ShapeString())
		}
		if a.Type != tensor.I32 {
			dt = tensor.F32
		}
		ne = [4]*Expr{a.Ne[0], b.Ne[0], b.Ne[1], b.Ne[2]}
	case ops.MulMat:
		if !Equal(a.Ne[0], b.Ne[0]) {
			return nil, shapeErrorf("mul_mat: inner dims differ: %s has ne0 = %s, %s has ne0 = %s", a.ShapeString(), a.Ne[0], b.ShapeString(), b.Ne[0])
		}
		for i := 2; i < 4; i++ {
			if !divides(a.Ne[i], b.Ne[i]) {
				return nil, shapeErrorf("mul_mat: %s cannot be broadcast over %s in dim %d", a.ShapeString(), b.ShapeString(), i)
			}
		}
		if b.Type != tensor.F32 {
			return nil, shapeErrorf("mul_mat: second operand must be f32, got %s", b.Type)
		}
		if a.Type == tensor.I32 {
			return nil, shapeErrorf("mul_mat: first operand cannot be i32")
		}
		dt = tensor.F32
		ne = [4]*Expr{a.Ne[1], b.Ne[1], b.Ne[2], b.Ne[3]}
	case ops.MulMatID:
		ids := srcs[2]
		switch {
		case a.Type == tensor.I32:
			return nil, shapeErrorf("mul_mat_id: the experts cannot be i32")
		case b.Type != tensor.F32:
			return nil, shapeErrorf("mul_mat_id: second operand must be f32, got %s", b.Type)
		case ids.Type != tensor.I32:
			return nil, shapeErrorf("mul_mat_id: ids must be i32, got %s", ids.Type)
		case !isOne(a.Ne[3]) || !isOne(b.Ne[3]) || !isOne(ids.Ne[2]) || !isOne(ids.Ne[3]):
			return nil, shapeErrorf("mul_mat_id: experts %s, x %s and ids %s must be [k, n, n_expert], [k, n_used or 1, n_tokens] and [n_used, n_tokens]", a.ShapeString(), b.ShapeString(), ids.ShapeString())
		case !Equal(a.Ne[0], b.Ne[0]):
			return nil, shapeErrorf("mul_mat_id: inner dims differ: %s has ne0 = %s, %s has ne0 = %s", a.ShapeString(), a.Ne[0], b.ShapeString(), b.Ne[0])
		case !Equal(ids.Ne[1], b.Ne[2]):
			return nil, shapeErrorf("mul_mat_id: ids %s and x %s disagree in tokens", ids.ShapeString(), b.ShapeString())
		case !divides(b.Ne[1], ids.Ne[0]):
			return nil, shapeErrorf("mul_mat_id: x %s cannot be broadcast over ids %s", b.ShapeString(), ids.ShapeString())
		case !Equal(b.Nb[0], Const(4)):
			return nil, shapeErrorf("mul_mat_id: the rows of %s are not contiguous", b.Name)
		}
		dt = tensor.F32
		ne = [4]*Expr{a.Ne[1], ids.Ne[0], b.Ne[2], Const(1)}
	case ops.ArgSort:
		if a.Type != tensor.F32 {
			return nil, shapeErrorf("argsort: operand must be f32, got %s", a.Type)
		}
		dt = tensor.I32
	case ops.TopK:
		k := args.Params.(ops.TopKParams).K
		if a.Type != tensor.F32 {
			return nil, shapeErrorf("top_k: operand must be f32, got %s", a.Type)
		}
		// ggml asserts k <= ne0 at every size the dims take.
		if lo, _, err := a.Ne[0].Range(); err == nil && int64(k) > lo {
			if _, ok := a.Ne[0].Constant(); ok {
				return nil, shapeErrorf("top_k: k = %d exceeds ne0 = %s", k, a.Ne[0])
			}
			return nil, shapeErrorf("top_k: k = %d exceeds ne0 = %s, which can be %d", k, a.Ne[0], lo)
		}
		dt = tensor.I32
		ne = [4]*Expr{Const(int64(k)), a.Ne[1], a.Ne[2], a.Ne[3]}
	case ops.SumRows:
		if a.Type != tensor.F32 {
			return nil, shapeErrorf("sum_rows: operand must be f32, got %s", a.Type)
		}
		ne = [4]*Expr{Const(1), a.Ne[1], a.Ne[2], a.Ne[3]}
	case ops.RMSNorm, ops.Norm:
		if a.Type != tensor.F32 {
			return nil, shapeErrorf("%s: operand must be f32, got %s", info.Name, a.Type)
		}
	case ops.SoftMax:
		if a.Type != tensor.F32 {
			return nil, shapeErrorf("soft_max: operand must be f32, got %s", a.Type)
		}
		if b != nil {
			if b.Type == tensor.I32 {
				return nil, shapeErrorf("soft_max: mask must be f32 or f16, got %s", b.Type)
			}
			if !Equal(b.Ne[0], a.Ne[0]) || b.Ne[1].Max() < a.Ne[1].Max() {
				return nil, shapeErrorf("soft_max: mask %s does not cover %s", b.ShapeString(), a.ShapeString())
			}
		}
	case ops.Rope:
		if b.Type != tensor.I32 || !Equal(b.Ne[0], a.Ne[2]) {
			return nil, shapeErrorf("rope: positions must be i32[%s], got %s%s", a.Ne[2], b.Type, b.ShapeString())
		}
		if a.Type != tensor.F32 {
			return nil, shapeErrorf("rope: operand must be f32, got %s", a.Type)
		}
		p := args.Params.(ops.RopeParams)
		if p.NDims <= 0 || p.NDims%2 != 0 || int64(p.NDims) > a.Ne[0].Max() {
			return nil, shapeErrorf("rope: n_dims = %d must be even, positive and at most ne0 = %s", p.NDims, a.Ne[0])
		}
	case ops.Cpy:
		if !Equal(a.NElem(), b.NElem()) {
			return nil, shapeErrorf("cpy: %s and %s have different element counts", a.ShapeString(), b.ShapeString())
		}
		if (a.Type == tensor.I32) != (b.Type == tensor.I32) {
			return nil, shapeErrorf("cpy: cannot convert %s to %s", a.Type, b.Type)
		}
		dt, ne, nb = b.Type, b.Ne, b.Nb
		view, offs = b.Root(), viewOffs(b)
	case ops.Cont:
		if len(args.Ne) > 0 {
			ne = pad4(args.Ne)
			if !Equal(Mul(Mul(ne[0], ne[1]), Mul(ne[2], ne[3])), a.NElem()) {
				return nil, shapeErrorf("cont: %s has %s elements, not as many as %s", a.ShapeString(), a.NElem(), shapeString(ne))
			}
		}
	case ops.Reshape:
		ne = pad4(args.Ne)
		if !a.Contiguous() {
			return nil, shapeErrorf("reshape: %s is not contiguous (use cont first)", a.Name)
		}
		if !Equal(Mul(Mul(ne[0], ne[1]), Mul(ne[2], ne[3])), a.NElem()) {
			return nil, shapeErrorf("reshape: %s has %s elements, %s has %s", a.ShapeString(), a.NElem(), shapeString(ne), Mul(Mul(ne[0], ne[1]), Mul(ne[2], ne[3])))
		}
		view, offs = a.Root(), viewOffs(a)
	case ops.View:
		ne = pad4(args.Ne)
		nb = contiguousStrides(a.Type, ne)
		// ggml_view_Nd: given strides, then each further stride spans the
		// previous dim.
		for i := 1; i < 4; i++ {
			if i-1 < len(args.Nb) {
				nb[i] = args.Nb[i-1]
			} else {
				nb[i] = Mul(nb[i-1], ne[i-1])
			}
		}
		if err := checkView(a, ne, args.Nb, args.Offset); err != nil {
			return nil, err
		}
		view, offs = a.Root(), Add(viewOffs(a), args.Offset)
	case ops.Permute:
		ax := args.Params.(ops.PermuteParams).Axes
		var seen [4]bool
		for _, x := range ax {
			if x < 0 || x > 3 || seen[x] {
				return nil, shapeErrorf("permute: axes %v are not a permutation of 0..3", ax)
			}
			seen[x] = true
		}
		for i := 0; i < 4; i++ {
			ne[ax[i]] = a.Ne[i]
			nb[ax[i]] = a.Nb[i]
		}
		view, offs = a.Root(), viewOffs(a)
	case ops.Transpose:
		ne = [4]*Expr{a.Ne[1], a.Ne[0], a.Ne[2], a.Ne[3]}
		nb = [4]*Expr{a.Nb[1], a.Nb[0], a.Nb[2], a.Nb[3]}
		view, offs = a.Root(), viewOffs(a)
	case ops.FlashAttnExt:
		var err error
		if dt, ne, err = flashAttnShape(srcs, args.Params.(ops.FlashAttnParams)); err != nil {
			return nil, err
		}
	default:
		if !elementwise {
			panic(fmt.Sprintf("BUG: op %s has no shape rule in NewOp (ir/build.go)", op))
		}
	}
	if nb[0] == nil {
		nb = contiguousStrides(dt, ne)
	}
	probe := &Tensor{Type: dt, Ne: ne, Nb: nb, ViewSrc: view, ViewOffs: offs}
	if err := CheckSizes(probe); err != nil {
		return nil, shapeErrorf("%s: result %v", info.Name, err)
	}
	t := g.newTensor(name, op, srcs, dt, ne, pos)
	t.Nb = nb
	t.Params = args.Params
	if view != nil {
		t.ViewSrc, t.ViewOffs = view, offs
	}
	return t, nil
}

// flashAttnShape checks flash_attn_ext's operands as ggml_flash_attn_ext
// and ggml-cpu assert, and gives its result: f32 [head_dim_v, n_head,
// n_tokens, ne3], ggml's permuted layout.
// flashAttnKVTypes are the K and V types flash attention reads: llama.cpp's
// KV cache types (-ctk, -ctv).
var flashAttnKVTypes = []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.Q8_0, tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.IQ4_NL}

func flashAttnShape(srcs []*Tensor, p ops.FlashAttnParams) (DType, [4]*Expr, error) {
	q, k, v := srcs[0], srcs[1], srcs[2]
	var ne [4]*Expr
	if q.Type != tensor.F32 {
		return 0, ne, shapeErrorf("flash_attn_ext: q must be f32, got %s", q.Type)
	}
	for _, t := range []*Tensor{k, v} {
		if !slices.Contains(flashAttnKVTypes, t.Type) {
			return 0, ne, shapeErrorf("flash_attn_ext: %s must be one of %v (a KV cache's types), got %s", t.Name, flashAttnKVTypes, t.Type)
		}
	}
	for _, t := range []*Tensor{q, k, v} {
		if !Equal(t.Nb[0], Const(int64(t.Type.Size()))) {
			return 0, ne, shapeErrorf("flash_attn_ext: the rows of %s are not contiguous", t.Name)
		}
	}
	switch {
	case !Equal(k.Ne[0], q.Ne[0]):
		return 0, ne, shapeErrorf("flash_attn_ext: k %s and q %s differ in head size (ne0)", k.ShapeString(), q.ShapeString())
	case !Equal(v.Ne[1], k.Ne[1]) || !Equal(v.Ne[2], k.Ne[2]) || !Equal(v.Ne[3], k.Ne[3]):
		return 0, ne, shapeErrorf("flash_attn_ext: v %s and k %s differ in keys or heads (ne1..3)", v.ShapeString(), k.ShapeString())
	case !divides(k.Ne[2], q.Ne[2]) || !Equal(k.Ne[3], q.Ne[3]):
		return 0, ne, shapeErrorf("flash_attn_ext: k's heads %s do not divide q's %s", k.ShapeString(), q.ShapeString())
	}
	if len(srcs) > 3 {
		m := srcs[3]
		switch {
		case m.Type != tensor.F16 && m.Type != tensor.F32:
			return 0, ne, shapeErrorf("flash_attn_ext: mask must be f16 or f32, got %s", m.Type)
		case !m.Contiguous():
			return 0, ne, shapeErrorf("flash_attn_ext: mask %s is not contiguous", m.Name)
		case !Equal(m.Ne[0], k.Ne[1]) || m.Ne[1].Max() < q.Ne[1].Max():
			return 0, ne, shapeErrorf("flash_attn_ext: mask %s does not cover keys %s by queries %s", m.ShapeString(), k.Ne[1], q.Ne[1])
		case !divides(m.Ne[2], q.Ne[2]) || !divides(m.Ne[3], q.Ne[3]):
			return 0, ne, shapeErrorf("flash_attn_ext: mask %s cannot be broadcast over q %s", m.ShapeString(), q.ShapeString())
		}
	} else if p.MaxBias > 0 {
		return 0, ne, shapeErrorf("flash_attn_ext: max_bias needs a mask")
	}
	return tensor.F32, [4]*Expr{v.Ne[0], q.Ne[2], q.Ne[1], q.Ne[3]}, nil
}

// checkTypes rejects quantized and bf16 operands where graphc's kernels
// (like most of ggml's) do not take them: they may be matrix weights,
// embedding tables, a cpy's destination and flash attention's K and V (a
// quantized KV cache), and viewed.
func checkTypes(op ops.Op, srcs []*Tensor) error {
	for i, s := range srcs {
		if !s.Type.Quantized() && s.Type != tensor.BF16 {
			continue
		}
		switch {
		case (op == ops.MulMat || op == ops.MulMatID || op == ops.GetRows) && i == 0:
		case op == ops.Cpy && i == 1 && !srcs[0].Type.Quantized() && srcs[0].Type != tensor.BF16:
		case op == ops.FlashAttnExt && (i == 1 || i == 2):
		case op.IsView():
			if bs := int64(s.Type.BlockSize()); bs > 1 && s.Ne[0].Max()%bs != 0 {
				return shapeErrorf("%s: %s rows of %s are not whole %s blocks of %d", op, s.Type, s.Ne[0], s.Type, bs)
			}
		default:
			return shapeErrorf("%s: operand %s is %s; only mul_mat (first operand), get_rows (table) and views take %s tensors", op, s.Name, s.Type, s.Type)
		}
	}
	return nil
}

func viewOffs(t *Tensor) *Expr {
	if t.ViewSrc == nil {
		return Const(0)
	}
	return t.ViewOffs
}

// divides reports whether x divides y for all dim values (checked like Equal).
func divides(x, y *Expr) bool {
	xc, xok := x.Constant()
	yc, yok := y.Constant()
	if xok && yok {
		return xc != 0 && yc%xc == 0
	}
	return Equal(x, y) || (xok && xc == 1)
}

func needFloat(op string, ts ...*Tensor) error {
	for _, t := range ts {
		if t.Type == tensor.I32 {
			return shapeErrorf("%s: operands must be f32 or f16, %s is i32", op, t.Name)
		}
	}
	return nil
}

// isOne reports whether e is the constant 1.
func isOne(e *Expr) bool { c, ok := e.Constant(); return ok && c == 1 }
