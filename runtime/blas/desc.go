package blas

import (
	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// MinBatch is ggml's BLAS threshold: a matrix product goes to BLAS only
// when its result has at least this many rows and columns and it reduces
// over at least this many elements.
const MinBatch = 32

// Description is what the compiler plans against for "blas": an
// accelerator computing in the CPU's host memory (buffer type "CPU"), which
// it reads directly like the CPU does.
var Description = backend.Description{
	Name:       "blas",
	Device:     "ACCEL",
	BufferType: cpu.BufferType,
	SupportsOp: SupportsOp,
	SupportsBufferType: func(b backend.BufferType) bool {
		return b.Host
	},
}

// SupportsOp is ggml-blas's supports_op: views and leaves (which compute
// nothing), and big enough matrix products of contiguous sources with an
// f32 second source and an f32 or f16 first source.
func SupportsOp(q *backend.OpQuery) bool {
	switch q.Op {
	case ops.None, ops.View, ops.Reshape, ops.Permute, ops.Transpose:
		return true
	case ops.MulMat:
		if len(q.Src) != 2 {
			return false
		}
		a, x := q.Src[0], q.Src[1]
		return a.Contiguous && x.Contiguous && x.Type == tensor.F32 &&
			(a.Type == tensor.F32 || a.Type == tensor.F16) &&
			q.Ne[0] >= MinBatch && q.Ne[1] >= MinBatch && x.Ne[0] >= MinBatch
	}
	return false
}
