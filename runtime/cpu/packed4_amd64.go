//go:build !noasm

package cpu

import "github.com/graphc/graphc/tensor"

// The small-panel kernels over two row groups (packed4_amd64.s): x4 four
// columns, x2 two; tile holds w's sums (16 per column), then w2's.

//go:noescape
func packedQ4x4x2VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)

//go:noescape
func packedQ8x4x2VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)

//go:noescape
func packedQ4x2x2VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)

//go:noescape
func packedQ8x2x2VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)

// smallAhead is how far ahead, in bytes, the small kernels prefetch the
// weights they stream: further than the one-column kernels
// (streamAhead), as they take longer over a block, and a prefetch must
// still be early by a memory latency (docs/performance.md, batched
// decoding).
var smallAhead = 4096

// The same at the avx2 level (packed_avx2_amd64.s).

//go:noescape
func packedQ4x4x2AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)

//go:noescape
func packedQ8x4x2AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)

//go:noescape
func packedQ4x2x2AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)

//go:noescape
func packedQ8x2x2AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)

// packedSmall2Asm is packedKernel for a small panel of pc columns (2 or
// smallPanelCols) over the row groups w and w2 (tile: w's, then w2's) in
// assembly where this machine has it, and reports whether it did.
func packedSmall2Asm(typ tensor.DType, pc int, w, w2, xq []byte, xd []float32, xc []int32, nb int, tile []float32) bool {
	if level < isaAVX2 || nb < 1 || (typ != tensor.Q4_0 && typ != tensor.Q8_0) || (pc != 2 && pc != smallPanelCols) {
		return false
	}
	wb := nb * packBlockBytes(typ)
	if len(w) < wb || len(w2) < wb || len(xq) < nb*pc*32 || len(xd) < nb*pc || len(xc) < nb*pc || len(tile) < 2*packRows*pc {
		bug("packed kernel: %d blocks, %d columns: w %d, w2 %d, xq %d, xd %d, xc %d, tile %d", nb, pc, len(w), len(w2), len(xq), len(xd), len(xc), len(tile))
	}
	k := [2][2][2]func(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte){
		{{packedQ8x2x2AVX2, packedQ4x2x2AVX2}, {packedQ8x4x2AVX2, packedQ4x4x2AVX2}},
		{{packedQ8x2x2VNNI, packedQ4x2x2VNNI}, {packedQ8x4x2VNNI, packedQ4x4x2VNNI}},
	}[b2i(level == isaAVX512 && hasVNNI)][b2i(pc == smallPanelCols)][b2i(typ == tensor.Q4_0)]
	k(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0], &w2[0])
	return true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
