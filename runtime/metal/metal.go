// Package metal is graphc's Metal backend (Apple GPUs). Its description is
// plain Go that compiles everywhere. Metal's buffers are unified memory,
// but ggml's Metal buffer type reports is_host false (since ggml 5beaed9c)
// and graphc reaches a ggml device's tensors only through ggml, so the
// plan treats Metal's memory as the device's own, copied to and from like
// any GPU's. Execution is ggml's own Metal backend (libggml-metal), loaded
// at run time through runtime/ggml; untested on Apple hardware.
package metal

import (
	"runtime"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/runtime/ggml"
)

// BufferType is Metal's memory as ggml's Metal buffers offer it: not host
// memory to graphc (see the package comment).
var BufferType = backend.BufferType{Name: "Metal", Alignment: 32}

// Description is what the compiler plans against for "metal".
var Description = backend.Description{
	Name:               "metal",
	Device:             "GPU",
	BufferType:         BufferType,
	SupportsOp:         func(q *backend.OpQuery) bool { return true },
	SupportsBufferType: BufferType.Only,
	Async:              true,
}

// Available reports whether a Metal device can exist here — on macOS,
// with ggml's libraries and its Metal backend library — without loading
// them; whether it does only New can tell.
func Available() (bool, string) {
	if runtime.GOOS != "darwin" {
		return false, "Metal exists only on macOS (Apple GPUs); this is " + runtime.GOOS
	}
	if _, err := ggml.BackendLibrary("metal"); err != nil {
		return false, err.Error()
	}
	return true, ""
}
