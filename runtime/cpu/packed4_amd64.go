//go:build !noasm

package cpu

import "github.com/graphc/graphc/tensor"

// The small-panel kernels over two row groups (packed4_amd64.s): tile
// holds w's 4×16 sums, then w2's.

//go:noescape
func packedQ4x4x2VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)

//go:noescape
func packedQ8x4x2VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)

// packedSmall2Asm is packedKernel for a small panel (smallPanelCols
// columns) over the row groups w and w2 (tile: w's then w2's) in assembly
// where this machine has it, and reports whether it did.
func packedSmall2Asm(typ tensor.DType, w, w2, xq []byte, xd []float32, xc []int32, nb int, tile []float32) bool {
	if level != isaAVX512 || !hasVNNI || nb < 1 || (typ != tensor.Q4_0 && typ != tensor.Q8_0) {
		return false
	}
	const pc = smallPanelCols
	wb := nb * packBlockBytes(typ)
	if len(w) < wb || len(w2) < wb || len(xq) < nb*pc*32 || len(xd) < nb*pc || len(xc) < nb*pc || len(tile) < 2*packRows*pc {
		bug("packed kernel: %d blocks: w %d, w2 %d, xq %d, xd %d, xc %d, tile %d", nb, len(w), len(w2), len(xq), len(xd), len(xc), len(tile))
	}
	if typ == tensor.Q4_0 {
		packedQ4x4x2VNNI(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0], &w2[0])
	} else {
		packedQ8x4x2VNNI(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0], &w2[0])
	}
	return true
}
