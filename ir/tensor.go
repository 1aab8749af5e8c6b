package ir

import (
	"fmt"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// DType is an element type (shared with the runtime, which lays it out).
type DType = tensor.DType

// Pos is a source position, kept from the DSL through every pass so
// diagnostics point at the user's text.
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Kind says where a tensor's value comes from.
type Kind uint8

const (
	KindNode   Kind = iota // computed by its op
	KindInput              // supplied by the caller on every evaluation
	KindWeight             // supplied once, read-only
	KindState              // persistent across evaluations (KV cache)
	KindCopy               // a split input: CopyOf's value copied to another backend
)

var kindNames = [...]string{KindNode: "node", KindInput: "input", KindWeight: "weight", KindState: "state", KindCopy: "copy"}

func (k Kind) String() string { return kindNames[k] }

// Tensor is a leaf or a node of the graph.
type Tensor struct {
	ID     int // index in Graph.Tensors, stable and in creation order
	Name   string
	Kind   Kind
	Op     ops.Op
	Src    []*Tensor
	Type   DType
	Ne     [4]*Expr // elements per dim, ne[0] fastest
	Nb     [4]*Expr // strides in bytes
	Params ops.Params
	Pos    Pos

	// ViewSrc is the tensor whose memory a view (or a cpy result) lives
	// in, always a non-view; ViewOffs is the byte offset into it.
	ViewSrc  *Tensor
	ViewOffs *Expr

	Output bool // a graph output: never freed, returned by Eval

	// CopyOf is, for a KindCopy tensor, the tensor whose value it receives
	// at the start of its split (ggml's "CPU#fc0_relu#0").
	CopyOf *Tensor

	// Fill is the DSL's deterministic fill for an input (nil: default).
	Fill *FillExpr

	// Placement requests: the backend named on a weight/state declaration
	// ("on cuda0") or on a statement (ggml_backend_sched_set_tensor_backend).
	Placement string

	// Scheduling decisions, filled in by the passes.
	Backend int    // index into Graph.Backends; -1 until assigned
	Cause   string // ggml's cause code: 1.dst, 2.sup, 4.cpy, usr, …
	Alloc   Alloc  // where the tensor's bytes live
	// Packed is, for a weight, the copy of it in another layout that a
	// backend makes once and its matrix products read (pack_weights);
	// the zero value when there is none.
	Packed Packing
	// Group is, on the first of consecutive mul_mat nodes that read the
	// same activation through weights packed by their backend, how many
	// there are (group_products): the program runs them as one call. 0 on
	// every other node.
	Group int
}

// Packing is a weight's packed copy: the backend that makes it and reads
// it (an index into Graph.Backends) and its bytes. Bytes is 0 when the
// weight is not packed. The weight itself stays as loaded for every other
// reader, as llama.cpp keeps a tied token_embd for get_rows and loads a
// second copy for the output's mul_mat; but the CPU's get_rows reads the
// rows it picks from the copy too (cpu.Backend.GetRows).
type Packing struct {
	Backend int
	Bytes   int64
	// Release: once the copy is made the weight's own memory can leave
	// RAM (cpu.Backend.Pack's release, engine.ReleasePages). Besides the
	// copy only get_rows reads it (a tied token_embd.weight), which on
	// the CPU reads the copy too; elsewhere it would touch just the rows
	// it picks, which come back from the mapped file as they are read. No
	// other op, view or split input reads it.
	Release bool
}

// IsPacked reports whether a backend keeps a packed copy of t.
func (t *Tensor) IsPacked() bool { return t.Packed.Bytes > 0 }

// IsLeaf mirrors ggml: a tensor with no op is a leaf, everything else
// (views included) is a node.
func (t *Tensor) IsLeaf() bool { return t.Op == ops.None }

// IsView reports whether t's memory belongs to another tensor.
func (t *Tensor) IsView() bool { return t.ViewSrc != nil }

// Root is the tensor owning t's memory: t itself unless t is a view.
func (t *Tensor) Root() *Tensor {
	if t.ViewSrc != nil {
		return t.ViewSrc
	}
	return t
}

// NElem is the element count as an expression.
func (t *Tensor) NElem() *Expr {
	return Mul(Mul(t.Ne[0], t.Ne[1]), Mul(t.Ne[2], t.Ne[3]))
}

// Bytes is the tensor's memory extent, ggml_nbytes: from the first to one
// past the last addressed byte.
func (t *Tensor) Bytes() *Expr {
	var n *Expr
	if bs := int64(t.Type.BlockSize()); bs > 1 {
		n = Binary(ExprDiv, Mul(t.Ne[0], t.Nb[0]), Const(bs))
	} else {
		n = Add(Const(int64(t.Type.Size())), Mul(Sub(t.Ne[0], Const(1)), t.Nb[0]))
	}
	for i := 1; i < 4; i++ {
		n = Add(n, Mul(Sub(t.Ne[i], Const(1)), t.Nb[i]))
	}
	return n
}

// MaxBytes is the most bytes t spans for dim values within their bounds:
// what the planner reserves. For the usual shapes, which grow with their
// dims, it is Bytes at the bounds; a shape that shrinks as a dim grows
// (f32[16 - n]) is largest below them.
func (t *Tensor) MaxBytes() int64 {
	for _, ne := range t.Ne {
		if ne.Max() == 0 {
			return 0
		}
	}
	return t.Bytes().Max()
}

// Contiguous mirrors ggml_is_contiguous for symbolic shapes.
func (t *Tensor) Contiguous() bool {
	want := Const(int64(t.Type.Size()))
	for i := 0; i < 4; i++ {
		if !Equal(t.Ne[i], Const(1)) && !Equal(t.Nb[i], want) {
			return false
		}
		if i == 0 {
			want = rowSize(t.Type, t.Ne[0])
		} else {
			want = Mul(want, t.Ne[i])
		}
	}
	return true
}

// ShapeString prints the shape as [ne0, ne1, …] without trailing 1s.
func (t *Tensor) ShapeString() string { return shapeString(t.Ne) }

func shapeString(ne [4]*Expr) string {
	n := 4
	for n > 1 && ne[n-1].isConst(1) {
		n--
	}
	s := "["
	for i := 0; i < n; i++ {
		if i > 0 {
			s += ", "
		}
		s += ne[i].String()
	}
	return s + "]"
}

// AllocKind says which memory a tensor lives in.
type AllocKind uint8

const (
	AllocNone    AllocKind = iota // not placed yet
	AllocView                     // inside its ViewSrc
	AllocCompute                  // at Offset in a compute buffer
	AllocWeight                   // in the weight buffer of its backend
	AllocState                    // in the state buffer of its backend
)

// Alloc places a tensor's bytes.
type Alloc struct {
	Kind   AllocKind
	Buffer int   // index into Graph.Buffers for AllocCompute
	Chunk  int   // index into that buffer's Chunks
	Offset int64 // byte offset in that chunk
}
