package tensor

import (
	"encoding/binary"
	"math"
)

// Block layouts of ggml's K-quants (ggml-common.h), super-blocks of
// QK_K = 256 values in sub-blocks of 16 or 32, each sub-block with a
// quantized scale (and min) relative to the super-block's f16 d (and dmin):
//
//	block_q2_K { uint8_t scales[16]; uint8_t qs[64]; ggml_half d, dmin; }
//	    sub-block s of 16: x = d·(scales[s] & 15)·q − dmin·(scales[s] >> 4),
//	    q 2 bits: element e at qs[32·(e/128) + e%32] >> 2·(e%128/32)
//	block_q3_K { uint8_t hmask[32]; uint8_t qs[64]; uint8_t scales[12]; ggml_half d; }
//	    sub-block s of 16: x = d·(sc[s] − 32)·(q − 4), sc 6 bits: low nibble
//	    of scales[s] (s < 8) or scales[s−8] >> 4, top two bits at
//	    scales[8 + s%4] >> 2·(s/4); q = q2_K's 2 bits | hmask[e%32] bit e/32 << 2
//	block_q4_K { ggml_half d, dmin; uint8_t scales[12]; uint8_t qs[128]; }
//	    sub-block s of 32: x = d·sc[s]·q − dmin·m[s], sc and m 6 bits
//	    (get_scale_min_k4); q nibbles, e at qs[32·(e/64) + e%32] >> 4·(e%64/32)
//	block_q5_K { ggml_half d, dmin; uint8_t scales[12]; uint8_t qh[32]; uint8_t qs[128]; }
//	    q4_K's with a fifth bit, qh[e%32] bit e/32
//	block_q6_K { uint8_t ql[128]; uint8_t qh[64]; int8_t scales[16]; ggml_half d; }
//	    sub-block s of 16: x = d·scales[s]·(q − 32), q = 4 bits of ql | 2 of qh
//	block_q8_K { float d; int8_t qs[256]; int16_t bsums[16]; }
//	    x = d·qs, bsums the sums of qs in 16s (for the dot products)
const qkK = 256

// The encoders are quantize_row_*_ref, which is what ggml_quantize_chunk
// runs for these types without an importance matrix. Their searches
// compare float sums, so the arithmetic is C's, in C's order, in float32;
// float32(…) around a product that is then added, also one kept in a
// variable or passed to nearestInt, rounds it as C does, where Go may
// otherwise fuse the two, across statements too (arm64, ppc64, s390x,
// riscv64, loong64).

// groupMaxEps is ggml-quants.c's GROUP_MAX_EPS: a group whose largest
// magnitude is below it counts as all zeros.
const groupMaxEps = 1e-15

// nearestInt is ggml's nearest_int: rounding to nearest, ties to even, by
// adding 1.5·2²³ and reading the mantissa, for |v| < 2²²; beyond that it
// returns what ggml's does.
func nearestInt(v float32) int {
	i := int32(math.Float32bits(float32(v) + 12582912)) // v rounded: not fused with a caller's product
	return int(i&0x007fffff - 0x00400000)
}

// makeQXQuants is make_qx_quants with rmse_type 1 and no weights (x² is
// the weight): symmetric levels −nmax…nmax−1 in L (offset by nmax), the
// scale of least weighted error among 19 trial scales around −nmax/max.
func makeQXQuants(nmax int, x []float32, L []int8) float32 {
	amax, vmax := float32(0), float32(0)
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax, vmax = a, v
		}
	}
	if amax < groupMaxEps {
		clear(L)
		return 0
	}
	sums := func(iscale float32) (sumlx, suml2 float32) {
		for _, v := range x {
			l := float32(max(-nmax, min(nmax-1, nearestInt(iscale*v))))
			w := v * v
			sumlx += float32(w * v * l)
			suml2 += float32(w * l * l)
		}
		return sumlx, suml2
	}
	levels := func(iscale float32) {
		for i, v := range x {
			L[i] = int8(nmax + max(-nmax, min(nmax-1, nearestInt(iscale*v))))
		}
	}
	iscale := float32(-nmax) / vmax
	levels(iscale)
	sumlx, suml2 := sums(iscale)
	scale := float32(0)
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(float32(nmax) + float32(0.1*float32(is))) / vmax
		sumlx, suml2 = sums(iscale)
		if suml2 > 0 && sumlx*sumlx > best*suml2 {
			levels(iscale)
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}

// makeQ3Quants is make_q3_quants with do_rmse: q3_K's levels −nmax…nmax−1
// (offset by nmax in L), refined one value at a time while that lowers
// the x²-weighted error, at most 5 passes.
func makeQ3Quants(nmax int, x []float32, L []int8) float32 {
	amax, vmax := float32(0), float32(0)
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax, vmax = a, v
		}
	}
	if amax < groupMaxEps {
		clear(L)
		return 0
	}
	iscale := float32(-nmax) / vmax
	var sumlx, suml2 float32
	for i, v := range x {
		l := max(-nmax, min(nmax-1, nearestInt(iscale*v)))
		L[i] = int8(l)
		w := v * v
		sumlx += float32(w * v * float32(l))
		suml2 += float32(w * float32(l) * float32(l))
	}
	for range 5 {
		changed := false
		for i, v := range x {
			w := v * v
			li := float32(L[i])
			slx := sumlx - float32(w*v*li)
			if !(slx > 0) { // as C's slx > 0, false for a NaN
				continue
			}
			sl2 := suml2 - float32(w*li*li)
			nl := max(-nmax, min(nmax-1, nearestInt(v*sl2/slx)))
			if nl == int(L[i]) {
				continue
			}
			slx += float32(w * v * float32(nl))
			sl2 += float32(w * float32(nl) * float32(nl))
			if sl2 > 0 && slx*slx*suml2 > sumlx*sumlx*sl2 {
				L[i], sumlx, suml2 = int8(nl), slx, sl2
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	for i := range L {
		L[i] += int8(nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// makeQKX2Quants is make_qkx2_quants: levels 0…nmax in L for x ≈
// scale·L − theMin, the (scale, min) of least weighted error (absolute
// with mad, else squared) among the least-squares fits at nstep+1 trial
// scales (rmin + rdelta·is + nmax)/(max − min). laux is scratch.
func makeQKX2Quants(nmax int, x, weights []float32, L, laux []uint8, rmin, rdelta float32, nstep int, mad bool) (scale, theMin float32) {
	lo, hi := x[0], x[0]
	sumW := weights[0]
	sumX := sumW * x[0]
	for i := 1; i < len(x); i++ {
		if x[i] < lo {
			lo = x[i]
		}
		if x[i] > hi {
			hi = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if lo > 0 {
		lo = 0
	}
	if hi == lo {
		clear(L)
		return 0, -lo
	}
	errOf := func(scale, lo float32, L []uint8) float32 {
		var e float32
		for i, v := range x {
			diff := float32(scale*float32(L[i])) + lo - v
			if mad {
				diff = abs32(diff)
			} else {
				diff *= diff
			}
			e += float32(weights[i] * diff)
		}
		return e
	}
	iscale := float32(nmax) / (hi - lo)
	scale = 1 / iscale
	for i, v := range x {
		L[i] = uint8(max(0, min(nmax, nearestInt(iscale*(v-lo)))))
	}
	bestErr := errOf(scale, lo, L)
	for is := 0; is <= nstep; is++ {
		iscale = (rmin + float32(rdelta*float32(is)) + float32(nmax)) / (hi - lo)
		var sumL, sumL2, sumXL float32
		for i, v := range x {
			l := max(0, min(nmax, nearestInt(iscale*(v-lo))))
			laux[i] = uint8(l)
			w, fl := weights[i], float32(l)
			sumL += float32(w * fl)
			sumL2 += float32(w * fl * fl)
			sumXL += float32(w * fl * v)
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if !(D > 0) {
			continue
		}
		thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
		thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
		if thisMin > 0 {
			thisMin = 0
			thisScale = sumXL / sumL2
		}
		if e := errOf(thisScale, thisMin, laux); e < bestErr {
			copy(L, laux)
			bestErr, scale, lo = e, thisScale, thisMin
		}
	}
	return scale, -lo
}

// encodeQ2_K is quantize_row_q2_K_ref: per 16 values make_qkx2_quants
// with 4 levels and |x| weights, the scales and mins to 4 bits of
// max/15, then the values requantized to the rounded scales.
func encodeQ2_K(dst []byte, src []float32) []byte {
	var L [qkK]uint8
	var laux [16]uint8
	var weights, scales, mins [16]float32
	for b := 0; b < len(src); b += qkK {
		x := src[b : b+qkK]
		var maxScale, maxMin float32
		for j := range 16 {
			xs := x[16*j : 16*j+16]
			for l, v := range xs {
				weights[l] = abs32(v)
			}
			scales[j], mins[j] = makeQKX2Quants(3, xs, weights[:], L[16*j:16*j+16], laux[:], -0.5, 0.1, 15, true)
			if scales[j] > maxScale {
				maxScale = scales[j]
			}
			if mins[j] > maxMin {
				maxMin = mins[j]
			}
		}
		var sc [16]uint8
		var d, dmin uint16
		if maxScale > 0 {
			iscale := 15 / maxScale
			for j := range sc {
				sc[j] = uint8(nearestInt(iscale * scales[j]))
			}
			d = F32ToF16(maxScale / 15)
		}
		if maxMin > 0 {
			iscale := 15 / maxMin
			for j := range sc {
				sc[j] |= uint8(nearestInt(iscale*mins[j]) << 4)
			}
			dmin = F32ToF16(maxMin / 15)
		}
		df, mf := F16ToF32(d), F16ToF32(dmin)
		for j := range 16 {
			dj := df * float32(sc[j]&15)
			if dj == 0 {
				continue
			}
			mj := float32(mf * float32(sc[j]>>4))
			for i := 16 * j; i < 16*j+16; i++ {
				L[i] = uint8(max(0, min(3, nearestInt((x[i]+mj)/dj))))
			}
		}
		dst = append(dst, sc[:]...)
		dst = appendQ2(dst, &L)
		dst = binary.LittleEndian.AppendUint16(dst, d)
		dst = binary.LittleEndian.AppendUint16(dst, dmin)
	}
	return dst
}

// appendQ2 packs 256 two-bit values, e at byte 32·(e/128) + e%32, bits
// 2·(e%128/32) (q2_K's and q3_K's qs).
func appendQ2(dst []byte, L *[qkK]uint8) []byte {
	for j := 0; j < qkK; j += 128 {
		for l := range 32 {
			dst = append(dst, L[j+l]|L[j+l+32]<<2|L[j+l+64]<<4|L[j+l+96]<<6)
		}
	}
	return dst
}

func decodeQ2_K(dst []float32, src []byte, n int) []float32 {
	for b := 0; b < n/qkK; b++ {
		blk := src[b*84 : b*84+84]
		sc, qs := blk[:16], blk[16:80]
		d := F16ToF32(binary.LittleEndian.Uint16(blk[80:]))
		dmin := F16ToF32(binary.LittleEndian.Uint16(blk[82:]))
		for e := range qkK {
			s := sc[e/16]
			q := qs[32*(e/128)+e%32] >> (2 * (e % 128 / 32)) & 3
			dl, ml := d*float32(s&15), float32(dmin*float32(s>>4))
			dst = append(dst, float32(dl*float32(q))-ml)
		}
	}
	return dst
}

// encodeQ3_K is quantize_row_q3_K_ref: per 16 values make_q3_quants with
// 8 levels, the scales to 6 bits of the largest-magnitude scale over −32,
// then the values requantized to the rounded scales.
func encodeQ3_K(dst []byte, src []float32) []byte {
	var L [qkK]int8
	var scales [16]float32
	for b := 0; b < len(src); b += qkK {
		x := src[b : b+qkK]
		var maxScale, amax float32
		for j := range 16 {
			scales[j] = makeQ3Quants(4, x[16*j:16*j+16], L[16*j:16*j+16])
			if a := abs32(scales[j]); a > amax {
				amax, maxScale = a, scales[j]
			}
		}
		var sc [12]uint8
		var d uint16
		if maxScale != 0 {
			iscale := -32 / maxScale
			for j := range 16 {
				l := uint8(int8(max(-32, min(31, int(int8(nearestInt(iscale*scales[j]))))) + 32))
				if j < 8 {
					sc[j] = l & 15
				} else {
					sc[j-8] |= l & 15 << 4
				}
				sc[8+j%4] |= l >> 4 << (2 * (j / 4))
			}
			d = F32ToF16(1 / iscale)
		}
		df := F16ToF32(d)
		for j := range 16 {
			dj := df * float32(q3Scale(&sc, j))
			if dj == 0 {
				continue
			}
			for i := 16 * j; i < 16*j+16; i++ {
				L[i] = int8(max(-4, min(3, nearestInt(x[i]/dj))) + 4)
			}
		}
		var hmask [32]uint8
		var low [qkK]uint8
		for j, l := range L {
			if l > 3 {
				hmask[j%32] |= 1 << (j / 32)
				l -= 4
			}
			low[j] = uint8(l)
		}
		dst = append(dst, hmask[:]...)
		dst = appendQ2(dst, &low)
		dst = append(dst, sc[:]...)
		dst = binary.LittleEndian.AppendUint16(dst, d)
	}
	return dst
}

// q3Scale is sub-block j's scale of q3_K's 12 scale bytes, −32…31.
func q3Scale(sc *[12]uint8, j int) int {
	lo := sc[j%8] >> (4 * (j / 8)) & 15
	return int(lo|(sc[8+j%4]>>(2*(j/4))&3)<<4) - 32
}

func decodeQ3_K(dst []float32, src []byte, n int) []float32 {
	for b := 0; b < n/qkK; b++ {
		blk := src[b*110 : b*110+110]
		hm, qs := blk[:32], blk[32:96]
		sc := (*[12]uint8)(blk[96:108])
		d := F16ToF32(binary.LittleEndian.Uint16(blk[108:]))
		for e := range qkK {
			q := int(qs[32*(e/128)+e%32] >> (2 * (e % 128 / 32)) & 3)
			if hm[e%32]>>(e/32)&1 == 0 {
				q -= 4
			}
			dst = append(dst, d*float32(q3Scale(sc, e/16))*float32(q))
		}
	}
	return dst
}

// kScales is quantize_row_q4_K_ref's and q5_K_ref's scale search: per 32
// values make_qkx2_quants with nmax+1 levels and weights sqrt(mean x²) +
// |x|, scales and mins to 6 bits of max/63, then L requantized to the
// rounded scales.
func kScales(x []float32, L *[qkK]uint8, nmax int, rmin float32, nstep int) (d, dmin uint16, sc [12]uint8) {
	var laux [32]uint8
	var weights [32]float32
	var scales, mins [8]float32
	var maxScale, maxMin float32
	for j := range 8 {
		xs := x[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += float32(v * v)
		}
		avX := float32(math.Sqrt(float64(sumX2 / 32)))
		for l, v := range xs {
			weights[l] = avX + abs32(v)
		}
		scales[j], mins[j] = makeQKX2Quants(nmax, xs, weights[:], L[32*j:32*j+32], laux[:], rmin, 0.1, nstep, false)
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxMin {
			maxMin = mins[j]
		}
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	for j := range 8 {
		ls := min(63, uint8(nearestInt(invScale*scales[j])))
		lm := min(63, uint8(nearestInt(invMin*mins[j])))
		if j < 4 {
			sc[j], sc[j+4] = ls, lm
		} else {
			sc[j+4] = ls&15 | lm&15<<4
			sc[j-4] |= ls >> 4 << 6
			sc[j] |= lm >> 4 << 6
		}
	}
	d, dmin = F32ToF16(maxScale/63), F32ToF16(maxMin/63)
	df, mf := F16ToF32(d), F16ToF32(dmin)
	for j := range 8 {
		s, m := scaleMinK4(&sc, j)
		dj := df * float32(s)
		if dj == 0 {
			continue
		}
		mj := float32(mf * float32(m))
		for i := 32 * j; i < 32*j+32; i++ {
			L[i] = uint8(max(0, min(nmax, nearestInt((x[i]+mj)/dj))))
		}
	}
	return d, dmin, sc
}

// scaleMinK4 is get_scale_min_k4: sub-block j's 6-bit scale and min of
// q4_K's and q5_K's 12 scale bytes.
func scaleMinK4(q *[12]uint8, j int) (d, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&15 | q[j-4]>>6<<4, q[j+4]>>4 | q[j]>>6<<4
}

// encodeQ4_K is quantize_row_q4_K_ref.
func encodeQ4_K(dst []byte, src []float32) []byte {
	var L [qkK]uint8
	for b := 0; b < len(src); b += qkK {
		d, dmin, sc := kScales(src[b:b+qkK], &L, 15, -1, 20)
		dst = binary.LittleEndian.AppendUint16(dst, d)
		dst = binary.LittleEndian.AppendUint16(dst, dmin)
		dst = append(dst, sc[:]...)
		for j := 0; j < qkK; j += 64 {
			for l := range 32 {
				dst = append(dst, L[j+l]|L[j+l+32]<<4)
			}
		}
	}
	return dst
}

// encodeQ5_K is quantize_row_q5_K_ref.
func encodeQ5_K(dst []byte, src []float32) []byte {
	var L [qkK]uint8
	for b := 0; b < len(src); b += qkK {
		d, dmin, sc := kScales(src[b:b+qkK], &L, 31, -0.5, 15)
		dst = binary.LittleEndian.AppendUint16(dst, d)
		dst = binary.LittleEndian.AppendUint16(dst, dmin)
		dst = append(dst, sc[:]...)
		var qh [32]uint8
		for e, l := range L {
			qh[e%32] |= l >> 4 << (e / 32)
		}
		dst = append(dst, qh[:]...)
		for j := 0; j < qkK; j += 64 {
			for l := range 32 {
				dst = append(dst, L[j+l]&15|L[j+l+32]<<4)
			}
		}
	}
	return dst
}

// decodeK4 is dequantize_row_q4_K (qh nil) and dequantize_row_q5_K.
func decodeK4(dst []float32, blk, qh, qs []byte) []float32 {
	d := F16ToF32(binary.LittleEndian.Uint16(blk))
	dmin := F16ToF32(binary.LittleEndian.Uint16(blk[2:]))
	sc := (*[12]uint8)(blk[4:16])
	for e := range qkK {
		s, m := scaleMinK4(sc, e/32)
		q := qs[32*(e/64)+e%32] >> (4 * (e % 64 / 32)) & 15
		if qh != nil {
			q |= qh[e%32] >> (e / 32) & 1 << 4
		}
		dl, ml := d*float32(s), float32(dmin*float32(m))
		dst = append(dst, float32(dl*float32(q))-ml)
	}
	return dst
}

func decodeQ4_K(dst []float32, src []byte, n int) []float32 {
	for b := 0; b < n/qkK; b++ {
		blk := src[b*144 : b*144+144]
		dst = decodeK4(dst, blk, nil, blk[16:])
	}
	return dst
}

func decodeQ5_K(dst []float32, src []byte, n int) []float32 {
	for b := 0; b < n/qkK; b++ {
		blk := src[b*176 : b*176+176]
		dst = decodeK4(dst, blk, blk[16:48], blk[48:])
	}
	return dst
}

// encodeQ6_K is quantize_row_q6_K_ref: per 16 values make_qx_quants with
// 64 levels, the scales to 8 bits of the largest-magnitude scale over
// −128, then the values requantized to the rounded scales.
func encodeQ6_K(dst []byte, src []float32) []byte {
	var L [qkK]int8
	var scales [16]float32
	for b := 0; b < len(src); b += qkK {
		x := src[b : b+qkK]
		var maxScale, amax float32
		for j := range 16 {
			scales[j] = makeQXQuants(32, x[16*j:16*j+16], L[16*j:16*j+16])
			if a := abs32(scales[j]); a > amax {
				amax, maxScale = a, scales[j]
			}
		}
		if amax < groupMaxEps {
			dst = append(dst, make([]byte, 210)...)
			continue
		}
		iscale := -128 / maxScale
		d := F32ToF16(1 / iscale)
		var sc [16]int8
		df := F16ToF32(d)
		for j := range 16 {
			sc[j] = int8(min(127, nearestInt(iscale*scales[j])))
			dj := df * float32(sc[j])
			if dj == 0 {
				continue
			}
			for i := 16 * j; i < 16*j+16; i++ {
				L[i] = int8(max(-32, min(31, nearestInt(x[i]/dj))) + 32)
			}
		}
		var ql [128]uint8
		var qh [64]uint8
		for e, l := range L {
			q := uint8(l)
			h, lo := e/128, e%128 // halves of 128: ql[64·h …], qh[32·h …]
			ql[64*h+lo%64] |= q & 15 << (4 * (lo / 64))
			qh[32*h+lo%32] |= q >> 4 << (2 * (lo / 32))
		}
		dst = append(dst, ql[:]...)
		dst = append(dst, qh[:]...)
		for _, s := range sc {
			dst = append(dst, byte(s))
		}
		dst = binary.LittleEndian.AppendUint16(dst, d)
	}
	return dst
}

func decodeQ6_K(dst []float32, src []byte, n int) []float32 {
	for b := 0; b < n/qkK; b++ {
		blk := src[b*210 : b*210+210]
		ql, qh, sc := blk[:128], blk[128:192], blk[192:208]
		d := F16ToF32(binary.LittleEndian.Uint16(blk[208:]))
		for e := range qkK {
			h, lo := e/128, e%128
			q := ql[64*h+lo%64]>>(4*(lo/64))&15 | qh[32*h+lo%32]>>(2*(lo/32))&3<<4
			dst = append(dst, d*float32(int8(sc[e/16]))*float32(int(q)-32))
		}
	}
	return dst
}

// encodeQ8_K is quantize_row_q8_K_ref: d = the value of largest
// magnitude over −127, qs = round(x/d) to nearest even, at most 127.
// ggml leaves an all-zero block's bsums unwritten; here they are 0, the
// sums of its zero qs.
func encodeQ8_K(dst []byte, src []float32) []byte {
	for b := 0; b < len(src); b += qkK {
		x := src[b : b+qkK]
		amax, vmax := float32(0), float32(0)
		for _, v := range x {
			if a := abs32(v); a > amax {
				amax, vmax = a, v
			}
		}
		if amax == 0 {
			dst = append(dst, make([]byte, 292)...)
			continue
		}
		iscale := -127 / vmax
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(1/iscale))
		var bsums [16]int
		for j, v := range x {
			q := int8(min(127, nearestInt(iscale*v)))
			dst = append(dst, byte(q))
			bsums[j/16] += int(q)
		}
		for _, s := range bsums {
			dst = binary.LittleEndian.AppendUint16(dst, uint16(s))
		}
	}
	return dst
}

func decodeQ8_K(dst []float32, src []byte, n int) []float32 {
	for b := 0; b < n/qkK; b++ {
		blk := src[b*292 : b*292+292]
		d := math.Float32frombits(binary.LittleEndian.Uint32(blk))
		for _, q := range blk[4 : 4+qkK] {
			dst = append(dst, d*float32(int8(q)))
		}
	}
	return dst
}
