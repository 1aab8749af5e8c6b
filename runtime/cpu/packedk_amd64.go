//go:build !noasm

package cpu

import "github.com/graphc/graphc/tensor"

// The q4_K packed kernels of packedk_amd64.s, AVX-512 VNNI: x1 one
// column, x4 a panel of four, x8 one of eight; each computes tile[j·16 + r] over nb
// blocks (nb ≥ 1).

//go:noescape
func packedQ4Kx1VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

//go:noescape
func packedQ4Kx4VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

//go:noescape
func packedQ4Kx8VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

// The same three at the avx2 level (packedk_avx2_amd64.s): vpmaddubsw and
// vpmaddwd for vpdpbusd and vpmulld, on 8-row halves of the group.

//go:noescape
func packedQ4Kx1AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

//go:noescape
func packedQ4Kx4AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

//go:noescape
func packedQ4Kx8AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)

// kStreamAhead is how far, in bytes, the q4_K and q6_K kernels of more
// than one column prefetch the weights they stream (kColumnAhead and
// kColumnAheadAVX2 for one). They spend more instructions per byte, and a
// longer distance measured best for them where streamAhead's measured best
// for the others: 6 KiB against 1.5 on Zen 4 (docs/performance.md).
var kStreamAhead = 6144

// kColumnAhead is the VNNI one-column kernels' distance: streamAhead, as
// q4_0's, except on AMD's Zen 5 and later, where these kernels measured
// best at kStreamAhead's and q4_0's no faster (docs/performance.md).
var kColumnAhead = func() int {
	if zen5OrLater() {
		return kStreamAhead
	}
	return streamAhead
}()

// kColumnAheadAVX2 is the AVX2 one-column kernels' distance:
// kStreamAhead, except on Zen 5 and later, where 12 KiB measured best
// (docs/performance.md).
var kColumnAheadAVX2 = func() int {
	if zen5OrLater() {
		return 12288
	}
	return kStreamAhead
}()

// kColumnVNNI has one-column q4_K products take the VNNI kernel where
// there is one, except on Zen 5 and later: there the AVX2 kernel (8-row
// halves, 12 KiB ahead) streams the weights faster, in a model's products
// at one and two threads (docs/performance.md).
var kColumnVNNI = !zen5OrLater()

// packedKernelKAsm is packedKernelAsm for q4_K.
func packedKernelKAsm(pc int, w, xq []byte, xd []float32, xc []int32, nb int, tile []float32) bool {
	if level < isaAVX2 || nb < 1 || (pc != 1 && pc != smallPanelCols && pc != panelCols) {
		return false
	}
	if len(w) < nb*packBlockBytes(tensor.Q4_K) || len(xq) < nb*pc*qkK || len(xd) < nb*pc || len(xc) < nb*pc*4 || len(tile) < packRows*pc {
		bug("packed q4_K kernel: %d blocks, %d columns: w %d, xq %d, xd %d, xc %d, tile %d", nb, pc, len(w), len(xq), len(xd), len(xc), len(tile))
	}
	vnni := level == isaAVX512 && hasVNNI
	switch {
	case pc == 1:
		columnKernelAsm(tensor.Q4_K)(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	case vnni && pc == smallPanelCols:
		packedQ4Kx4VNNI(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	case pc == smallPanelCols:
		packedQ4Kx4AVX2(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	case vnni:
		packedQ4Kx8VNNI(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	default:
		packedQ4Kx8AVX2(&w[0], &xq[0], &xd[0], &xc[0], nb, &tile[0])
	}
	return true
}
