// Package metal is graphc's Metal backend (Apple GPUs). Its description is
// plain Go that compiles everywhere; Metal's buffers are unified memory,
// host-visible, which the planner uses to skip copies that ggml makes.
// Nothing executes on a Metal device yet: Available says so, and New fails
// with that reason.
package metal

import "github.com/graphc/graphc/runtime"

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

// Available reports whether Metal can be used in this process, and why not.
func Available() (bool, string) {
	return false, "the Metal execution backend is not built into this graphc yet; plans for metal targets compile but do not run"
}
