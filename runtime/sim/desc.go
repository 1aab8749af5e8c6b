package sim

import (
	"fmt"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/runtime/cpu"
)

// OffloadBatch is the simulated devices' default minimum batch for
// offloading an op whose weight lives in host memory, ggml's
// GGML_OP_OFFLOAD_MIN_BATCH (as for CUDA).
const OffloadBatch = 32

// Alignment is the alignment of the simulated devices' buffers (that of
// ggml's RPC backend, the traces' stand-in for a GPU).
const Alignment = 32

// Description is what the compiler plans against for simulated device
// n, "sim<n>": to the scheduler it is a discrete GPU like CUDA (device type
// GPU, every op, big-batch ops offloaded) whose memory, buffer type
// "SIM<n>", is not host memory and is the only memory it reads.
func Description(n int) *backend.Description {
	bt := backend.BufferType{Name: fmt.Sprintf("SIM%d", n), Host: false, Alignment: Alignment}
	return &backend.Description{
		Name:               fmt.Sprintf("sim%d", n),
		Device:             "GPU",
		BufferType:         bt,
		SupportsOp:         func(q *backend.OpQuery) bool { return cpu.Description.SupportsOp(q) },
		SupportsBufferType: bt.Only,
		OffloadOp:          backend.OffloadBigBatches,
		OffloadMinBatch:    OffloadBatch,
		Async:              true,
	}
}
