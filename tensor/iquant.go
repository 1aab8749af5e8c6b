package tensor

import "encoding/binary"

// Block layouts of ggml's 4-bit non-linear types (ggml-common.h), whose
// 4-bit indices pick one of 16 fixed levels, kvalues_iq4nl:
//
//	block_iq4_nl { ggml_half d; uint8_t qs[16]; }
//	    x[j] = d·kvalues[qs[j] & 15], x[j+16] = d·kvalues[qs[j] >> 4]
//	block_iq4_xs { ggml_half d; uint16_t scales_h; uint8_t scales_l[4]; uint8_t qs[128]; }
//	    sub-block s of 32: iq4_nl's with d·(ls − 32), ls 6 bits: the
//	    nibble scales_l[s/2] >> 4·(s%2), the top two scales_h >> 2·s
//
// Their encoders are quantize_iq4_nl and quantize_iq4_xs without an
// importance matrix (what ggml_quantize_chunk runs), both
// quantize_row_iq4_nl_impl with ntry = 7, in float32 in C's order as the
// K-quants' (kquant.go).
var kvaluesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// bestIndexIQ4 is best_index_int8 over kvaluesIQ4NL: the index of the
// level nearest x, the upper one on a tie.
func bestIndexIQ4(x float32) uint8 {
	v := &kvaluesIQ4NL
	if x <= float32(v[0]) {
		return 0
	}
	if x >= float32(v[15]) {
		return 15
	}
	ml, mu := 0, 15
	for mu-ml > 1 {
		mav := (ml + mu) / 2
		if x < float32(v[mav]) {
			mu = mav
		} else {
			ml = mav
		}
	}
	if x-float32(v[mu-1]) < float32(v[mu])-x {
		return uint8(mu - 1)
	}
	return uint8(mu)
}

// iq4Scale is quantize_row_iq4_nl_impl's search for one block of 32: the
// least-squares scale (weights x²) of the best of 15 trial scales
// (itry + kvalues[0])/max, itry −7…7; 0 for an all-zero block.
func iq4Scale(xb []float32) float32 {
	amax, vmax := float32(0), float32(0)
	for _, v := range xb {
		if a := abs32(v); a > amax {
			amax, vmax = a, v
		}
	}
	if amax < groupMaxEps {
		return 0
	}
	sums := func(id float32) (sumqx, sumq2 float32) {
		for _, v := range xb {
			q := float32(kvaluesIQ4NL[bestIndexIQ4(id*v)])
			w := v * v
			sumqx += float32(w * q * v)
			sumq2 += float32(w * q * q)
		}
		return sumqx, sumq2
	}
	d := -vmax / float32(kvaluesIQ4NL[0])
	sumqx, sumq2 := sums(1 / d)
	d = 0
	if sumq2 > 0 {
		d = sumqx / sumq2
	}
	best := d * sumqx
	for itry := -7; itry <= 7; itry++ {
		sumqx, sumq2 = sums(float32(itry+int(kvaluesIQ4NL[0])) / vmax)
		if sumq2 > 0 && sumqx*sumqx > best*sumq2 {
			d = sumqx / sumq2
			best = d * sumqx
		}
	}
	return d
}

// appendIQ4 appends the indices of 32 values x·id, j and j+16 in one byte.
func appendIQ4(dst []byte, xb []float32, id float32) []byte {
	for j := range 16 {
		dst = append(dst, bestIndexIQ4(id*xb[j])|bestIndexIQ4(id*xb[j+16])<<4)
	}
	return dst
}

// encodeIQ4NL is quantize_iq4_nl: d is the block's iq4Scale rounded to
// f16, the indices those of x/d unrounded.
func encodeIQ4NL(dst []byte, src []float32) []byte {
	for b := 0; b < len(src); b += qk {
		xb := src[b : b+qk]
		d := iq4Scale(xb)
		id := float32(0)
		if d != 0 {
			id = 1 / d
		}
		dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(d))
		dst = appendIQ4(dst, xb, id)
	}
	return dst
}

func decodeIQ4NL(dst []float32, src []byte, n int) []float32 {
	for b := 0; b < n/qk; b++ {
		blk := src[b*18 : b*18+18]
		dst = decodeIQ4(dst, F16ToF32(binary.LittleEndian.Uint16(blk)), blk[2:18])
	}
	return dst
}

// encodeIQ4XS is quantize_iq4_xs: each block of 32's iq4Scale to 6 bits
// of d = −(largest-magnitude scale)/32, the indices those of x over the
// rounded scale (d·l, with d unrounded).
func encodeIQ4XS(dst []byte, src []float32) []byte {
	var scales [8]float32
	for b := 0; b < len(src); b += qkK {
		x := src[b : b+qkK]
		var maxScale, amax float32
		for ib := range 8 {
			scales[ib] = iq4Scale(x[32*ib : 32*ib+32])
			if a := abs32(scales[ib]); a > amax {
				amax, maxScale = a, scales[ib]
			}
		}
		d := -maxScale / 32 // −0 for an all-zero super-block, as in ggml
		id := float32(0)
		if d != 0 {
			id = 1 / d
		}
		var scalesH uint16
		var scalesL [4]uint8
		var qs []byte
		for ib := range 8 {
			l := max(-32, min(31, nearestInt(id*scales[ib])))
			dl := d * float32(l)
			idl := float32(0)
			if dl != 0 {
				idl = 1 / dl
			}
			qs = appendIQ4(qs, x[32*ib:32*ib+32], idl)
			l += 32
			scalesL[ib/2] |= uint8(l&15) << (4 * (ib % 2))
			scalesH |= uint16(l>>4) << (2 * ib)
		}
		dst = binary.LittleEndian.AppendUint16(dst, F32ToF16(d))
		dst = binary.LittleEndian.AppendUint16(dst, scalesH)
		dst = append(dst, scalesL[:]...)
		dst = append(dst, qs...)
	}
	return dst
}

func decodeIQ4XS(dst []float32, src []byte, n int) []float32 {
	for b := 0; b < n/qkK; b++ {
		blk := src[b*136 : b*136+136]
		d := F16ToF32(binary.LittleEndian.Uint16(blk))
		scalesH := binary.LittleEndian.Uint16(blk[2:])
		for ib := range 8 {
			ls := int(blk[4+ib/2]>>(4*(ib%2))&15) | int(scalesH>>(2*ib)&3)<<4
			dst = decodeIQ4(dst, d*float32(ls-32), blk[8+16*ib:8+16*ib+16])
		}
	}
	return dst
}

// decodeIQ4 appends the 32 values of 16 index bytes at scale d.
func decodeIQ4(dst []float32, d float32, qs []byte) []float32 {
	for _, q := range qs {
		dst = append(dst, d*float32(kvaluesIQ4NL[q&15]))
	}
	for _, q := range qs {
		dst = append(dst, d*float32(kvaluesIQ4NL[q>>4]))
	}
	return dst
}
