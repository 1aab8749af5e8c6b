package ops

import (
	"fmt"
	"strings"
)

// Op is a tensor operation. The table below is the single description of
// every op: DSL name, ggml name and number, operand counts, flags, kernel
// and scalar operands. String, Verify, the DSL lowering, code generation and
// the backend support checks read it. The switches that cannot (shape
// rules, region rules, trace import) panic with BUG on an op they lack, and
// tests walking All() name the op and the switch before a user can get
// there; CONTRIBUTING.md lists them under "Adding an op".
type Op uint8

const (
	None Op = iota // a leaf: input, weight or state
	GetRows
	MulMat
	Add
	Sub
	Mul
	Div
	Scale
	Relu
	Gelu
	Silu
	Tanh
	Sigmoid
	RMSNorm
	Norm
	SoftMax
	Rope
	Cpy
	Cont
	View
	Reshape
	Permute
	Transpose
	FlashAttnExt
	MulMatID
	ArgSort
	TopK
	SumRows
	numOps
)

// OpFlags describe how an op treats memory.
type OpFlags uint8

const (
	// FlagView: the result is a view over its first source's memory (no
	// allocation, no compute).
	FlagView OpFlags = 1 << iota
	// FlagInPlace: the result may share memory with its first source when
	// that source dies here (ggml_op_can_inplace).
	FlagInPlace
	// FlagElementwise: dst[i] depends on srcs at the same index only.
	FlagElementwise
	// FlagWritesSrc: the op writes into the memory of its last source and
	// returns a view of it (ggml_cpy into a view); it is a graph root when
	// that memory is state.
	FlagWritesSrc
)

// The ggml numbering in the table is include/ggml.h's enum ggml_op and
// enum ggml_unary_op as of ggml-org/ggml commit
// d99724f2b141fed9e1a9f402213506c081433465. ggml renumbers them when it
// adds ops, and the RPC protocol and ggml's backends index by them, so a
// peer built from another commit needs its own numbers.
const (
	GGMLOpCount      = 101 // GGML_OP_COUNT
	GGMLUnaryOpCount = 22  // GGML_UNARY_OP_COUNT
)

// Info is one row of the op table.
type Info struct {
	Go     string // the Op constant's name in this package
	Name   string // DSL name
	GGML   string // ggml_op name as in GGML_OP_*, without the prefix
	GGMLOp int    // enum ggml_op value of GGML_OP_<GGML>
	Unary  int32  // enum ggml_unary_op value for GGML_OP_UNARY ops; -1 for the others
	// Operands names the tensor operands, in order, as kernels call them;
	// a trailing "?" marks an optional one, which a kernel is passed nil
	// for when it is left out. MinSrcs and MaxSrcs count them.
	Operands string
	MinSrcs  int
	MaxSrcs  int
	Flags    OpFlags
	// Kernel is the engine.Kernels method computing the op, called as
	// Kernel(dst, srcs…[, params]) ("" for ops computing nothing: views).
	// With FlagWritesSrc, dst is the last source and is not passed again.
	Kernel string
	// Params is the zero value of the op's scalar operands' struct (see
	// Params), nil for an op without any.
	Params Params
	// Batch is the op's rule for the rows it processes per weight row
	// (BatchSize).
	Batch BatchRule
	Doc   string // semantics, one line
}

// ggmlUnary is GGML_OP_UNARY: its ops tell themselves apart by a sub-op.
const ggmlUnary = 91

// BatchRule is how ggml-cuda's get_op_batch_size counts an op's rows.
type BatchRule uint8

const (
	BatchRows BatchRule = iota // ne[1]·ne[2]·ne[3]
	BatchNone                  // 0: never worth a weight's upload (get_rows)
	BatchNe1                   // ne[1] (mul_mat)
	BatchNe2                   // ne[2] (rope: its batch is the tokens)
)

var opTable = [numOps]Info{
	None:    {Go: "None", Name: "none", GGML: "NONE", Doc: "leaf: input, weight or state"},
	GetRows: {Go: "GetRows", Name: "get_rows", GGML: "GET_ROWS", GGMLOp: 40, Operands: "table idx", Kernel: "GetRows", Batch: BatchNone, Doc: "dst[:, r] = table[:, idx[r]], rows by i32 index"},
	MulMat:  {Go: "MulMat", Name: "mul_mat", GGML: "MUL_MAT", GGMLOp: 29, Operands: "a x", Kernel: "MulMat", Params: MulMatParams{}, Batch: BatchNe1, Doc: "dst[i, j] = Σk a[k, i]·x[k, j], a broadcast over dims 2, 3"},
	Add:     {Go: "Add", Name: "add", GGML: "ADD", GGMLOp: 2, Operands: "a x", Flags: FlagInPlace | FlagElementwise, Kernel: "Add", Doc: "dst = a + x, x repeated to a's shape"},
	Sub:     {Go: "Sub", Name: "sub", GGML: "SUB", GGMLOp: 6, Operands: "a x", Flags: FlagInPlace | FlagElementwise, Kernel: "Sub", Doc: "dst = a - x, x repeated to a's shape"},
	Mul:     {Go: "Mul", Name: "mul", GGML: "MUL", GGMLOp: 7, Operands: "a x", Flags: FlagInPlace | FlagElementwise, Kernel: "Mul", Doc: "dst = a · x, x repeated to a's shape"},
	Div:     {Go: "Div", Name: "div", GGML: "DIV", GGMLOp: 8, Operands: "a x", Flags: FlagInPlace | FlagElementwise, Kernel: "Div", Doc: "dst = a / x, x repeated to a's shape"},
	Scale:   {Go: "Scale", Name: "scale", GGML: "SCALE", GGMLOp: 32, Operands: "a", Flags: FlagInPlace | FlagElementwise, Kernel: "Scale", Params: ScaleParams{}, Doc: "dst = a · s"},
	Relu:    {Go: "Relu", Name: "relu", GGML: "UNARY", GGMLOp: ggmlUnary, Unary: 6, Operands: "a", Flags: FlagInPlace | FlagElementwise, Kernel: "Relu", Doc: "dst = max(a, 0)"},
	Gelu:    {Go: "Gelu", Name: "gelu", GGML: "UNARY", GGMLOp: ggmlUnary, Unary: 8, Operands: "a", Flags: FlagInPlace | FlagElementwise, Kernel: "Gelu", Doc: "dst = gelu(a), tanh approximation"},
	Silu:    {Go: "Silu", Name: "silu", GGML: "UNARY", GGMLOp: ggmlUnary, Unary: 10, Operands: "a", Flags: FlagInPlace | FlagElementwise, Kernel: "Silu", Doc: "dst = a / (1 + e^-a)"},
	Tanh:    {Go: "Tanh", Name: "tanh", GGML: "UNARY", GGMLOp: ggmlUnary, Unary: 4, Operands: "a", Flags: FlagInPlace | FlagElementwise, Kernel: "Tanh", Doc: "dst = tanh(a)"},
	Sigmoid: {Go: "Sigmoid", Name: "sigmoid", GGML: "UNARY", GGMLOp: ggmlUnary, Unary: 7, Operands: "a", Flags: FlagInPlace | FlagElementwise, Kernel: "Sigmoid", Doc: "dst = 1 / (1 + e^-a)"},
	RMSNorm: {Go: "RMSNorm", Name: "rms_norm", GGML: "RMS_NORM", GGMLOp: 25, Operands: "a", Flags: FlagInPlace, Kernel: "RMSNorm", Params: NormParams{}, Doc: "each row divided by sqrt(mean(row²) + eps)"},
	// norm is not in ggml_op_can_inplace.
	Norm:      {Go: "Norm", Name: "norm", GGML: "NORM", GGMLOp: 24, Operands: "a", Kernel: "Norm", Params: NormParams{}, Doc: "each row: (x - mean) / sqrt(var + eps)"},
	SoftMax:   {Go: "SoftMax", Name: "soft_max", GGML: "SOFT_MAX", GGMLOp: 46, Operands: "a mask?", Flags: FlagInPlace, Kernel: "SoftMax", Params: SoftMaxParams{}, Doc: "row softmax of a·scale + slope·mask (ggml_soft_max_ext)"},
	Rope:      {Go: "Rope", Name: "rope", GGML: "ROPE", GGMLOp: 48, Operands: "a pos freqs?", Flags: FlagInPlace, Kernel: "Rope", Params: RopeParams{}, Batch: BatchNe2, Doc: "rotary position embedding of a by positions pos, each pair's angle divided by its freqs factor when given (ggml_rope_ext)"},
	Cpy:       {Go: "Cpy", Name: "cpy", GGML: "CPY", GGMLOp: 34, Operands: "src dst", Flags: FlagWritesSrc, Kernel: "Cpy", Doc: "dst = src converted to dst's type; the result is a view of dst"},
	Cont:      {Go: "Cont", Name: "cont", GGML: "CONT", GGMLOp: 35, Operands: "a", Kernel: "Cpy", Doc: "a copied into contiguous memory, optionally reshaped"},
	View:      {Go: "View", Name: "view", GGML: "VIEW", GGMLOp: 37, Operands: "a", Flags: FlagView, Doc: "a view of a's memory with given shape, strides and offset"},
	Reshape:   {Go: "Reshape", Name: "reshape", GGML: "RESHAPE", GGMLOp: 36, Operands: "a", Flags: FlagView, Doc: "contiguous a with a new shape"},
	Permute:   {Go: "Permute", Name: "permute", GGML: "PERMUTE", GGMLOp: 38, Operands: "a", Flags: FlagView, Params: PermuteParams{}, Doc: "a's dims moved: dim i goes to axis[i]"},
	Transpose: {Go: "Transpose", Name: "transpose", GGML: "TRANSPOSE", GGMLOp: 39, Operands: "a", Flags: FlagView, Doc: "a's first two dims swapped"},
	FlashAttnExt: {Go: "FlashAttnExt", Name: "flash_attn_ext", GGML: "FLASH_ATTN_EXT", GGMLOp: 74, Operands: "q k v mask?", Kernel: "FlashAttnExt",
		Params: FlashAttnParams{}, Doc: "softmax(q·kᵀ·scale + slope·mask)·v per head, fused; result [head_dim, n_head, n_tokens] (ggml_flash_attn_ext)"},
	// The ops of a mixture of experts (llama.cpp's build_moe_ffn): the
	// experts' products by each token's chosen ids, the choice (argsort,
	// then a view of the first k; top_k where the order does not matter:
	// expert groups), the normalisation of their weights.
	MulMatID: {Go: "MulMatID", Name: "mul_mat_id", GGML: "MUL_MAT_ID", GGMLOp: 30, Operands: "as x ids", Kernel: "MulMatID", Batch: BatchNe2,
		Doc: "dst[:, e, t] = Σk as[k, :, ids[e, t]]·x[k, e % x.Ne[1], t]: each token's chosen experts' products, as [n_embd, n_ff, n_expert], ids i32 [n_used, n_tokens] (ggml_mul_mat_id)"},
	ArgSort: {Go: "ArgSort", Name: "argsort", GGML: "ARGSORT", GGMLOp: 69, Operands: "a", Kernel: "ArgSort", Params: ArgSortParams{},
		Doc: "each row's indices (i32) ordered by the row's values, ascending or descending (ggml_argsort)"},
	TopK: {Go: "TopK", Name: "top_k", GGML: "TOP_K", GGMLOp: 70, Operands: "a", Kernel: "TopK", Params: TopKParams{},
		Doc: "the indices (i32) of each row's k largest values, in no particular order: dst [k, ne1, ne2, ne3] (ggml_top_k)"},
	SumRows: {Go: "SumRows", Name: "sum_rows", GGML: "SUM_ROWS", GGMLOp: 15, Operands: "a", Kernel: "SumRows", Doc: "dst[0, i1, i2, i3] = Σ a[:, i1, i2, i3]"},
}

func init() {
	for i := range opTable {
		r := &opTable[i]
		if r.GGMLOp != ggmlUnary {
			r.Unary = -1
		}
		for _, o := range strings.Fields(r.Operands) {
			if !strings.HasSuffix(o, "?") {
				r.MinSrcs++
			}
			r.MaxSrcs++
		}
	}
}

// OperandNames are op's tensor operands' names, without the optional
// marker.
func (op Op) OperandNames() []string {
	var names []string
	for _, o := range strings.Fields(op.Info().Operands) {
		names = append(names, strings.TrimSuffix(o, "?"))
	}
	return names
}

// BatchSize is ggml-cuda's get_op_batch_size for op with result shape ne:
// the rows the op processes per weight row, which decides whether
// uploading a weight that lives in host memory pays (a backend's
// OffloadOp).
func (op Op) BatchSize(ne [4]int64) int64 {
	switch op.Info().Batch {
	case BatchNone:
		return 0
	case BatchNe1:
		return ne[1]
	case BatchNe2:
		return ne[2]
	}
	return ne[1] * ne[2] * ne[3]
}

// Info returns op's table row.
func (op Op) Info() *Info {
	if op >= numOps {
		panic(fmt.Sprintf("BUG: op %d out of range", op))
	}
	return &opTable[op]
}

func (op Op) String() string { return op.Info().Name }

// GoName is op's constant in this package ("MulMat"), for generated code.
func (op Op) GoName() string { return op.Info().Go }

// GGMLName is the name ggml prints for op (GGML_OP_*).
func (op Op) GGMLName() string { return op.Info().GGML }

// IsView reports whether op's result is a view over its first source.
func (op Op) IsView() bool { return op.Info().Flags&FlagView != 0 }

// CanInPlace mirrors ggml_op_can_inplace.
func (op Op) CanInPlace() bool { return op.Info().Flags&FlagInPlace != 0 }

// Lookup finds an op by DSL name.
func Lookup(name string) (Op, bool) {
	for i := range opTable {
		if opTable[i].Name == name && Op(i) != None {
			return Op(i), true
		}
	}
	return 0, false
}

// LookupGGML finds an op by ggml name and, for UNARY, sub-op.
func LookupGGML(name string, unary int32) (Op, bool) {
	for i := range opTable {
		r := &opTable[i]
		if r.GGML == name && (r.Unary < 0 || r.Unary == unary) {
			return Op(i), true
		}
	}
	return 0, false
}

// Ops lists every op but None in table order.
func All() []Op {
	ops := make([]Op, 0, numOps-1)
	for op := None + 1; op < numOps; op++ {
		ops = append(ops, op)
	}
	return ops
}
