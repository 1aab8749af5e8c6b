package dsl

import (
	"strings"
)

// dtypes are the element types a tensor declaration may use, in the order
// error messages list them. To support a new type (say q8_0), add a row
// here; Check accepts it from then on. The names match tensor.DType.
var dtypes = []struct {
	Name string
	Doc  string
}{
	{"f32", "32-bit IEEE 754 float"},
	{"f16", "16-bit IEEE 754 half float"},
	{"i32", "32-bit signed integer"},
	{"bf16", "16-bit brain float (weights: mul_mat, get_rows)"},
	{"q8_0", "ggml's 8-bit blocks of 32 with an f16 scale (weights: mul_mat, get_rows)"},
	{"q4_0", "ggml's 4-bit blocks of 32 with an f16 scale (weights: mul_mat, get_rows)"},
}

// DTypes returns the names of the valid element types.
func DTypes() []string {
	names := make([]string, len(dtypes))
	for i, d := range dtypes {
		names[i] = d.Name
	}
	return names
}

// IsDType reports whether name is a valid element type.
func IsDType(name string) bool {
	for _, d := range dtypes {
		if d.Name == name {
			return true
		}
	}
	return false
}

// dtypeList returns the valid element types for an error message.
func dtypeList() string { return strings.Join(DTypes(), ", ") }
