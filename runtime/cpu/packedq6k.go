package cpu

import "github.com/graphc/graphc/tensor"

// q6PanelInts is the int32s of xc per column block of a q6_K panel: the
// block's 16 sub-block offsets −32·Σx (what the int32 sums start from),
// then the same offsets split in two int16 halves (q6OffsetPair), for
// the AVX2 kernels, which sum a sub-block in int16.
const q6PanelInts = 32

// quantizeColumnQ6 quantizes a column of x (nb blocks of 256) into a q6_K
// panel of pc columns: block b's quants to xq[b·pc·256:], its d to
// xd[b·pc] and its offsets to xc[b·pc·q6PanelInts:].
func quantizeColumnQ6(row []float32, nb int, xq []byte, xd []float32, xc []int32, pc int) {
	var blk [q8_KSize]byte
	for b := 0; b < nb; b++ {
		quantizeQ8_K(blk[:0], row[b*qkK:(b+1)*qkK])
		q := blk[q8_KQuants : q8_KQuants+qkK]
		copy(xq[b*pc*qkK:][:qkK], q)
		xd[b*pc] = q8KScale(blk[:])
		c := xc[b*pc*q6PanelInts:][:q6PanelInts]
		for s := 0; s < 16; s++ {
			c[s] = -32 * q8KBsum(blk[:], s)
			c[16+s] = q6OffsetPair(q[16*s : 16*s+16])
		}
	}
}

// q6OffsetPair is a sub-block's offset −32·Σx as the two int16 halves
// vpmaddubsw's sums fall in: −32 times the sum of the quants at 4n and
// 4n+1 (the low half) and at 4n+2 and 4n+3 (the high). Each half of
// Σ(q−32)·x then fits an int16 (|·| ≤ 8·32·127), so its int16 sum,
// wrapping on the way, is exact.
func q6OffsetPair(x []byte) int32 {
	var lo, hi int32
	for n := 0; n < 16; n += 4 {
		lo += int32(int8(x[n])) + int32(int8(x[n+1]))
		hi += int32(int8(x[n+2])) + int32(int8(x[n+3]))
	}
	return int32(uint32(uint16(int16(-32*lo))) | uint32(uint16(int16(-32*hi)))<<16)
}

// packedKernelQ6Go is packedKernelGo for q6_K: per block, row r and
// column j, d·dx·Σ_s scale_s·(Σ q·x − 32·Σx), the integer sums
// dotQ6_KGo's.
func packedKernelQ6Go(pc int, w, xq []byte, xd []float32, xc []int32, nb int, tile []float32) {
	pb := packBlockBytes(tensor.Q6_K)
	clear(tile)
	for b := 0; b < nb; b++ {
		wb := w[b*pb : (b+1)*pb]
		for r := 0; r < packRows; r++ {
			d := f16At(wb, 2*r)
			for j := 0; j < pc; j++ {
				x, xs := xq[(b*pc+j)*qkK:][:qkK], xc[(b*pc+j)*q6PanelInts:][:16]
				var isum int32
				for s := 0; s < 16; s++ {
					h, o, k := s/8, s%8/2, s%2 // x's elements 128h+32o+16k..
					q := xs[s]
					for i := 4 * k; i < 4*k+4; i++ {
						t := wb[288+192*(8*h+i)+4*r:]
						for e := 0; e < 4; e++ {
							var w byte
							if o < 3 {
								w = t[64*o+e] & 63
							} else {
								w = t[e]>>6 | t[64+e]>>6<<2 | t[128+e]>>6<<4
							}
							q += int32(w) * int32(int8(x[128*h+32*o+4*i+e]))
						}
					}
					isum += int32(int8(wb[32+16*s+r])) * q
				}
				tile[j*packRows+r] += float32(d * xd[b*pc+j] * float32(isum))
			}
		}
	}
}
