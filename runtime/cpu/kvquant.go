package cpu

import (
	"github.com/graphc/graphc/tensor"
)

// Quantized and bf16 KV caches (llama.cpp's -ctk and -ctv): Cpy writes
// rows into them and FlashAttnExt reads them, as ggml's CPU backend does.

// cacheFromFloat appends row in t as ggml's type_traits_cpu[t].from_float
// does for a cpy into t: q8_0's is the activation quantizer (rounding half
// to even), the others' the reference quantizers.
func cacheFromFloat(dst []byte, t tensor.DType, row []float32) []byte {
	if t == tensor.Q8_0 {
		return quantizeQ8_0Go(dst, row)
	}
	return tensor.Quantize(dst, t, row)
}

// cpyToBlocks is Cpy into a block-quantized or bf16 dst from f32 or f16
// src, row by row of src: dst is contiguous (rows of src follow each other
// in it) or has src's row length; either way src's rows are whole blocks.
func (b *Backend) cpyToBlocks(dst, src *tensor.Tensor) {
	bs, k := dst.Type.BlockSize(), src.Ne[0]
	nrows := src.Ne[1] * src.Ne[2] * src.Ne[3]
	if (src.Type != tensor.F32 && src.Type != tensor.F16) || k%bs != 0 || dst.Nb[0] != dst.Type.Size() ||
		dst.Ne[0]*dst.Ne[1]*dst.Ne[2]*dst.Ne[3] != k*nrows || (!dst.Contiguous() && dst.Ne[0] != k) {
		bug("Cpy: %v%v nb %v to %v%v nb %v", src.Type, src.Ne, src.Nb, dst.Type, dst.Ne, dst.Nb)
	}
	var s32 []float32
	var s16 []uint16
	if src.Type == tensor.F32 {
		s32 = src.F32s()
	} else {
		s16 = src.F16s()
	}
	row := growF32(&b.kvRow, k)
	rowBytes := dst.Type.RowSize(k)
	enc := b.kvEnc[:0]
	for r := 0; r < nrows; r++ {
		i1, i2, i3 := r%src.Ne[1], r/src.Ne[1]%src.Ne[2], r/(src.Ne[1]*src.Ne[2])
		so := i1*src.Nb[1] + i2*src.Nb[2] + i3*src.Nb[3]
		for i := range row {
			o := so + i*src.Nb[0]
			if s32 != nil {
				row[i] = s32[o/4]
			} else {
				row[i] = f16Table[s16[o/2]]
			}
		}
		do := r * rowBytes
		if !dst.Contiguous() {
			d1, d2, d3 := r%dst.Ne[1], r/dst.Ne[1]%dst.Ne[2], r/(dst.Ne[1]*dst.Ne[2])
			do = d1*dst.Nb[1] + d2*dst.Nb[2] + d3*dst.Nb[3]
		}
		enc = cacheFromFloat(enc[:0], dst.Type, row)
		copy(dst.Data[do:do+rowBytes], enc)
	}
	b.kvEnc = enc
}
