// Package metal is graphc's Metal backend (Apple GPUs), kind metal: ggml's
// own Metal backend (libggml-metal), loaded at run time through
// runtime/ggml; untested on Apple hardware. What the compiler plans
// against is backend.Metal, plain Go that compiles everywhere; it treats
// Metal's memory as the device's own (see backend.MetalBufferType).
package metal

import (
	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/runtime/ggml"
)

// Backend is the Metal device as generated code drives it: ggml's device
// "Metal" (MTL0 in newer ggml), through runtime/ggml.
type Backend struct{ *ggml.Backend }

// New opens ggml's Metal device. threads is unused: the device computes.
func New(threads int) (*Backend, error) {
	var err error
	for _, name := range []string{"Metal", "MTL0"} {
		var b *ggml.Backend
		if b, err = ggml.Open(backend.Metal.Name, name, backend.Metal.BufferType); err == nil {
			return &Backend{b}, nil
		}
	}
	return nil, err
}
