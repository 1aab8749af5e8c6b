package cpu

import "github.com/graphc/graphc/runtime"

// BufferType is host memory, shared by every backend that computes in it
// (BLAS, and the CPU itself).
var BufferType = runtime.BufferType{Name: "CPU", Host: true, Alignment: 32}

// Description is what the compiler plans against: the CPU runs every op
// on every type and reads only host memory. It is the last backend of
// every target.
var Description = runtime.Description{
	Name:       "cpu",
	Device:     "CPU",
	BufferType: BufferType,
	SupportsOp: func(*runtime.OpQuery) bool { return true },
	SupportsBufferType: func(b runtime.BufferType) bool {
		return b.Host
	},
	Parts: true,
}
