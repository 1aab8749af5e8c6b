package backend

import (
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// BufferType describes the memory a backend computes in. Backends whose
// buffer types have the same Name share one compute buffer.
type BufferType struct {
	Name      string
	Host      bool  // addressable by the CPU (host or unified memory)
	Alignment int64 // every tensor offset is a multiple of this
	MaxSize   int64 // largest single allocation; 0 means unlimited
}

// OpQuery is what a backend is asked about one op: the op, the result's
// type and shape at the dims' bounds, and its sources.
type OpQuery struct {
	Op   ops.Op
	Type tensor.DType
	Ne   [4]int64
	Src  []OpSrc
}

// OpSrc describes one source of an OpQuery. Nb are its strides in bytes
// at the dims' bounds; all zero stands for the contiguous layout of Ne,
// so that a query written by hand need not spell them out.
type OpSrc struct {
	Type       tensor.DType
	Ne         [4]int64
	Nb         [4]int64
	Contiguous bool
}

// Description is everything the compiler needs to know about a backend to
// plan for it, written once, in the backend's own package, in plain Go that
// compiles on every platform. It mirrors ggml's backend/device interface:
// supports_op, supports_buft, offload_op.
type Description struct {
	Name   string // as written in targets: "cpu", "cuda0", …
	Device string // ggml device type: "CPU", "GPU" or "ACCEL"

	BufferType BufferType

	// SupportsOp reports whether the backend can compute the op.
	SupportsOp func(q *OpQuery) bool
	// SupportsBufferType reports whether the backend's ops can read a
	// tensor that lives in a buffer of type b without a copy.
	SupportsBufferType func(b BufferType) bool
	// OffloadOp reports whether the backend wants to run an op whose
	// weight lives in host memory (ggml's offload_op: batches of at least
	// minBatch rows are worth the weight upload). Nil means never.
	OffloadOp func(q *OpQuery, minBatch int) bool
	// OffloadMinBatch is the default minBatch (ggml: 32).
	OffloadMinBatch int

	// Async: kernels are queued and complete later; the runtime must
	// synchronize with events.
	Async bool
	// Parts: the backend runs parallel regions, one part per thread, each
	// on a single-threaded lane of its own (cpu.Backend.RunParts).
	Parts bool
	// PackWeight is, for an op that reads a weight as its source 0, the
	// bytes of the repacked copy of that weight the backend reads instead
	// (ggml's extra buffer types, CPU_REPACK), or 0 when it reads the
	// weight as it is. A backend that sets it has a method
	// Pack(*Tensor) error making the copy. Nil: it packs nothing.
	PackWeight func(q *OpQuery) int64
	// GroupProducts is the most matrix products reading one activation
	// through weights it packs that the backend runs as one call, a
	// method MulMats(x *Tensor, ps ...Product); 0: it has none.
	GroupProducts int
}

// Only is the SupportsBufferType of a device that reads no memory but its
// own.
func (bt BufferType) Only(b BufferType) bool { return b.Name == bt.Name }

// OffloadBigBatches is the OffloadOp of ggml's GPU backends: an op whose
// weight lives in host memory is worth the weight's upload from minBatch
// rows on (ops.Op.BatchSize).
func OffloadBigBatches(q *OpQuery, minBatch int) bool { return q.Op.BatchSize(q.Ne) >= int64(minBatch) }

// OffloadBigProducts is the OffloadOp of ggml's Metal backend: only
// matrix products (mul_mat, mul_mat_id) are worth their weight's upload,
// from minBatch rows on (ggml-metal.cpp's offload_op).
func OffloadBigProducts(q *OpQuery, minBatch int) bool {
	return (q.Op == ops.MulMat || q.Op == ops.MulMatID) && OffloadBigBatches(q, minBatch)
}
