// Package cuda is graphc's CUDA backend, kind cuda<N>: ggml's own CUDA
// backend (libggml-cuda), loaded at run time through runtime/ggml. What
// the compiler plans against is backend.CUDA, plain Go that compiles
// everywhere, so any machine can plan and generate code for CUDA.
package cuda

import (
	"fmt"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/runtime/ggml"
)

// Backend is CUDA device n as generated code drives it: ggml's device
// CUDA<n>, through runtime/ggml.
type Backend struct{ *ggml.Backend }

// New opens ggml's device CUDA<n>. threads is unused: the device computes.
func New(n, threads int) (*Backend, error) {
	d := backend.CUDA(n)
	b, err := ggml.Open(d.Name, fmt.Sprintf("CUDA%d", n), d.BufferType)
	if err != nil {
		return nil, err
	}
	return &Backend{b}, nil
}
