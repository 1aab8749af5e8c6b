package cpu

import (
	"fmt"

	"github.com/graphc/graphc/runtime"
)

// SimOffloadBatch is the simulated devices' default minimum batch for
// offloading an op whose weight lives in host memory, ggml's
// GGML_OP_OFFLOAD_MIN_BATCH (as for CUDA).
const SimOffloadBatch = 32

// SimAlignment is the alignment of the simulated devices' buffers (that of
// ggml's RPC backend, the traces' stand-in for a GPU).
const SimAlignment = 32

// SimDescription is what the compiler plans against for simulated device
// n, "sim<n>": to the scheduler it is a discrete GPU like CUDA (device type
// GPU, every op, big-batch ops offloaded) whose memory, buffer type
// "SIM<n>", is not host memory and is the only memory it reads.
func SimDescription(n int) *runtime.Description {
	bt := runtime.BufferType{Name: fmt.Sprintf("SIM%d", n), Host: false, Alignment: SimAlignment}
	return &runtime.Description{
		Name:       fmt.Sprintf("sim%d", n),
		Device:     "GPU",
		BufferType: bt,
		SupportsOp: func(q *runtime.OpQuery) bool { return Description.SupportsOp(q) },
		SupportsBufferType: func(b runtime.BufferType) bool {
			return b.Name == bt.Name
		},
		OffloadOp: func(q *runtime.OpQuery, minBatch int) bool {
			return runtime.OpBatchSize(q) >= int64(minBatch)
		},
		OffloadMinBatch: SimOffloadBatch,
		Async:           true,
	}
}
