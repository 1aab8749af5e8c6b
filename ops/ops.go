package ops

import "fmt"

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
	Go      string  // the Op constant's name in this package
	Name    string  // DSL name
	GGML    string  // ggml_op name as in GGML_OP_*, without the prefix
	GGMLOp  int     // enum ggml_op value of GGML_OP_<GGML>
	Unary   int32   // enum ggml_unary_op value for GGML_OP_UNARY ops, else -1
	MinSrcs int     // tensor operands; those past MinSrcs are optional,
	MaxSrcs int     // and a kernel is passed nil for each one left out
	Flags   OpFlags //
	// Kernel is the engine.Kernels method computing the op, called as
	// Kernel(dst, srcs…, params…) ("" for ops computing nothing: views).
	// With FlagWritesSrc, dst is the last source and is not passed again.
	Kernel string
	Params []Param // scalar operands, in kernel-argument order
	Doc    string  // semantics, one line
}

// Params are an op's scalar parameters (ggml's op_params); each op reads
// only its own fields.
type Params struct {
	Eps     float32    // rms_norm, norm
	Scale   float32    // scale, soft_max
	MaxBias float32    // soft_max
	Rope    RopeParams // rope
	Axes    [4]int     // permute: source dim i goes to Axes[i]
}

// Param is a scalar operand of an op, kept in a node's Params.
type Param struct {
	Key   string     // how IR dumps and the DSL call it
	Field ParamField // where Params holds it
}

// ParamField names a field of Params.
type ParamField uint8

const (
	ParamEps     ParamField = iota + 1 // Params.Eps, a float32 kernel argument
	ParamScale                         // Params.Scale, a float32 kernel argument
	ParamMaxBias                       // Params.MaxBias, a float32 kernel argument
	ParamRope                          // Params.Rope, a RopeParams kernel argument
	ParamAxes                          // Params.Axes; only views have it, so no kernel takes it
)

var (
	epsParams     = []Param{{"eps", ParamEps}}
	scaleParam    = []Param{{"s", ParamScale}}
	softMaxParams = []Param{{"scale", ParamScale}, {"max_bias", ParamMaxBias}}
	ropeParams    = []Param{{"rope", ParamRope}}
	axesParams    = []Param{{"axes", ParamAxes}}
)

var opTable = [numOps]Info{
	None:      {"None", "none", "NONE", 0, -1, 0, 0, 0, "", nil, "leaf: input, weight or state"},
	GetRows:   {"GetRows", "get_rows", "GET_ROWS", 40, -1, 2, 2, 0, "GetRows", nil, "dst[:, r] = a[:, b[r]] (rows of a by i32 index)"},
	MulMat:    {"MulMat", "mul_mat", "MUL_MAT", 29, -1, 2, 2, 0, "MulMat", nil, "dst[i, j] = Σk a[k, i]·b[k, j], a broadcast over dims 2, 3"},
	Add:       {"Add", "add", "ADD", 2, -1, 2, 2, FlagInPlace | FlagElementwise, "Add", nil, "dst = a + b, b repeated to a's shape"},
	Sub:       {"Sub", "sub", "SUB", 6, -1, 2, 2, FlagInPlace | FlagElementwise, "Sub", nil, "dst = a - b, b repeated to a's shape"},
	Mul:       {"Mul", "mul", "MUL", 7, -1, 2, 2, FlagInPlace | FlagElementwise, "Mul", nil, "dst = a · b, b repeated to a's shape"},
	Div:       {"Div", "div", "DIV", 8, -1, 2, 2, FlagInPlace | FlagElementwise, "Div", nil, "dst = a / b, b repeated to a's shape"},
	Scale:     {"Scale", "scale", "SCALE", 32, -1, 1, 1, FlagInPlace | FlagElementwise, "Scale", scaleParam, "dst = a · s"},
	Relu:      {"Relu", "relu", "UNARY", 91, 6, 1, 1, FlagInPlace | FlagElementwise, "Relu", nil, "dst = max(a, 0)"},
	Gelu:      {"Gelu", "gelu", "UNARY", 91, 8, 1, 1, FlagInPlace | FlagElementwise, "Gelu", nil, "dst = gelu(a), tanh approximation"},
	Silu:      {"Silu", "silu", "UNARY", 91, 10, 1, 1, FlagInPlace | FlagElementwise, "Silu", nil, "dst = a / (1 + e^-a)"},
	RMSNorm:   {"RMSNorm", "rms_norm", "RMS_NORM", 25, -1, 1, 1, FlagInPlace, "RMSNorm", epsParams, "each row divided by sqrt(mean(row²) + eps)"},
	Norm:      {"Norm", "norm", "NORM", 24, -1, 1, 1, 0, "Norm", epsParams, "each row: (x - mean) / sqrt(var + eps)"}, // not in ggml_op_can_inplace
	SoftMax:   {"SoftMax", "soft_max", "SOFT_MAX", 46, -1, 1, 2, FlagInPlace, "SoftMax", softMaxParams, "row softmax of a·scale + mask (ggml_soft_max_ext)"},
	Rope:      {"Rope", "rope", "ROPE", 48, -1, 2, 2, FlagInPlace, "Rope", ropeParams, "rotary position embedding by positions b (ggml_rope_ext)"},
	Cpy:       {"Cpy", "cpy", "CPY", 34, -1, 2, 2, FlagWritesSrc, "Cpy", nil, "b = a converted to b's type; result is a view of b"},
	Cont:      {"Cont", "cont", "CONT", 35, -1, 1, 1, 0, "Cpy", nil, "a copied into contiguous memory, optionally reshaped"},
	View:      {"View", "view", "VIEW", 37, -1, 1, 1, FlagView, "", nil, "a view of a's memory with given shape, strides and offset"},
	Reshape:   {"Reshape", "reshape", "RESHAPE", 36, -1, 1, 1, FlagView, "", nil, "contiguous a with a new shape"},
	Permute:   {"Permute", "permute", "PERMUTE", 38, -1, 1, 1, FlagView, "", axesParams, "a's dims moved: dim i goes to axis[i]"},
	Transpose: {"Transpose", "transpose", "TRANSPOSE", 39, -1, 1, 1, FlagView, "", nil, "a's first two dims swapped"},
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

// Format prints p's value in params as "key=value"; rope prints the
// parameters that tell its variants apart.
func (p Param) Format(params *Params) string {
	switch p.Field {
	case ParamEps:
		return fmt.Sprintf("%s=%g", p.Key, params.Eps)
	case ParamScale:
		return fmt.Sprintf("%s=%g", p.Key, params.Scale)
	case ParamMaxBias:
		return fmt.Sprintf("%s=%g", p.Key, params.MaxBias)
	case ParamRope:
		r := params.Rope
		return fmt.Sprintf("n_dims=%d mode=%d freq_base=%g freq_scale=%g", r.NDims, r.Mode, r.FreqBase, r.FreqScale)
	case ParamAxes:
		a := params.Axes
		return fmt.Sprintf("%s=%d,%d,%d,%d", p.Key, a[0], a[1], a[2], a[3])
	}
	panic(fmt.Sprintf("BUG: parameter %s: field %d has no format in Param.Format (ops/ops.go)", p.Key, p.Field))
}
