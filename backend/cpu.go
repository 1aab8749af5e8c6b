package backend

import (
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// CPUBufferType is host memory, shared by every backend that computes in
// it (BLAS, and the CPU itself).
var CPUBufferType = BufferType{Name: "CPU", Host: true, Alignment: 32}

// CPU is what the compiler plans against for "cpu", runtime/cpu: it runs
// every op on every type and reads only host memory. It is the last
// backend of every target.
var CPU = Description{
	Name:       "cpu",
	Device:     "CPU",
	BufferType: CPUBufferType,
	SupportsOp: func(*OpQuery) bool { return true },
	SupportsBufferType: func(b BufferType) bool {
		return b.Host
	},
	Parts:         true,
	PackWeight:    cpuPackWeight,
	GroupProducts: CPUMaxGroup,
}

// CPUPackRows is the rows of one group of runtime/cpu's packed weights:
// one int32 lane of a 512-bit register per row. The plan sizes the packed
// copies by it and runtime/cpu lays them out by it.
const CPUPackRows = 16

// CPUMaxGroup is the most products runtime/cpu's MulMats runs as one task.
const CPUMaxGroup = 8

// CPUPackable reports whether runtime/cpu packs weights of type dt.
func CPUPackable(dt tensor.DType) bool {
	return dt == tensor.Q4_0 || dt == tensor.Q8_0 || dt == tensor.Q4_K || dt == tensor.Q6_K
}

// CPUPackedRowBytes is the bytes one row of k elements of type dt takes in
// runtime/cpu's packed copies: its blocks as stored (q6_K's rearranged,
// the same bytes), but for q4_K, whose scales and mins are decoded (16
// bytes, one each, per block of 256 for the 12 packed ones).
func CPUPackedRowBytes(dt tensor.DType, k int) int {
	if dt == tensor.Q4_K {
		return k / 256 * 148
	}
	return dt.RowSize(k)
}

// CPUPackedBytes is the memory runtime/cpu's packed copy of a weight of
// type dt and shape ne takes: its rows padded to a multiple of CPUPackRows
// per matrix; 0 for a type it does not pack.
func CPUPackedBytes(dt tensor.DType, ne [4]int) int64 {
	if !CPUPackable(dt) {
		return 0
	}
	groups := int64((ne[1]+CPUPackRows-1)/CPUPackRows) * int64(ne[2]) * int64(ne[3])
	return groups * CPUPackRows * int64(CPUPackedRowBytes(dt, ne[0]))
}

// cpuPackWeight is repack.cpp's extra_buffer_type::supports_op: a matrix
// product, or a mixture of experts' (MUL_MAT_ID, its experts' matrices
// packed one after the other), reads a dense packable weight from the
// copy runtime/cpu makes.
func cpuPackWeight(q *OpQuery) int64 {
	if q.Op != ops.MulMat && q.Op != ops.MulMatID || len(q.Src) == 0 {
		return 0
	}
	a := q.Src[0]
	if !a.Contiguous || !CPUPackable(a.Type) {
		return 0
	}
	return CPUPackedBytes(a.Type, [4]int{int(a.Ne[0]), int(a.Ne[1]), int(a.Ne[2]), int(a.Ne[3])})
}
