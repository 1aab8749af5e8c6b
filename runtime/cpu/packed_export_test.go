package cpu

import (
	"github.com/graphc/graphc/tensor"
)

// The packed kernels: PackedKernel at the current level, PackedKernelGo its
// Go loop, both over one packed row group (nb blocks of PackedBlockBytes)
// and one panel of pc columns (1, SmallPanelCols or PanelCols); PackedKernelAsm reports
// whether the current level runs them in assembly; PackedSmall2Asm is the
// small panel's kernel over two row groups, where the level has one.
// QuantizeColumn is the
// activation quantizer at the current level, QuantizeColumnGo its Go loop.
var (
	PackedKernel     = packedKernel
	PackedKernelGo   = packedKernelGo
	PackedKernelAsm  = packedKernelAsm
	QuantizeColumn   = quantizeColumn
	QuantizeColumnGo = quantizeColumnGo
	PackedSmall2Asm  = packedSmall2Asm
)

const (
	PackRows       = packRows
	PanelCols      = panelCols
	SmallPanelCols = smallPanelCols
)

// PackedBlockBytes is the bytes of one packed group's block of type dt.
func PackedBlockBytes(dt tensor.DType) int { return packBlockBytes(dt) }

// SetSmallPairs sets whether small panels run two row groups per kernel
// call and returns a function that restores the setting.
func SetSmallPairs(on bool) (restore func()) {
	old := smallPairs
	smallPairs = on
	return func() { smallPairs = old }
}

// PackedRow is row row of matrix mat (i2 + i3·ne[2]) of w rebuilt from
// b's packed copy of w, as w holds it, or nil when b holds no copy of w.
func (b *Backend) PackedRow(w *tensor.Tensor, mat, row int) []byte {
	p := b.packedFor(w)
	if p == nil {
		return nil
	}
	return p.unpackRow(make([]byte, w.Type.RowSize(w.Ne[0])), mat, row)
}
