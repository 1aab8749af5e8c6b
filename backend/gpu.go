package backend

import (
	"fmt"
	"runtime"

	"github.com/graphc/graphc/backend/libs"
)

// ggml's GPU devices, which runtime/cuda, runtime/vulkan and runtime/metal
// drive through runtime/ggml. Their descriptions are plain Go that
// compiles everywhere, so any machine can plan and generate code for them.

// OffloadBatch is ggml's default minimum batch for offloading an op whose
// weight lives in host memory (GGML_OP_OFFLOAD_MIN_BATCH).
const OffloadBatch = 32

// CUDA returns the description of CUDA device n, "cuda<n>". Like ggml's
// CUDA backend it supports every op graphc has on f32/f16, has its own
// device memory (not host-visible) and offloads big-batch ops.
func CUDA(n int) *Description {
	bt := BufferType{Name: fmt.Sprintf("CUDA%d", n), Host: false, Alignment: 128}
	return &Description{
		Name:               fmt.Sprintf("cuda%d", n),
		Device:             "GPU",
		BufferType:         bt,
		SupportsOp:         func(q *OpQuery) bool { return true },
		SupportsBufferType: bt.Only,
		OffloadOp:          OffloadBigBatches,
		OffloadMinBatch:    OffloadBatch,
		Async:              true,
	}
}

// VulkanAlignment is the alignment plans for Vulkan devices assume: the
// largest minStorageBufferOffsetAlignment Vulkan allows, which ggml
// reports as its buffer type's alignment, so that a plan suits every
// device.
const VulkanAlignment = 256

// Vulkan returns the description of Vulkan device n, "vulkan<n>": like
// ggml's Vulkan backend, a GPU with memory of its own (buffer type
// Vulkan<n>), supporting every op graphc has and offloading big batches.
func Vulkan(n int) *Description {
	bt := BufferType{Name: fmt.Sprintf("Vulkan%d", n), Alignment: VulkanAlignment}
	return &Description{
		Name:               fmt.Sprintf("vulkan%d", n),
		Device:             "GPU",
		BufferType:         bt,
		SupportsOp:         func(*OpQuery) bool { return true },
		SupportsBufferType: bt.Only,
		OffloadOp:          OffloadBigBatches,
		OffloadMinBatch:    OffloadBatch,
		Async:              true,
	}
}

// MetalBufferType is Metal's memory as ggml's Metal buffers offer it. It
// is unified memory, but ggml's Metal buffer type reports is_host false
// (since ggml 5beaed9c) and graphc reaches a ggml device's tensors only
// through ggml, so the plan treats it as the device's own, copied to and
// from like any GPU's.
var MetalBufferType = BufferType{Name: "Metal", Alignment: 32}

// Metal is what the compiler plans against for "metal" (Apple GPUs):
// like ggml's Metal device it offloads only matrix products.
var Metal = Description{
	Name:               "metal",
	Device:             "GPU",
	BufferType:         MetalBufferType,
	SupportsOp:         func(q *OpQuery) bool { return true },
	SupportsBufferType: MetalBufferType.Only,
	OffloadOp:          OffloadBigProducts,
	OffloadMinBatch:    OffloadBatch,
	Async:              true,
}

// ggmlAvailable is the Available of the kind whose device is ggml's
// backend stem ("cuda": libggml-cuda): whether ggml's libraries and that
// backend's library can be found, without loading them; whether a device
// exists only the runtime's New can tell.
func ggmlAvailable(stem string) func() (bool, string) {
	return func() (bool, string) {
		if _, err := libs.FindGGMLBackend(stem); err != nil {
			return false, err.Error()
		}
		return true, ""
	}
}

// metalAvailable: a Metal device can exist only on macOS, with ggml's
// Metal backend library.
func metalAvailable() (bool, string) {
	if runtime.GOOS != "darwin" {
		return false, "Metal exists only on macOS (Apple GPUs); this is " + runtime.GOOS
	}
	return ggmlAvailable("metal")()
}
