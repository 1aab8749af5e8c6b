package backend

import "fmt"

// SimAlignment is the alignment of the simulated devices' buffers (that
// of ggml's RPC backend, the traces' stand-in for a GPU).
const SimAlignment = 32

// Sim is what the compiler plans against for simulated device n, "sim<n>"
// (runtime/sim): to the scheduler it is a discrete GPU like CUDA (device
// type GPU, every op the CPU runs, big-batch ops offloaded) whose memory,
// buffer type "SIM<n>", is not host memory and is the only memory it
// reads.
func Sim(n int) *Description {
	bt := BufferType{Name: fmt.Sprintf("SIM%d", n), Host: false, Alignment: SimAlignment}
	return &Description{
		Name:               fmt.Sprintf("sim%d", n),
		Device:             "GPU",
		BufferType:         bt,
		SupportsOp:         func(q *OpQuery) bool { return CPU.SupportsOp(q) },
		SupportsBufferType: bt.Only,
		OffloadOp:          OffloadBigBatches,
		OffloadMinBatch:    OffloadBatch,
		Async:              true,
	}
}
