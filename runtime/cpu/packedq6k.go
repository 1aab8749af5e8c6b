package cpu

import "github.com/graphc/graphc/tensor"

// quantizeColumnQ6 quantizes a column of x (nb blocks of 256) into a q6_K
// panel of pc columns: block b's quants to xq[b·pc·256:], its d to
// xd[b·pc] and its 16 sub-block sums times −32 to xc[b·pc·16:].
func quantizeColumnQ6(row []float32, nb int, xq []byte, xd []float32, xc []int32, pc int) {
	var blk [q8_KSize]byte
	for b := 0; b < nb; b++ {
		quantizeQ8_K(blk[:0], row[b*qkK:(b+1)*qkK])
		copy(xq[b*pc*qkK:][:qkK], blk[q8_KQuants:])
		xd[b*pc] = q8KScale(blk[:])
		for s := 0; s < 16; s++ {
			xc[b*pc*16+s] = -32 * q8KBsum(blk[:], s)
		}
	}
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
				x, xs := xq[(b*pc+j)*qkK:][:qkK], xc[(b*pc+j)*16:][:16]
				var isum int32
				for s := 0; s < 16; s++ {
					h, o, k := s/8, s%8/2, s%2 // x's elements 128h+32o+16k..
					q := xs[s]
					for i := 4 * k; i < 4*k+4; i++ {
						t := wb[288+192*(8*h+i):]
						for e := 0; e < 4; e++ {
							lo := t[o%2*64+4*r+e] >> (4 * (o / 2)) & 15
							hi := t[128+4*r+e] >> (2 * o) & 3
							q += int32(lo|hi<<4) * int32(int8(x[128*h+32*o+4*i+e]))
						}
					}
					isum += int32(int8(wb[32+16*s+r])) * q
				}
				tile[j*packRows+r] += float32(d * xd[b*pc+j] * float32(isum))
			}
		}
	}
}
