//go:build !noasm

package cpu

import "github.com/graphc/graphc/runtime"

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

// packedKernelAsm runs packedKernel in assembly where this machine has it,
// and reports whether it did.
func packedKernelAsm(typ runtime.DType, pc int, w, xq []byte, xd []float32, xc []int32, nb int, tile []float32) bool {
	if level != isaAVX512 || !hasVNNI || nb < 1 {
		return false
	}
	if len(w) < nb*packBlockBytes(typ) || len(xq) < nb*pc*32 || len(xd) < nb*pc || len(xc) < nb*pc || len(tile) < packRows*pc {
		bug("packed kernel: %d blocks, %d columns: w %d, xq %d, xd %d, xc %d, tile %d", nb, pc, len(w), len(xq), len(xd), len(xc), len(tile))
	}
	switch {
	case typ == runtime.Q4_0 && pc == 1:
		packedQ4x1VNNI(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	case typ == runtime.Q4_0 && pc == panelCols:
		packedQ4x8VNNI(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	case typ == runtime.Q8_0 && pc == 1:
		packedQ8x1VNNI(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	case typ == runtime.Q8_0 && pc == panelCols:
		packedQ8x8VNNI(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	default:
		return false
	}
	return true
}

//go:noescape
func quantizeColumnAVX512(row *float32, nb int, xq *byte, qs int, xd *float32, xc *int32, ss int, shift int)

// quantizeColumnAsm is quantizeColumn in assembly where this machine has
// it, and reports whether it did.
func quantizeColumnAsm(row []float32, nb int, xq []byte, qs int, xd []float32, xc []int32, ss int, shift uint) bool {
	if level != isaAVX512 || nb < 1 {
		return false
	}
	last := (nb - 1) * ss
	if len(row) < nb*32 || len(xq) < (nb-1)*qs+32 || len(xd) <= last || len(xc) <= last {
		bug("quantizeColumn: %d blocks: row %d, xq %d (stride %d), xd %d, xc %d (stride %d)", nb, len(row), len(xq), qs, len(xd), len(xc), ss)
	}
	quantizeColumnAVX512(&row[0], nb, &xq[0], qs, &xd[0], &xc[0], ss*4, int(shift))
	return true
}
