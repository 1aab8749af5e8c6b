package ir_test

import (
	"strings"
	"testing"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

func TestExprFolding(t *testing.T) {
	n := &ir.Dim{Name: "n", Bound: 8, Bounded: true}
	c := &ir.Dim{Name: "c", Bound: 64}
	e := ir.Mul(ir.Add(ir.DimRef(c), ir.Const(0)), ir.DimRef(n))
	if got := e.String(); got != "64 * n" {
		t.Errorf("got %s", got)
	}
	if v, ok := ir.Mul(ir.DimRef(c), ir.Const(2)).Constant(); !ok || v != 128 {
		t.Errorf("constant dims fold: %d %v", v, ok)
	}
	if got := ir.Mul(ir.Add(ir.DimRef(n), ir.Const(1)), ir.Const(4)).String(); got != "(n + 1) * 4" {
		t.Errorf("precedence: %s", got)
	}
	if got := ir.Sub(ir.Const(10), ir.Sub(ir.DimRef(n), ir.Const(1))).String(); got != "10 - (n - 1)" {
		t.Errorf("right operand of -: %s", got)
	}
	lo, hi, err := ir.Sub(ir.Const(16), ir.DimRef(n)).Range()
	if err != nil || lo != 8 || hi != 16 {
		t.Errorf("range of 16 - n: [%d, %d]", lo, hi)
	}
	if e.AtBounds() != 512 || e.Max() != 512 {
		t.Errorf("at bounds %d, max %d", e.AtBounds(), e.Max())
	}
	if !ir.Equal(ir.Mul(ir.DimRef(n), ir.Const(64)), e) || ir.Equal(ir.DimRef(n), ir.Const(8)) {
		t.Error("Equal")
	}
}

// buildChain makes x -> mul_mat(w, x) -> add(., b) -> relu, with a view.
func buildChain(t *testing.T) (*ir.Graph, *ir.Tensor) {
	g := ir.NewGraph("t.g")
	n := &ir.Dim{Name: "n", Bound: 4, Bounded: true}
	g.Dims = append(g.Dims, n)
	x := must(g.NewLeaf(ir.KindInput, "x", tensor.F32, []*ir.Expr{ir.Const(8), ir.DimRef(n)}, ir.Pos{}))(t)
	w := must(g.NewLeaf(ir.KindWeight, "w", tensor.F32, []*ir.Expr{ir.Const(8), ir.Const(16)}, ir.Pos{}))(t)
	b := must(g.NewLeaf(ir.KindWeight, "b", tensor.F32, []*ir.Expr{ir.Const(16)}, ir.Pos{}))(t)
	mm := must(g.NewOp(ops.MulMat, "mm", []*ir.Tensor{w, x}, ir.Args{}, ir.Pos{}))(t)
	add := must(g.NewOp(ops.Add, "add", []*ir.Tensor{mm, b}, ir.Args{}, ir.Pos{}))(t)
	tr := must(g.NewOp(ops.Transpose, "tr", []*ir.Tensor{add}, ir.Args{}, ir.Pos{}))(t)
	out := must(g.NewOp(ops.Cont, "out", []*ir.Tensor{tr}, ir.Args{}, ir.Pos{}))(t)
	return g, out
}

func must(t *ir.Tensor, err error) func(*testing.T) *ir.Tensor {
	return func(tb *testing.T) *ir.Tensor {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		return t
	}
}

func TestShapesAndOrder(t *testing.T) {
	g, out := buildChain(t)
	g.Expand(out)
	var nodes, leafs []string
	for _, n := range g.Nodes {
		nodes = append(nodes, n.Name)
	}
	for _, l := range g.Leafs {
		leafs = append(leafs, l.Name)
	}
	// ggml_build_forward_expand: depth first, sources in operand order.
	if got := strings.Join(leafs, " "); got != "w x b" {
		t.Errorf("leafs %s", got)
	}
	if got := strings.Join(nodes, " "); got != "mm add tr out" {
		t.Errorf("nodes %s", got)
	}
	mm, tr := g.Nodes[0], g.Nodes[2]
	if mm.ShapeString() != "[16, n]" || tr.ShapeString() != "[n, 16]" {
		t.Errorf("shapes %s %s", mm.ShapeString(), tr.ShapeString())
	}
	if tr.ViewSrc != g.Nodes[1] || tr.Nb[0].String() != "64" || tr.Nb[1].String() != "4" {
		t.Errorf("transpose view: src %v nb %s", tr.ViewSrc, tr.Nb)
	}
	if tr.Contiguous() || !mm.Contiguous() {
		t.Error("contiguity")
	}
	if err := g.Verify(); err != nil {
		t.Error(err)
	}
}

func TestShapeErrors(t *testing.T) {
	g := ir.NewGraph("t.g")
	a := must(g.NewLeaf(ir.KindInput, "a", tensor.F32, []*ir.Expr{ir.Const(4), ir.Const(3)}, ir.Pos{}))(t)
	b := must(g.NewLeaf(ir.KindInput, "b", tensor.F32, []*ir.Expr{ir.Const(5), ir.Const(3)}, ir.Pos{}))(t)
	i := must(g.NewLeaf(ir.KindInput, "i", tensor.F32, []*ir.Expr{ir.Const(3)}, ir.Pos{}))(t)
	for _, tc := range []struct {
		op   ops.Op
		srcs []*ir.Tensor
		args ir.Args
		want string
	}{
		{ops.MulMat, []*ir.Tensor{a, b}, ir.Args{}, "mul_mat: inner dims differ: [4, 3] has ne0 = 4, [5, 3] has ne0 = 5"},
		{ops.Add, []*ir.Tensor{a, b}, ir.Args{}, "add: [5, 3] cannot be repeated to [4, 3]"},
		{ops.GetRows, []*ir.Tensor{a, i}, ir.Args{}, "get_rows: indices must be i32, got f32"},
		{ops.Reshape, []*ir.Tensor{a}, ir.Args{Ne: []*ir.Expr{ir.Const(5)}}, "reshape: [4, 3] has 12 elements, [5] has 5"},
		{ops.View, []*ir.Tensor{a}, ir.Args{Ne: []*ir.Expr{ir.Const(8)}, Offset: ir.Const(24)}, "view: bytes [24, 56) exceed a's 48 bytes"},
		{ops.Permute, []*ir.Tensor{a}, ir.Args{Params: ops.PermuteParams{Axes: [4]int{0, 0, 1, 2}}}, "permute: axes [0 0 1 2] are not a permutation of 0..3"},
		{ops.Relu, nil, ir.Args{}, "relu takes 1..1 tensor operands, got 0"},
	} {
		_, err := g.NewOp(tc.op, "x", tc.srcs, tc.args, ir.Pos{})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: got %v, want %s", tc.op, err, tc.want)
		}
	}
}

func TestViewStridesFollowGGML(t *testing.T) {
	g := ir.NewGraph("t.g")
	c := must(g.NewLeaf(ir.KindState, "cache", tensor.F16, []*ir.Expr{ir.Const(1024)}, ir.Pos{}))(t)
	// ggml_view_2d: nb[2] = nb[1]*ne1, nb[3] = nb[2].
	v := must(g.NewOp(ops.View, "v", []*ir.Tensor{c}, ir.Args{Ne: []*ir.Expr{ir.Const(8), ir.Const(64)}, Nb: []*ir.Expr{ir.Const(32)}, Offset: ir.Const(16)}, ir.Pos{}))(t)
	if got := [4]string{v.Nb[0].String(), v.Nb[1].String(), v.Nb[2].String(), v.Nb[3].String()}; got != [4]string{"2", "32", "2048", "2048"} {
		t.Errorf("nb %v", got)
	}
	src := must(g.NewLeaf(ir.KindInput, "k", tensor.F32, []*ir.Expr{ir.Const(8), ir.Const(64)}, ir.Pos{}))(t)
	tr := must(g.NewOp(ops.Transpose, "kT", []*ir.Tensor{src}, ir.Args{}, ir.Pos{}))(t)
	cp := must(g.NewOp(ops.Cpy, "cp", []*ir.Tensor{tr, v}, ir.Args{}, ir.Pos{}))(t)
	if cp.ViewSrc != c || cp.ViewOffs.String() != "16" || cp.Type != tensor.F16 {
		t.Errorf("cpy result is a view of its destination: %v %s %s", cp.ViewSrc, cp.ViewOffs, cp.Type)
	}
}

func TestVerifyCatchesOrder(t *testing.T) {
	g, out := buildChain(t)
	g.Expand(out)
	g.Nodes[0], g.Nodes[1] = g.Nodes[1], g.Nodes[0]
	err := g.Verify()
	if err == nil || !strings.Contains(err.Error(), "add (node 0) reads mm (node 1) before it is computed") {
		t.Errorf("got %v", err)
	}
}

// TestVerifyCatchesPacking: only weights have packed copies, made by a
// backend that runs a mul_mat reading them.
func TestVerifyCatchesPacking(t *testing.T) {
	g, out := buildChain(t)
	g.Expand(out)
	g.Backends = []*ir.Backend{{Name: "gpu"}, {Name: "cpu"}}
	for _, x := range g.Nodes {
		x.Backend = 1
	}
	var w, b *ir.Tensor
	for _, l := range g.Leafs {
		switch l.Name {
		case "w":
			w = l
		case "b":
			b = l
		}
	}
	for _, tc := range []struct {
		t    *ir.Tensor
		p    ir.Packing
		want string
	}{
		{w, ir.Packing{Backend: 1, Bytes: 64}, ""},
		{w, ir.Packing{Backend: 0, Bytes: 64}, "weight w is packed for gpu, where no mul_mat reads it"},
		{w, ir.Packing{Backend: 2, Bytes: 64}, "weight w is packed by backend 2, want one of the 2 backends"},
		{b, ir.Packing{Backend: 1, Bytes: 64}, "weight b is packed for cpu, where no mul_mat reads it"},
		{g.Nodes[0], ir.Packing{Backend: 1, Bytes: 64}, "node mm has a packed copy of 64 bytes, want only weights packed"},
	} {
		tc.t.Packed = tc.p
		err := g.Verify()
		tc.t.Packed = ir.Packing{}
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s packed %+v: got %v, want %q", tc.t.Name, tc.p, err, tc.want)
		}
	}
}

// TestVerifyCatchesGroups: a group is at least two consecutive mul_mats
// reading one activation through weights their backend packs.
func TestVerifyCatchesGroups(t *testing.T) {
	g := ir.NewGraph("t.g")
	x := must(g.NewLeaf(ir.KindInput, "x", tensor.F32, []*ir.Expr{ir.Const(32)}, ir.Pos{}))(t)
	y := must(g.NewLeaf(ir.KindInput, "y", tensor.F32, []*ir.Expr{ir.Const(32)}, ir.Pos{}))(t)
	var ws []*ir.Tensor
	for _, name := range []string{"w1", "w2", "w3"} {
		w := must(g.NewLeaf(ir.KindWeight, name, tensor.Q4_0, []*ir.Expr{ir.Const(32), ir.Const(16)}, ir.Pos{}))(t)
		ws = append(ws, w)
	}
	m1 := must(g.NewOp(ops.MulMat, "m1", []*ir.Tensor{ws[0], x}, ir.Args{}, ir.Pos{}))(t)
	m2 := must(g.NewOp(ops.MulMat, "m2", []*ir.Tensor{ws[1], x}, ir.Args{}, ir.Pos{}))(t)
	m3 := must(g.NewOp(ops.MulMat, "m3", []*ir.Tensor{ws[2], y}, ir.Args{}, ir.Pos{}))(t)
	s := must(g.NewOp(ops.Add, "s", []*ir.Tensor{m1, m2}, ir.Args{}, ir.Pos{}))(t)
	out := must(g.NewOp(ops.Add, "out", []*ir.Tensor{s, m3}, ir.Args{}, ir.Pos{}))(t)
	g.Expand(out)
	g.SetOrder(g.Leafs, []*ir.Tensor{m1, m2, m3, s, out})
	g.Backends = []*ir.Backend{{Name: "cpu"}}
	for _, n := range g.Nodes {
		n.Backend = 0
	}
	for _, w := range ws {
		w.Packed = ir.Packing{Backend: 0, Bytes: 576}
	}
	for _, tc := range []struct {
		lead   *ir.Tensor
		n      int
		unpack *ir.Tensor
		want   string
	}{
		{m1, 2, nil, ""},
		{m1, 1, nil, "m1 leads a group of 1 products, want at least 2"},
		{m1, 3, nil, "m3 in m1's group: mul_mat reading y on backend 0, want mul_mat reading x on 0"},
		{m2, 2, nil, "m3 in m2's group"},
		{m1, 2, ws[1], "m2 in m1's group reads w2, which its backend does not pack"},
		{s, 2, nil, "s in s's group: add"},
	} {
		tc.lead.Group = tc.n
		if tc.unpack != nil {
			tc.unpack.Packed = ir.Packing{}
		}
		err := g.Verify()
		tc.lead.Group = 0
		if tc.unpack != nil {
			tc.unpack.Packed = ir.Packing{Backend: 0, Bytes: 576}
		}
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s leading %d: got %v, want %q", tc.lead.Name, tc.n, err, tc.want)
		}
	}
}
