package dsl

import (
	"strings"

	"github.com/graphc/graphc/tensor"
)

// DTypes returns the names of the element types a tensor declaration may
// use, the type table's supported ones (package tensor), in its order.
func DTypes() []string {
	var names []string
	for _, dt := range tensor.DTypes() {
		names = append(names, dt.String())
	}
	return names
}

// IsDType reports whether name is a valid element type.
func IsDType(name string) bool {
	dt, ok := tensor.ParseDType(name)
	return ok && dt.Supported()
}

// dtypeList returns the valid element types for an error message.
func dtypeList() string { return strings.Join(DTypes(), ", ") }
