package tensor

import "fmt"

// DType is an element type, numbered as ggml's enum ggml_type, which is
// also how GGUF files store it. The type table below has a row for every
// type ggml defines, so that any file can be read and listed; graphc
// computes with those whose row is Supported.
type DType uint32

// The types, as include/ggml.h numbers them.
const (
	F32     DType = 0
	F16     DType = 1
	Q4_0    DType = 2
	Q4_1    DType = 3
	Q5_0    DType = 6
	Q5_1    DType = 7
	Q8_0    DType = 8
	Q8_1    DType = 9
	Q2_K    DType = 10
	Q3_K    DType = 11
	Q4_K    DType = 12
	Q5_K    DType = 13
	Q6_K    DType = 14
	Q8_K    DType = 15
	IQ2_XXS DType = 16
	IQ2_XS  DType = 17
	IQ3_XXS DType = 18
	IQ1_S   DType = 19
	IQ4_NL  DType = 20
	IQ3_S   DType = 21
	IQ2_S   DType = 22
	IQ4_XS  DType = 23
	I8      DType = 24
	I16     DType = 25
	I32     DType = 26
	I64     DType = 27
	F64     DType = 28
	IQ1_M   DType = 29
	BF16    DType = 30
	TQ1_0   DType = 34
	TQ2_0   DType = 35
	MXFP4   DType = 39
	NVFP4   DType = 40
	Q1_0    DType = 41
	Q2_0    DType = 42

	numDTypes = Q2_0 + 1
)

// Traits is one row of the type table.
type Traits struct {
	Name  string // ggml's type name: "f32", "q8_0", "q4_K"
	Block int    // elements per block (ggml_blck_size), 1 unless quantized
	Size  int    // bytes per block (ggml_type_size): sizeof(block_*), QK_K = 256
	// Supported: graphc's tensors, kernels and the DSL take the type.
	// WeightOnly: only as a matrix product's weight, an embedding table
	// or a view's source (as most of ggml's kernels, graphc's take no
	// quantized operands elsewhere).
	Supported, WeightOnly bool
	Doc                   string // for the DSL's reference
	// Encode appends len(src) values (whole blocks) in the type's layout
	// with ggml's reference rounding (quantize_row_*_ref); Decode appends
	// n values (whole blocks) read from src (dequantize_row_*). Nil for a
	// type graphc does not convert from or to float32.
	Encode func(dst []byte, src []float32) []byte
	Decode func(dst []float32, src []byte, n int) []float32
}

var types = [numDTypes]Traits{
	F32:  {Name: "f32", Block: 1, Size: 4, Supported: true, Doc: "32-bit IEEE 754 float", Encode: encodeF32, Decode: decodeF32},
	F16:  {Name: "f16", Block: 1, Size: 2, Supported: true, Doc: "16-bit IEEE 754 half float", Encode: encodeF16, Decode: decodeF16},
	Q4_0: {Name: "q4_0", Block: 32, Size: 2 + 16, Supported: true, WeightOnly: true, Doc: "ggml's 4-bit blocks of 32 with an f16 scale", Encode: encodeQ4_0, Decode: decodeQ4_0},                           // d, qs[16]
	Q4_1: {Name: "q4_1", Block: 32, Size: 2 + 2 + 16, Doc: "ggml's 4-bit blocks of 32 with an f16 scale and min", Encode: encodeQ4_1, Decode: decodeQ4_1},                                                  // d, m, qs[16]
	Q5_0: {Name: "q5_0", Block: 32, Size: 2 + 4 + 16, Doc: "ggml's 5-bit blocks of 32 with an f16 scale", Encode: encodeQ5_0, Decode: decodeQ5_0},                                                          // d, qh[4], qs[16]
	Q5_1: {Name: "q5_1", Block: 32, Size: 2 + 2 + 4 + 16, Doc: "ggml's 5-bit blocks of 32 with an f16 scale and min", Encode: encodeQ5_1, Decode: decodeQ5_1},                                              // d, m, qh[4], qs[16]
	Q8_0: {Name: "q8_0", Block: 32, Size: 2 + 32, Supported: true, WeightOnly: true, Doc: "ggml's 8-bit blocks of 32 with an f16 scale", Encode: encodeQ8_0, Decode: decodeQ8_0},                           // d, qs[32]
	Q8_1: {Name: "q8_1", Block: 32, Size: 2 + 2 + 32},                                                                                                                                                      // d, s, qs[32]
	Q2_K: {Name: "q2_K", Block: 256, Size: 16 + 64 + 2*2, Doc: "ggml's 2-bit K-quant: super-blocks of 256, 4-bit scales and mins per 16", Encode: encodeQ2_K, Decode: decodeQ2_K},                          // scales[QK_K/16], qs[QK_K/4], d, dmin
	Q3_K: {Name: "q3_K", Block: 256, Size: 32 + 64 + 12 + 2, Doc: "ggml's 3-bit K-quant: super-blocks of 256, 6-bit scales per 16", Encode: encodeQ3_K, Decode: decodeQ3_K},                                // hmask[QK_K/8], qs[QK_K/4], scales[12], d
	Q4_K: {Name: "q4_K", Block: 256, Size: 2*2 + 12 + 128, Doc: "ggml's 4-bit K-quant: super-blocks of 256, 6-bit scales and mins per 32", Encode: encodeQ4_K, Decode: decodeQ4_K},                         // d, dmin, scales[12], qs[QK_K/2]
	Q5_K: {Name: "q5_K", Block: 256, Size: 2*2 + 12 + 32 + 128, Doc: "ggml's 5-bit K-quant: super-blocks of 256, 6-bit scales and mins per 32", Encode: encodeQ5_K, Decode: decodeQ5_K},                    // d, dmin, scales[12], qh[QK_K/8], qs[QK_K/2]
	Q6_K: {Name: "q6_K", Block: 256, Size: 128 + 64 + 16 + 2, Doc: "ggml's 6-bit K-quant: super-blocks of 256, 8-bit scales per 16", Encode: encodeQ6_K, Decode: decodeQ6_K},                               // ql[QK_K/2], qh[QK_K/4], scales[QK_K/16], d
	Q8_K: {Name: "q8_K", Block: 256, Size: 4 + 256 + 16*2, Doc: "ggml's 8-bit blocks of 256 with an f32 scale and sums of 16 (the K-quants' dot-product operand)", Encode: encodeQ8_K, Decode: decodeQ8_K}, // float d, qs[QK_K], bsums[QK_K/16] int16

	IQ2_XXS: {Name: "iq2_xxs", Block: 256, Size: 2 + 32*2},
	IQ2_XS:  {Name: "iq2_xs", Block: 256, Size: 2 + 32*2 + 8},
	IQ3_XXS: {Name: "iq3_xxs", Block: 256, Size: 2 + 3*32},
	IQ1_S:   {Name: "iq1_s", Block: 256, Size: 2 + 32 + 16},
	IQ4_NL:  {Name: "iq4_nl", Block: 32, Size: 2 + 16, Doc: "ggml's 4-bit non-linear blocks of 32 (16 fixed levels) with an f16 scale", Encode: encodeIQ4NL, Decode: decodeIQ4NL},
	IQ3_S:   {Name: "iq3_s", Block: 256, Size: 2 + 13*8 + 4},
	IQ2_S:   {Name: "iq2_s", Block: 256, Size: 2 + 64 + 16},
	IQ4_XS:  {Name: "iq4_xs", Block: 256, Size: 2 + 2 + 4 + 128, Doc: "ggml's 4-bit non-linear super-blocks of 256, 6-bit scales per 32", Encode: encodeIQ4XS, Decode: decodeIQ4XS},
	I8:      {Name: "i8", Block: 1, Size: 1},
	I16:     {Name: "i16", Block: 1, Size: 2},
	I32:     {Name: "i32", Block: 1, Size: 4, Supported: true, Doc: "32-bit signed integer"},
	I64:     {Name: "i64", Block: 1, Size: 8},
	F64:     {Name: "f64", Block: 1, Size: 8},
	IQ1_M:   {Name: "iq1_m", Block: 256, Size: 32 + 16 + 8},
	BF16:    {Name: "bf16", Block: 1, Size: 2, Supported: true, WeightOnly: true, Doc: "16-bit brain float", Encode: encodeBF16, Decode: decodeBF16},
	TQ1_0:   {Name: "tq1_0", Block: 256, Size: 2 + 4 + (256-4*256/64)/5},
	TQ2_0:   {Name: "tq2_0", Block: 256, Size: 2 + 64},
	MXFP4:   {Name: "mxfp4", Block: 32, Size: 1 + 16},
	NVFP4:   {Name: "nvfp4", Block: 64, Size: 4 + 32},
	Q1_0:    {Name: "q1_0", Block: 128, Size: 2 + 16},
	Q2_0:    {Name: "q2_0", Block: 64, Size: 2 + 16},
}

// Traits returns t's row of the type table; an id ggml does not define
// has the zero row.
func (t DType) Traits() *Traits {
	if t < numDTypes {
		return &types[t]
	}
	return &Traits{}
}

// Known reports whether ggml defines t (the table has a row for it).
func (t DType) Known() bool { return t.Traits().Name != "" }

// Supported reports whether graphc computes with t.
func (t DType) Supported() bool { return t.Traits().Supported }

func (t DType) String() string {
	if n := t.Traits().Name; n != "" {
		return n
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// Size is the size of one element in bytes or, for a block-quantized type,
// of one block of BlockSize elements (ggml_type_size); 0 for an unknown id.
func (t DType) Size() int { return t.Traits().Size }

// BlockSize is the number of elements per block: 1 unless quantized, 0
// for an unknown id.
func (t DType) BlockSize() int { return t.Traits().Block }

// Quantized reports whether t is block-quantized.
func (t DType) Quantized() bool { return t.Traits().Block > 1 }

// RowSize is the bytes of n consecutive elements (ggml_row_size); n must be
// a multiple of BlockSize.
func (t DType) RowSize(n int) int { return n / t.BlockSize() * t.Size() }

// DTypes lists the types graphc computes with, in the table's order.
func DTypes() []DType {
	var out []DType
	for i := range types {
		if types[i].Supported {
			out = append(out, DType(i))
		}
	}
	return out
}

// ParseDType maps a type name ("f32", "q8_0", …) to its DType, supported
// or not.
func ParseDType(s string) (DType, bool) {
	for i := range types {
		if types[i].Name == s && s != "" {
			return DType(i), true
		}
	}
	return 0, false
}
