package gguf

import "fmt"

// GGMLType is a tensor's element type, numbered as ggml's enum ggml_type
// (ggml-org/ggml include/ggml.h). The numbers are part of the file format.
type GGMLType uint32

// ggml's type ids. Ids 4, 5, 31–33 and 36–38 were removed from ggml and are
// rejected like any unknown id.
const (
	F32     GGMLType = 0
	F16     GGMLType = 1
	Q4_0    GGMLType = 2
	Q4_1    GGMLType = 3
	Q5_0    GGMLType = 6
	Q5_1    GGMLType = 7
	Q8_0    GGMLType = 8
	Q8_1    GGMLType = 9
	Q2_K    GGMLType = 10
	Q3_K    GGMLType = 11
	Q4_K    GGMLType = 12
	Q5_K    GGMLType = 13
	Q6_K    GGMLType = 14
	Q8_K    GGMLType = 15
	IQ2_XXS GGMLType = 16
	IQ2_XS  GGMLType = 17
	IQ3_XXS GGMLType = 18
	IQ1_S   GGMLType = 19
	IQ4_NL  GGMLType = 20
	IQ3_S   GGMLType = 21
	IQ2_S   GGMLType = 22
	IQ4_XS  GGMLType = 23
	I8      GGMLType = 24
	I16     GGMLType = 25
	I32     GGMLType = 26
	I64     GGMLType = 27
	F64     GGMLType = 28
	IQ1_M   GGMLType = 29
	BF16    GGMLType = 30
	TQ1_0   GGMLType = 34
	TQ2_0   GGMLType = 35
	MXFP4   GGMLType = 39
	NVFP4   GGMLType = 40
	Q1_0    GGMLType = 41
	Q2_0    GGMLType = 42
)

// typeTraits is ggml's type_traits table (src/ggml.c): the name, the number
// of elements in a block and the size of a block in bytes. A tensor row of
// ne0 elements takes ne0/blck*size bytes, and ne0 must be a multiple of blck.
// The block sizes are the sizeof(block_*) that src/ggml-common.h
// static_asserts, with QK_K = 256.
var typeTraits = map[GGMLType]struct {
	name       string
	blck, size int64
}{
	F32:     {"f32", 1, 4},
	F16:     {"f16", 1, 2},
	Q4_0:    {"q4_0", 32, 2 + 16},            // d, qs[16]
	Q4_1:    {"q4_1", 32, 2 + 2 + 16},        // d, m, qs[16]
	Q5_0:    {"q5_0", 32, 2 + 4 + 16},        // d, qh[4], qs[16]
	Q5_1:    {"q5_1", 32, 2 + 2 + 4 + 16},    // d, m, qh[4], qs[16]
	Q8_0:    {"q8_0", 32, 2 + 32},            // d, qs[32]
	Q8_1:    {"q8_1", 32, 2 + 2 + 32},        // d, s, qs[32]
	Q2_K:    {"q2_K", 256, 2*2 + 16 + 64},    // d, dmin, scales[QK_K/16], qs[QK_K/4]
	Q3_K:    {"q3_K", 256, 2 + 64 + 32 + 12}, // d, qs[QK_K/4], hmask[QK_K/8], scales[12]
	Q4_K:    {"q4_K", 256, 2*2 + 12 + 128},   // d, dmin, scales[12], qs[QK_K/2]
	Q5_K:    {"q5_K", 256, 2*2 + 12 + 128 + 32},
	Q6_K:    {"q6_K", 256, 2 + 16 + 3*256/4},
	Q8_K:    {"q8_K", 256, 4 + 256 + 16*2}, // float d, qs[QK_K], bsums[QK_K/16] int16
	IQ2_XXS: {"iq2_xxs", 256, 2 + 32*2},
	IQ2_XS:  {"iq2_xs", 256, 2 + 32*2 + 8},
	IQ3_XXS: {"iq3_xxs", 256, 2 + 3*32},
	IQ1_S:   {"iq1_s", 256, 2 + 32 + 16},
	IQ4_NL:  {"iq4_nl", 32, 2 + 16},
	IQ3_S:   {"iq3_s", 256, 2 + 13*8 + 4},
	IQ2_S:   {"iq2_s", 256, 2 + 64 + 16},
	IQ4_XS:  {"iq4_xs", 256, 2 + 2 + 4 + 128},
	I8:      {"i8", 1, 1},
	I16:     {"i16", 1, 2},
	I32:     {"i32", 1, 4},
	I64:     {"i64", 1, 8},
	F64:     {"f64", 1, 8},
	IQ1_M:   {"iq1_m", 256, 32 + 16 + 8},
	BF16:    {"bf16", 1, 2},
	TQ1_0:   {"tq1_0", 256, 2 + 4 + (256-4*256/64)/5},
	TQ2_0:   {"tq2_0", 256, 2 + 64},
	MXFP4:   {"mxfp4", 32, 1 + 16},
	NVFP4:   {"nvfp4", 64, 4 + 32},
	Q1_0:    {"q1_0", 128, 2 + 16},
	Q2_0:    {"q2_0", 64, 2 + 16},
}

// Known reports whether t is a ggml type this package has traits for.
func (t GGMLType) Known() bool { _, ok := typeTraits[t]; return ok }

// String is ggml's type name ("f32", "q8_0", "q4_K"), or "type(N)" for an
// unknown id.
func (t GGMLType) String() string {
	if tr, ok := typeTraits[t]; ok {
		return tr.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// BlockSize is the number of elements in one block (ggml_blck_size), 0 for
// an unknown type.
func (t GGMLType) BlockSize() int64 { return typeTraits[t].blck }

// TypeSize is the size in bytes of one block (ggml_type_size), 0 for an
// unknown type.
func (t GGMLType) TypeSize() int64 { return typeTraits[t].size }

// ValueType is the type of a metadata value, numbered as the format's enum
// gguf_metadata_value_type.
type ValueType uint32

// Metadata value types.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var valueTypeNames = [...]string{
	TypeUint8: "u8", TypeInt8: "i8", TypeUint16: "u16", TypeInt16: "i16",
	TypeUint32: "u32", TypeInt32: "i32", TypeFloat32: "f32", TypeBool: "bool",
	TypeString: "str", TypeArray: "arr", TypeUint64: "u64", TypeInt64: "i64",
	TypeFloat64: "f64",
}

// String is the type's short name, as ggml's gguf_type_name prints it.
func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("value_type(%d)", uint32(t))
}

// fixedSize is the encoded size of a scalar of type t, 0 for strings,
// arrays and unknown types.
func (t ValueType) fixedSize() int64 {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// valueTypeOf maps a Go value to its metadata type: the scalars uint8 …
// float64, bool and string map to themselves, a slice of one of them to an
// array of it, and []any to an array of arrays whose elements are such
// slices. elem is the element type of an array.
func valueTypeOf(v any) (t, elem ValueType, ok bool) {
	switch v.(type) {
	case uint8:
		return TypeUint8, 0, true
	case int8:
		return TypeInt8, 0, true
	case uint16:
		return TypeUint16, 0, true
	case int16:
		return TypeInt16, 0, true
	case uint32:
		return TypeUint32, 0, true
	case int32:
		return TypeInt32, 0, true
	case float32:
		return TypeFloat32, 0, true
	case bool:
		return TypeBool, 0, true
	case string:
		return TypeString, 0, true
	case uint64:
		return TypeUint64, 0, true
	case int64:
		return TypeInt64, 0, true
	case float64:
		return TypeFloat64, 0, true
	case []uint8:
		return TypeArray, TypeUint8, true
	case []int8:
		return TypeArray, TypeInt8, true
	case []uint16:
		return TypeArray, TypeUint16, true
	case []int16:
		return TypeArray, TypeInt16, true
	case []uint32:
		return TypeArray, TypeUint32, true
	case []int32:
		return TypeArray, TypeInt32, true
	case []float32:
		return TypeArray, TypeFloat32, true
	case []bool:
		return TypeArray, TypeBool, true
	case []string:
		return TypeArray, TypeString, true
	case []uint64:
		return TypeArray, TypeUint64, true
	case []int64:
		return TypeArray, TypeInt64, true
	case []float64:
		return TypeArray, TypeFloat64, true
	case []any:
		return TypeArray, TypeArray, true
	}
	return 0, 0, false
}
