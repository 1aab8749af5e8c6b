package ir

import (
	"fmt"
	"math"
)

// CheckSizes is what every tensor must pass before it exists (NewLeaf,
// NewOp; Verify checks it again): dims and strides that cannot be negative
// or overflow for any dim values within bounds, and at most ByteLimit
// bytes at the bounds. Past it, Max and AtBounds of a tensor's expressions
// cannot fail, and neither can the generated code's arithmetic on them.
func CheckSizes(t *Tensor) error {
	for i, e := range t.Ne {
		lo, _, err := e.Range()
		if err != nil {
			return fmt.Errorf("%s: ne%d: %v", shapeString(t.Ne), i, err)
		}
		if lo < 0 {
			return fmt.Errorf("%s: ne%d = %s %s", shapeString(t.Ne), i, e, negative(e, lo))
		}
	}
	tooBig := fmt.Errorf("%s%s spans more than %d bytes (its size overflows int64); graphc allows at most %d bytes (1 TiB) per tensor",
		t.Type, shapeString(t.Ne), int64(math.MaxInt64), int64(ByteLimit))
	for i, e := range t.Nb {
		lo, _, err := e.Range()
		if err != nil {
			return tooBig
		}
		if lo < 0 {
			return fmt.Errorf("%s%s: stride nb%d = %s %s", t.Type, shapeString(t.Ne), i, e, negative(e, lo))
		}
	}
	if t.ViewOffs != nil {
		if _, _, err := t.ViewOffs.Range(); err != nil {
			return fmt.Errorf("view offset %v", err)
		}
	}
	if _, _, err := t.NElem().Range(); err != nil {
		return tooBig
	}
	_, hi, err := t.Bytes().Range()
	if err != nil {
		return tooBig
	}
	if hi > ByteLimit {
		at := ""
		if len(t.Bytes().Dims(nil)) > 0 {
			at = " at the dims' bounds"
		}
		return fmt.Errorf("%s%s spans %d bytes%s; graphc allows at most %d bytes (1 TiB) per tensor",
			t.Type, shapeString(t.Ne), hi, at, int64(ByteLimit))
	}
	if t.ViewOffs != nil {
		// The generated Submit computes where the view ends in its root.
		if _, _, err := Add(t.ViewOffs, t.Bytes()).Range(); err != nil {
			return fmt.Errorf("view end %v", err)
		}
	}
	return nil
}

// negative says that e, whose range starts at lo < 0, is or can be
// negative.
func negative(e *Expr, lo int64) string {
	if _, c := e.Constant(); c {
		return "is negative"
	}
	return fmt.Sprintf("can be negative (down to %d for dim values within bounds)", lo)
}

// checkArgs rejects integer operands that overflow or may divide by zero
// for dim values within bounds; the lowering reports them at the
// expression, this is for other callers.
func checkArgs(op string, args Args) error {
	all := append(append([]*Expr(nil), args.Ne...), args.Nb...)
	if args.Offset != nil {
		all = append(all, args.Offset)
	}
	for _, e := range all {
		if _, _, err := e.Range(); err != nil {
			return shapeErrorf("%s: %v", op, err)
		}
	}
	return nil
}

// checkWritable allows an op to write only into memory the graph owns:
// state, which persists between evaluations, and the tensors it computes.
// Weights are read-only: they may be mapped straight from a GGUF file, or
// be the caller's tensors. Inputs are too: the caller's values are copied
// in once per evaluation, and copied on to other backends at the start of
// the splits that read them, where a write would not arrive.
func checkWritable(op string, dst *Tensor) error {
	root := dst.Root()
	switch root.Kind {
	case KindWeight:
		return shapeErrorf("%s: cannot write into weight %s: weights are read-only (they may be mapped from a GGUF file, or be the caller's); state is the only persistent memory a graph writes", op, root.Name)
	case KindInput:
		return shapeErrorf("%s: cannot write into input %s: inputs are read-only (other backends read copies made before the write); write into state or a computed tensor", op, root.Name)
	}
	return nil
}

// checkView checks what ggml_view_Nd asserts or takes for granted, where
// the dims allow it at compile time: strides that are not negative (ggml's
// are size_t), an offset inside the source (also size_t) and an extent
// that ends within it (ggml_view_impl's view_offs + data_size <=
// ggml_nbytes(a)), offset and strides whole elements (or blocks), and
// whole blocks per row. Dim-dependent offsets and extents, and alignments
// no expression proves, are checked by the generated code at Eval (see
// ViewNeedsEvalCheck).
func checkView(a *Tensor, ne [4]*Expr, strides []*Expr, offset *Expr) error {
	unit := int64(a.Type.Size())
	what := fmt.Sprintf("the size of one %s element", a.Type)
	if bs := int64(a.Type.BlockSize()); bs > 1 {
		what = fmt.Sprintf("the size of one %s block of %d elements", a.Type, bs)
		if ne[0].Multiple()%bs != 0 {
			return shapeErrorf("view: ne0 = %s is not a whole number of %s blocks of %d elements (a quantized tensor is viewed in whole blocks: a transposed V cache cannot be quantized; with flash attention, -fa on, V is laid out as K)", ne[0], a.Type, bs)
		}
	}
	for i, s := range strides {
		lo, _, _ := s.Range() // checkArgs checked it
		if lo < 0 {
			return shapeErrorf("view: stride nb%d = %s %s: ggml's views take size_t strides, so there are no negative strides", i+1, s, negative(s, lo))
		}
		if _, c := s.Constant(); c && s.Multiple()%unit != 0 {
			return shapeErrorf("view: stride nb%d = %s is not a multiple of %d bytes, %s", i+1, s, unit, what)
		}
	}
	if lo, _, _ := offset.Range(); lo < 0 {
		if _, c := offset.Constant(); c {
			return shapeErrorf("view: offset %s is negative: a view starts inside its source (ggml's offsets are size_t)", offset)
		}
	}
	if _, c := offset.Constant(); c && offset.Multiple()%unit != 0 {
		return shapeErrorf("view: offset %s is not a multiple of %d bytes, %s", offset, unit, what)
	}
	probe := &Tensor{Type: a.Type, Ne: ne, Nb: contiguousStrides(a.Type, ne)}
	for i := 1; i < 4; i++ {
		if i-1 < len(strides) {
			probe.Nb[i] = strides[i-1]
		} else {
			probe.Nb[i] = Mul(probe.Nb[i-1], ne[i-1])
		}
	}
	if err := CheckSizes(probe); err != nil {
		return shapeErrorf("view: %v", err)
	}
	end := Add(offset, probe.Bytes())
	_, hi, err := end.Range()
	if err != nil {
		return shapeErrorf("view: its end %v", err)
	}
	if _, c := end.Constant(); c && hi > a.MaxBytes() {
		return shapeErrorf("view: bytes [%s, %s) exceed %s's %d bytes", offset, end, a.Name, a.MaxBytes())
	}
	return nil
}

// ViewNeedsEvalCheck reports whether view (or cpy result) t may, for some
// dim values within bounds, start before its source, end past it, or have
// an offset or stride that is not a whole number of elements (blocks): the
// generated Submit checks those at Eval.
func (t *Tensor) ViewNeedsEvalCheck() bool {
	lo, _, _ := t.ViewOffs.Range()
	return lo < 0 || Add(t.ViewOffs, t.Bytes()).Max() > t.ViewSrc.MaxBytes() || len(t.ViewUnaligned()) > 0
}

// ViewUnaligned lists the expressions among view t's offset and strides
// that no expression proves to be whole elements (blocks) of its type.
func (t *Tensor) ViewUnaligned() []*Expr {
	var out []*Expr
	unit := int64(t.Type.Size())
	for _, e := range append([]*Expr{t.ViewOffs}, t.Nb[1:]...) {
		if e.Multiple()%unit != 0 {
			out = append(out, e)
		}
	}
	return out
}
