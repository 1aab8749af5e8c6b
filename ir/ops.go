package ir

import "fmt"

// Op is a tensor operation. The table below is the single description of
// every op: DSL name, ggml name, operand counts and flags. String, Verify,
// the DSL lowering and the backend support checks all read it.
type Op uint8

const (
	OpNone Op = iota // a leaf: input, weight or state
	OpGetRows
	OpMulMat
	OpAdd
	OpSub
	OpMul
	OpDiv
	OpScale
	OpRelu
	OpGelu
	OpSilu
	OpRMSNorm
	OpNorm
	OpSoftMax
	OpRope
	OpCpy
	OpCont
	OpView
	OpReshape
	OpPermute
	OpTranspose
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

// OpInfo is one row of the op table.
type OpInfo struct {
	Name    string  // DSL name
	GGML    string  // ggml_op name as in GGML_OP_*, without the prefix
	Unary   int32   // ggml_unary_op for GGML_OP_UNARY ops, else -1
	MinSrcs int     // tensor operands
	MaxSrcs int     //
	Flags   OpFlags //
	Doc     string  // semantics, one line
}

var opTable = [numOps]OpInfo{
	OpNone:      {"none", "NONE", -1, 0, 0, 0, "leaf: input, weight or state"},
	OpGetRows:   {"get_rows", "GET_ROWS", -1, 2, 2, 0, "dst[:, r] = a[:, b[r]] (rows of a by i32 index)"},
	OpMulMat:    {"mul_mat", "MUL_MAT", -1, 2, 2, 0, "dst[i, j] = Σk a[k, i]·b[k, j], a broadcast over dims 2, 3"},
	OpAdd:       {"add", "ADD", -1, 2, 2, FlagInPlace | FlagElementwise, "dst = a + b, b repeated to a's shape"},
	OpSub:       {"sub", "SUB", -1, 2, 2, FlagInPlace | FlagElementwise, "dst = a - b, b repeated to a's shape"},
	OpMul:       {"mul", "MUL", -1, 2, 2, FlagInPlace | FlagElementwise, "dst = a · b, b repeated to a's shape"},
	OpDiv:       {"div", "DIV", -1, 2, 2, FlagInPlace | FlagElementwise, "dst = a / b, b repeated to a's shape"},
	OpScale:     {"scale", "SCALE", -1, 1, 1, FlagInPlace | FlagElementwise, "dst = a · s"},
	OpRelu:      {"relu", "UNARY", 6, 1, 1, FlagInPlace | FlagElementwise, "dst = max(a, 0)"},
	OpGelu:      {"gelu", "UNARY", 8, 1, 1, FlagInPlace | FlagElementwise, "dst = gelu(a), tanh approximation"},
	OpSilu:      {"silu", "UNARY", 10, 1, 1, FlagInPlace | FlagElementwise, "dst = a / (1 + e^-a)"},
	OpRMSNorm:   {"rms_norm", "RMS_NORM", -1, 1, 1, FlagInPlace, "each row divided by sqrt(mean(row²) + eps)"},
	OpNorm:      {"norm", "NORM", -1, 1, 1, 0, "each row: (x - mean) / sqrt(var + eps)"}, // not in ggml_op_can_inplace
	OpSoftMax:   {"soft_max", "SOFT_MAX", -1, 1, 2, FlagInPlace, "row softmax of a·scale + mask (ggml_soft_max_ext)"},
	OpRope:      {"rope", "ROPE", -1, 2, 2, FlagInPlace, "rotary position embedding by positions b (ggml_rope_ext)"},
	OpCpy:       {"cpy", "CPY", -1, 2, 2, FlagWritesSrc, "b = a converted to b's type; result is a view of b"},
	OpCont:      {"cont", "CONT", -1, 1, 1, 0, "a copied into contiguous memory, optionally reshaped"},
	OpView:      {"view", "VIEW", -1, 1, 1, FlagView, "a view of a's memory with given shape, strides and offset"},
	OpReshape:   {"reshape", "RESHAPE", -1, 1, 1, FlagView, "contiguous a with a new shape"},
	OpPermute:   {"permute", "PERMUTE", -1, 1, 1, FlagView, "a's dims moved: dim i goes to axis[i]"},
	OpTranspose: {"transpose", "TRANSPOSE", -1, 1, 1, FlagView, "a's first two dims swapped"},
}

// Info returns op's table row.
func (op Op) Info() *OpInfo {
	if op >= numOps {
		panic(fmt.Sprintf("BUG: op %d out of range", op))
	}
	return &opTable[op]
}

func (op Op) String() string { return op.Info().Name }

// GGMLName is the name ggml prints for op (GGML_OP_*).
func (op Op) GGMLName() string { return op.Info().GGML }

// IsView reports whether op's result is a view over its first source.
func (op Op) IsView() bool { return op.Info().Flags&FlagView != 0 }

// CanInPlace mirrors ggml_op_can_inplace.
func (op Op) CanInPlace() bool { return op.Info().Flags&FlagInPlace != 0 }

// LookupOp finds an op by DSL name.
func LookupOp(name string) (Op, bool) {
	for i := range opTable {
		if opTable[i].Name == name && Op(i) != OpNone {
			return Op(i), true
		}
	}
	return 0, false
}

// LookupGGMLOp finds an op by ggml name and, for UNARY, sub-op.
func LookupGGMLOp(name string, unary int32) (Op, bool) {
	for i := range opTable {
		r := &opTable[i]
		if r.GGML == name && (r.Unary < 0 || r.Unary == unary) {
			return Op(i), true
		}
	}
	return 0, false
}

// Ops lists every op but OpNone in table order.
func Ops() []Op {
	ops := make([]Op, 0, numOps-1)
	for op := OpNone + 1; op < numOps; op++ {
		ops = append(ops, op)
	}
	return ops
}
