// Package vulkan is backend kind vulkan<N>: ggml's Vulkan device Vulkan<N>,
// driven through runtime/ggml. Its description is plain Go that compiles
// everywhere; New loads ggml's libraries at run time.
package vulkan

import (
	"fmt"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/runtime/ggml"
)

// Alignment is the alignment plans for Vulkan devices assume: the largest
// minStorageBufferOffsetAlignment Vulkan allows, which ggml reports as its
// buffer type's alignment, so that a plan suits every device.
const Alignment = 256

// Description returns the description of Vulkan device n, "vulkan<n>":
// like ggml's Vulkan backend, a GPU with memory of its own (buffer type
// Vulkan<n>), supporting every op graphc has and offloading big batches.
func Description(n int) *backend.Description {
	bt := backend.BufferType{Name: fmt.Sprintf("Vulkan%d", n), Alignment: Alignment}
	return &backend.Description{
		Name:               fmt.Sprintf("vulkan%d", n),
		Device:             "GPU",
		BufferType:         bt,
		SupportsOp:         func(*backend.OpQuery) bool { return true },
		SupportsBufferType: bt.Only,
		OffloadOp:          backend.OffloadBigBatches,
		OffloadMinBatch:    32,
		Async:              true,
	}
}

// Available reports whether ggml's libraries and its Vulkan backend
// library can be found, without loading them; whether the device exists
// only New can tell.
func Available() (bool, string) {
	if _, err := ggml.BackendLibrary("vulkan"); err != nil {
		return false, err.Error()
	}
	return true, ""
}

// Backend is Vulkan device n as generated code drives it.
type Backend struct{ *ggml.Backend }

// New opens ggml's device Vulkan<n>. threads is unused: the device
// computes.
func New(n, threads int) (*Backend, error) {
	d := Description(n)
	b, err := ggml.Open(d.Name, fmt.Sprintf("Vulkan%d", n), d.BufferType)
	if err != nil {
		return nil, err
	}
	return &Backend{b}, nil
}
