// Package cuda is graphc's CUDA backend. Its description — what the
// compiler plans against — is plain Go that compiles everywhere, so any
// machine can plan and generate code for CUDA. Execution is ggml's own CUDA
// backend (libggml-cuda), loaded at run time through runtime/ggml.
package cuda

import (
	"fmt"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/runtime/ggml"
)

// OffloadBatch is ggml's default minimum batch for offloading an op whose
// weight lives in host memory (GGML_OP_OFFLOAD_MIN_BATCH).
const OffloadBatch = 32

// Description returns the description of CUDA device n, named "cuda<n>".
// Like ggml's CUDA backend it supports every op graphc has on f32/f16, has
// its own device memory (not host-visible) and offloads big-batch ops.
func Description(n int) *backend.Description {
	bt := backend.BufferType{Name: fmt.Sprintf("CUDA%d", n), Host: false, Alignment: 128}
	return &backend.Description{
		Name:               fmt.Sprintf("cuda%d", n),
		Device:             "GPU",
		BufferType:         bt,
		SupportsOp:         func(q *backend.OpQuery) bool { return true },
		SupportsBufferType: bt.Only,
		OffloadOp:          backend.OffloadBigBatches,
		OffloadMinBatch:    OffloadBatch,
		Async:              true,
	}
}

// Available reports whether ggml's libraries and its CUDA backend library
// can be found, without loading them; whether a CUDA device exists only
// New can tell.
func Available() (bool, string) {
	if _, err := ggml.BackendLibrary("cuda"); err != nil {
		return false, err.Error()
	}
	return true, ""
}
