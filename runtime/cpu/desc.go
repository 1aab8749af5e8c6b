package cpu

import (
	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/ops"
)

// BufferType is host memory, shared by every backend that computes in it
// (BLAS, and the CPU itself).
var BufferType = backend.BufferType{Name: "CPU", Host: true, Alignment: 32}

// Description is what the compiler plans against: the CPU runs every op
// on every type and reads only host memory. It is the last backend of
// every target.
var Description = backend.Description{
	Name:       "cpu",
	Device:     "CPU",
	BufferType: BufferType,
	SupportsOp: func(*backend.OpQuery) bool { return true },
	SupportsBufferType: func(b backend.BufferType) bool {
		return b.Host
	},
	Parts:         true,
	PackWeight:    packWeight,
	GroupProducts: maxGroup,
}

// packWeight is repack.cpp's extra_buffer_type::supports_op: a matrix
// product reads a dense Packable weight from the copy Pack makes.
func packWeight(q *backend.OpQuery) int64 {
	if q.Op != ops.MulMat || len(q.Src) == 0 {
		return 0
	}
	a := q.Src[0]
	if !a.Contiguous || !Packable(a.Type) {
		return 0
	}
	return PackedBytes(a.Type, [4]int{int(a.Ne[0]), int(a.Ne[1]), int(a.Ne[2]), int(a.Ne[3])})
}
