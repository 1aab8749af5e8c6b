// Package metal is graphc's Metal backend (Apple GPUs). Its description is
// plain Go that compiles everywhere; Metal's buffers are unified memory,
// host-visible, which the planner uses to skip copies that ggml makes.
// Execution is ggml's own Metal backend (libggml-metal), loaded at run time
// through runtime/ggml; untested on Apple hardware.
package metal

import (
	"github.com/graphc/graphc/runtime"
	"github.com/graphc/graphc/runtime/ggml"
)

// BufferType is Metal's shared (unified) memory.
var BufferType = runtime.BufferType{Name: "Metal", Host: true, Alignment: 32}

// Description is what the compiler plans against for "metal".
var Description = runtime.Description{
	Name:       "metal",
	Device:     "GPU",
	BufferType: BufferType,
	SupportsOp: func(q *runtime.OpQuery) bool { return true },
	SupportsBufferType: func(b runtime.BufferType) bool {
		return b.Name == BufferType.Name || b.Host
	},
	Async: true,
}

// Available reports whether ggml's libraries can be found, without loading
// them; whether a Metal device exists only New can tell.
func Available() (bool, string) {
	if _, err := ggml.Library(); err != nil {
		return false, err.Error()
	}
	return true, ""
}
