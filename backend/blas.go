package backend

import (
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// BLASMinBatch is ggml's BLAS threshold: a matrix product goes to BLAS
// only when its result has at least this many rows and columns and it
// reduces over at least this many elements.
const BLASMinBatch = 32

// BLAS is what the compiler plans against for "blas",
// runtime/blas/openblas: ggml's BLAS backend, an accelerator computing in
// the CPU's host memory (buffer type "CPU"), which it reads directly like
// the CPU does. Sharing the CPU's buffer type, ggml's third scheduling
// pass upgrades the CPU's big matrix products to it (cause 3.upg) and no
// tensor is ever copied between the two.
var BLAS = Description{
	Name:       "blas",
	Device:     "ACCEL",
	BufferType: CPUBufferType,
	SupportsOp: BLASSupportsOp,
	SupportsBufferType: func(b BufferType) bool {
		return b.Host
	},
}

// BLASSupportsOp is ggml-blas's supports_op (ggml-org/ggml
// src/ggml-blas/ggml-blas.cpp): views and leaves (which compute nothing),
// and big enough matrix products of contiguous sources with an f32 second
// source and an f32 or f16 first source.
func BLASSupportsOp(q *OpQuery) bool {
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
			q.Ne[0] >= BLASMinBatch && q.Ne[1] >= BLASMinBatch && x.Ne[0] >= BLASMinBatch
	}
	return false
}
