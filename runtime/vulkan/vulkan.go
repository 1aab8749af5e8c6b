// Package vulkan is backend kind vulkan<N>: ggml's Vulkan device Vulkan<N>,
// driven through runtime/ggml, which loads ggml's libraries at run time.
// What the compiler plans against is backend.Vulkan, plain Go that
// compiles everywhere.
package vulkan

import (
	"fmt"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/runtime/ggml"
)

// Backend is Vulkan device n as generated code drives it.
type Backend struct{ *ggml.Backend }

// New opens ggml's device Vulkan<n>. threads is unused: the device
// computes.
func New(n, threads int) (*Backend, error) {
	d := backend.Vulkan(n)
	b, err := ggml.Open(d.Name, fmt.Sprintf("Vulkan%d", n), d.BufferType)
	if err != nil {
		return nil, err
	}
	return &Backend{b}, nil
}
