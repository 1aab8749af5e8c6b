package cuda

import (
	"fmt"

	"github.com/graphc/graphc/runtime/ggml"
)

// Backend is CUDA device n as generated code drives it: ggml's device
// CUDA<n>, through runtime/ggml.
type Backend struct{ *ggml.Backend }

// New opens ggml's device CUDA<n>. threads is unused: the device computes.
func New(n, threads int) (*Backend, error) {
	d := Description(n)
	b, err := ggml.Open(d.Name, fmt.Sprintf("CUDA%d", n), d.BufferType)
	if err != nil {
		return nil, err
	}
	return &Backend{b}, nil
}
