package metal

import "github.com/graphc/graphc/runtime/ggml"

// Backend is the Metal device as generated code drives it: ggml's device
// "Metal" (MTL0 in newer ggml), through runtime/ggml.
type Backend struct{ *ggml.Backend }

// New opens ggml's Metal device. threads is unused: the device computes.
func New(threads int) (*Backend, error) {
	var err error
	for _, name := range []string{"Metal", "MTL0"} {
		var b *ggml.Backend
		if b, err = ggml.Open(Description.Name, name, Description.BufferType); err == nil {
			return &Backend{b}, nil
		}
	}
	return nil, err
}
