//go:build !noasm

package cpu

import (
	"github.com/graphc/graphc/tensor"
)

// The packed kernels of packed_amd64.s, AVX-512 VNNI: one zmm lane per row
// of the group, vpdpbusd of the unsigned weight quants against four of a
// column's quants broadcast. Q4/Q8 the weight type, x1 one column, x8 a
// panel of eight. Each computes tile[j·16 + r] over nb blocks (nb ≥ 1).

//go:noescape
func packedQ4x1VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

//go:noescape
func packedQ4x8VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

//go:noescape
func packedQ8x1VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

//go:noescape
func packedQ8x8VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

// The same four at the avx2 level (packed_avx2_amd64.s), for processors
// without AVX-512 VNNI: a group block as two halves of 8 rows, one ymm lane
// per row, vpmaddubsw and vpmaddwd for vpdpbusd. The q8_0 ones sum q·x
// with ggml's sign trick and so ignore xc: their tile is the others' where
// xc holds −128·Σx, as the panels do.

//go:noescape
func packedQ4x1AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

//go:noescape
func packedQ4x8AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

//go:noescape
func packedQ8x1AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

//go:noescape
func packedQ4x4VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

//go:noescape
func packedQ8x4VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

//go:noescape
func packedQ4x4AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

//go:noescape
func packedQ8x4AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

//go:noescape
func packedQ8x8AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

// packedKernelAsm runs packedKernel in assembly where this machine has it,
// and reports whether it did: the VNNI kernels at the avx512 level with
// VNNI, else the AVX2 ones (q4_K's: packedk_amd64.go, q6_K's:
// packedq6k_amd64.go).
func packedKernelAsm(typ tensor.DType, pc int, w, xq []byte, xd []float32, xc []int32, nb int, tile []float32) bool {
	if typ == tensor.Q4_K {
		return packedKernelKAsm(pc, w, xq, xd, xc, nb, tile)
	}
	if typ == tensor.Q6_K {
		return packedKernelQ6Asm(pc, w, xq, xd, xc, nb, tile)
	}
	if pc == 2 && level >= isaAVX2 && nb >= 1 {
		// Two columns have only the two-group kernels: run w twice.
		var t2 [2 * 2 * packRows]float32
		if packedSmall2Asm(typ, 2, w, w, xq, xd, xc, nb, t2[:]) {
			copy(tile[:2*packRows], t2[:])
			return true
		}
	}
	if level < isaAVX2 || nb < 1 || (pc != 1 && pc != smallPanelCols && pc != panelCols) || (typ != tensor.Q4_0 && typ != tensor.Q8_0) {
		return false
	}
	if len(w) < nb*packBlockBytes(typ) || len(xq) < nb*pc*32 || len(xd) < nb*pc || len(xc) < nb*pc || len(tile) < packRows*pc {
		bug("packed kernel: %d blocks, %d columns: w %d, xq %d, xd %d, xc %d, tile %d", nb, pc, len(w), len(xq), len(xd), len(xc), len(tile))
	}
	vnni := level == isaAVX512 && hasVNNI
	q4 := typ == tensor.Q4_0
	switch {
	case vnni && q4 && pc == 1:
		packedQ4x1VNNI(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	case vnni && q4 && pc == smallPanelCols:
		packedQ4x4VNNI(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	case vnni && q4:
		packedQ4x8VNNI(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	case vnni && pc == 1:
		packedQ8x1VNNI(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	case vnni && pc == smallPanelCols:
		packedQ8x4VNNI(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	case vnni:
		packedQ8x8VNNI(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	case q4 && pc == 1:
		packedQ4x1AVX2(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	case q4 && pc == smallPanelCols:
		packedQ4x4AVX2(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	case q4:
		packedQ4x8AVX2(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	case pc == 1:
		packedQ8x1AVX2(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	case pc == smallPanelCols:
		packedQ8x4AVX2(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	default:
		packedQ8x8AVX2(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	}
	return true
}

//go:noescape
func quantizeColumnAVX512(row *float32, nb int, xq *byte, qs int, xd *float32, xc *int32, ss int, shift int)

//go:noescape
func quantizeColumnAVX2(row *float32, nb int, xq *byte, qs int, xd *float32, xc *int32, ss int, shift int)

// quantizeColumnAsm is quantizeColumn in assembly where this machine has
// it, and reports whether it did.
func quantizeColumnAsm(row []float32, nb int, xq []byte, qs int, xd []float32, xc []int32, ss int, shift uint) bool {
	if level < isaAVX2 || nb < 1 {
		return false
	}
	last := (nb - 1) * ss
	if len(row) < nb*32 || len(xq) < (nb-1)*qs+32 || len(xd) <= last || len(xc) <= last {
		bug("quantizeColumn: %d blocks: row %d, xq %d (stride %d), xd %d, xc %d (stride %d)", nb, len(row), len(xq), qs, len(xd), len(xc), ss)
	}
	if level == isaAVX512 {
		quantizeColumnAVX512(&row[0], nb, &xq[0], qs, &xd[0], &xc[0], ss*4, int(shift))
	} else {
		quantizeColumnAVX2(&row[0], nb, &xq[0], qs, &xd[0], &xc[0], ss*4, int(shift))
	}
	return true
}

// The one-column kernels over two row groups at once (w and w2; the tile
// holds w's 16 rows, then w2's).

//go:noescape
func packedQ4x1x2VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)

//go:noescape
func packedQ8x1x2VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)

// packedVector2Asm is packedKernel for one column over the row groups w
// and w2 (tile: 32 rows) in assembly where this machine has it, and
// reports whether it did.
func packedVector2Asm(typ tensor.DType, w, w2, xq []byte, xd []float32, xc []int32, nb int, tile []float32) bool {
	if level != isaAVX512 || !hasVNNI || nb < 1 {
		return false
	}
	wb := nb * packBlockBytes(typ)
	if len(w) < wb || len(w2) < wb || len(xq) < nb*32 || len(xd) < nb || len(xc) < nb || len(tile) < 2*packRows {
		bug("packed kernel: %d blocks: w %d, w2 %d, xq %d, xd %d, xc %d, tile %d", nb, len(w), len(w2), len(xq), len(xd), len(xc), len(tile))
	}
	switch typ {
	case tensor.Q4_0:
		packedQ4x1x2VNNI(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0], &w2[0])
	case tensor.Q8_0:
		packedQ8x1x2VNNI(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0], &w2[0])
	default:
		return false
	}
	return true
}

// columnKernelAsm is the one-column kernel for q4_K or q6_K weights at the
// current level, or nil where there is none: packedKernelKAsm and
// packedKernelQ6Asm run it for panels of one column, and the one-column
// products (packedGroup.stream) call it directly, group after group,
// without packedKernel's dispatch and checks on each.
func columnKernelAsm(typ tensor.DType) func(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32) {
	if level < isaAVX2 {
		return nil
	}
	vnni := level == isaAVX512 && hasVNNI
	switch {
	case typ == tensor.Q4_K && vnni && kColumnVNNI:
		return packedQ4Kx1VNNI
	case typ == tensor.Q4_K:
		return packedQ4Kx1AVX2
	case typ == tensor.Q6_K && vnni:
		return packedQ6Kx1VNNI
	case typ == tensor.Q6_K:
		return packedQ6Kx1AVX2
	}
	return nil
}
