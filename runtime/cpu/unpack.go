package cpu

import "encoding/binary"

// Unpacking: the inverse of each packer in pack.go, so that GetRows can
// read a packed weight's rows from its copy once Pack has released the
// weight's own pages (a tied token embedding), instead of faulting them
// back from the file each token. Each rebuilds row r's ggml block s, byte
// for byte, from the group block d, reading only row r's lane: the
// padding rows of a matrix's last group are never read.

// unpackRow rebuilds row row of matrix mat (i2 + i3·ne[2]) of p's weight
// into dst, whose capacity is at least the row's bytes, and returns it:
// the bytes the weight holds there.
func (p *packedWeight) unpackRow(dst []byte, mat, row int) []byte {
	if row < 0 || row >= p.ne[1] {
		bug("unpackRow: row %d of %d", row, p.ne[1])
	}
	unpack := packCodecs[p.typ].unpack
	bs, pb := p.typ.RowSize(blockElems(p.typ)), packBlockBytes(p.typ)
	grp, r := p.group(mat, row/packRows), row%packRows
	dst = dst[:p.nb*bs]
	for blk := 0; blk < p.nb; blk++ {
		unpack(grp[blk*pb:(blk+1)*pb], dst[blk*bs:(blk+1)*bs], r)
	}
	return dst
}

// unpackQ4_0 rebuilds the q4_0 block s, row r of the group block d
// (packQ4_0's inverse).
func unpackQ4_0(d, s []byte, r int) {
	copy(s[0:2], d[2*r:][:2])
	for c := 0; c < 4; c++ {
		copy(s[2+4*c:][:4], d[32+64*c+4*r:][:4])
	}
}

// unpackQ8_0 rebuilds the q8_0 block s, row r of the group block d
// (packQ8_0's inverse: the quants less 128).
func unpackQ8_0(d, s []byte, r int) {
	copy(s[0:2], d[2*r:][:2])
	for c := 0; c < 8; c++ {
		for i := 0; i < 4; i++ {
			s[2+4*c+i] = d[32+64*c+4*r+i] ^ 0x80
		}
	}
}

// unpackQ4_K rebuilds the q4_K block s, row r of the group block d
// (packQ4_K's inverse). The group holds the scales and mins decoded, so
// they are encoded again as ggml packs them in 12 bytes (kScaleMin's
// inverse): of those bytes (the block's 4..15), scale and min j < 4 in
// the low 6 bits of bytes j and j+4, j ≥ 4 in the low and high nibbles of
// byte j+4 and their top two bits in the top bits of bytes j-4 and j.
// Each is < 64, so every bit of the 12 bytes comes back.
func unpackQ4_K(d, s []byte, r int) {
	copy(s[0:2], d[2*r:][:2])
	copy(s[2:4], d[32+2*r:][:2])
	var sc, mn [8]byte
	for j := 0; j < 8; j++ {
		sc[j] = d[64+16*j+r]
		mn[j] = d[192+32*(j/2)+2*r+j%2]
	}
	for j := 0; j < 4; j++ {
		s[4+j] = sc[j] | sc[j+4]>>4<<6
		s[8+j] = mn[j] | mn[j+4]>>4<<6
		s[12+j] = sc[j+4]&15 | mn[j+4]<<4
	}
	for c := 0; c < 32; c++ {
		copy(s[16+4*c:][:4], d[320+64*c+4*r:][:4])
	}
}

// unpackQ6_K rebuilds the q6_K block s (ql, qh, scales, d), row r of the
// group block d (packQ6_K's inverse): a triple's three dwords give its
// first three outputs' quants in bits 0–5 and the fourth's in their top
// bits, and the four are split into ql's nibbles and qh's pairs again.
func unpackQ6_K(d, s []byte, r int) {
	copy(s[208:210], d[2*r:][:2])
	for j := 0; j < 16; j++ {
		s[192+j] = d[32+16*j+r]
	}
	const lo2, lo4, lo6 = 0x03030303, 0x0f0f0f0f, 0x3f3f3f3f
	le := binary.LittleEndian
	for h := 0; h < 2; h++ {
		ql, qh := s[64*h:], s[128+32*h:]
		for i := 0; i < 8; i++ {
			t := d[288+192*(8*h+i)+4*r:]
			t0, t1, t2 := le.Uint32(t), le.Uint32(t[64:]), le.Uint32(t[128:])
			q0, q1, q2 := t0&lo6, t1&lo6, t2&lo6
			q3 := t0>>6&lo2 | t1>>6&lo2<<2 | t2>>6&lo2<<4
			le.PutUint32(ql[4*i:], q0&lo4|q2&lo4<<4)
			le.PutUint32(ql[32+4*i:], q1&lo4|q3&lo4<<4)
			le.PutUint32(qh[4*i:], q0>>4&lo2|q1>>4&lo2<<2|q2>>4&lo2<<4|q3>>4&lo2<<6)
		}
	}
}
