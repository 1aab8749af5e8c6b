//go:build !noasm

package cpu

import "github.com/graphc/graphc/tensor"

// The q6_K packed kernels of packedq6k_amd64.s, AVX-512 VNNI, and
// packedq6k_avx2_amd64.s, AVX2: x1 one column, x4 a panel of four, x8 one
// of eight; each computes tile[j·16 + r] over nb blocks (nb ≥ 1).

//go:noescape
func packedQ6Kx1VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

//go:noescape
func packedQ6Kx4VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

//go:noescape
func packedQ6Kx8VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

//go:noescape
func packedQ6Kx1AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

//go:noescape
func packedQ6Kx4AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

//go:noescape
func packedQ6Kx8AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

// packedKernelQ6Asm is packedKernelAsm for q6_K.
func packedKernelQ6Asm(pc int, w, xq []byte, xd []float32, xc []int32, nb int, tile []float32) bool {
	if level < isaAVX2 || nb < 1 || (pc != 1 && pc != smallPanelCols && pc != panelCols) {
		return false
	}
	if len(w) < nb*packBlockBytes(tensor.Q6_K) || len(xq) < nb*pc*qkK || len(xd) < nb*pc || len(xc) < nb*pc*q6PanelInts || len(tile) < packRows*pc {
		bug("packed q6_K kernel: %d blocks, %d columns: w %d, xq %d, xd %d, xc %d, tile %d", nb, pc, len(w), len(xq), len(xd), len(xc), len(tile))
	}
	vnni := level == isaAVX512 && hasVNNI
	switch {
	case pc == 1:
		columnKernelAsm(tensor.Q6_K)(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	case vnni && pc == smallPanelCols:
		packedQ6Kx4VNNI(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	case vnni:
		packedQ6Kx8VNNI(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	case pc == smallPanelCols:
		packedQ6Kx4AVX2(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	default:
		packedQ6Kx8AVX2(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	}
	return true
}
