// Package cuda is graphc's CUDA backend. Its description — what the
// compiler plans against — is plain Go that compiles everywhere, so any
// machine can plan and generate code for CUDA. Nothing executes on a CUDA
// device yet: Available says so, and New fails with that reason. The
// execution layer to come drives ggml's own CUDA backend, loaded at run
// time.
package cuda

import (
	"fmt"

	"github.com/graphc/graphc/runtime"
)

// OffloadBatch is ggml's default minimum batch for offloading an op whose
// weight lives in host memory (GGML_OP_OFFLOAD_MIN_BATCH).
const OffloadBatch = 32

// Description returns the description of CUDA device n, named "cuda<n>".
// Like ggml's CUDA backend it supports every op graphc has on f32/f16, has
// its own device memory (not host-visible) and offloads big-batch ops.
func Description(n int) *runtime.Description {
	bt := runtime.BufferType{Name: fmt.Sprintf("CUDA%d", n), Host: false, Alignment: 128}
	return &runtime.Description{
		Name:               fmt.Sprintf("cuda%d", n),
		Device:             "GPU",
		BufferType:         bt,
		SupportsOp:         func(q *runtime.OpQuery) bool { return true },
		SupportsBufferType: bt.Only,
		OffloadOp:          runtime.OffloadBigBatches,
		OffloadMinBatch:    OffloadBatch,
		Async:              true,
	}
}

// Available reports whether CUDA devices can be used in this process, and
// why not.
func Available() (bool, string) {
	return false, "the CUDA execution backend is not built into this graphc yet; plans for cuda targets compile but do not run"
}
