package cpu

import (
	"encoding/binary"
	"fmt"
	"runtime"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/tensor"
)

// Packed weights: ggml's CPU_REPACK extra buffer type (ggml-cpu/repack.cpp),
// the layout llama.cpp gives q4_0 weights at load. Pack copies a q4_0 or
// q8_0 weight into groups of packRows rows whose blocks are interleaved so
// that one 64-byte load holds four consecutive quants of each of the
// group's rows; MulMat then reads the copy instead of the weight, with
// kernels that keep one row per int32 lane (packed.go), and GetRows
// rebuilds the rows it picks from it, block by block (unpack.go).
//
// A packed matrix is its row groups one after the other, a group its
// blocks in order (nb = k/32 of them, k/256 for q4_K and q6_K), and a group's block the packRows
// rows' blocks of that column range, packBlockBytes(t) long:
//
//	[0, 32)   the 16 rows' f16 scales, row r at 2r
//	q4_0: [32, 288) chunks c = 0..3 of 64 bytes: row r's dword at 32+64c+4r
//	          is its quant bytes 4c..4c+3 as stored (low nibbles: elements
//	          4c..4c+3, high nibbles: elements 16+4c..16+4c+3)
//	q8_0: [32, 544) chunks g = 0..7 of 64 bytes: row r's dword at 32+64g+4r
//	          is its quants 4g..4g+3, each plus 128 (an unsigned byte)
//
//
// q4_K's group block covers one super-block of 256, 2368 bytes (148 a
// row, ggml's 144 with the 6-bit scales and mins a byte each):
//
//	[0, 32)      the rows' f16 d, row r at 2r; [32, 64) their f16 dmin
//	[64, 192)    scales (get_scale_min_k4's, decoded): sub-block s's at
//	             64+16s+r, one byte per row
//	[192, 320)   mins: row r's two bytes at 192+32p+2r are its mins 2p
//	             and 2p+1 (zero-extended to words, row r's dword is the
//	             int16 pair vpdpwssd multiplies by x's sums)
//	[320, 2368)  chunks c = 0..31 of 64 bytes: row r's dword at 320+64c+4r
//	             is its quant bytes 4c..4c+3 as stored
//
// q6_K's covers one super-block too, 3360 bytes, its head first:
//
//	[0, 32)      the rows' f16 d, row r at 2r
//	[32, 288)    scales (int8): sub-block s's (elements 16s..16s+15) at
//	             32+16s+r
//	[288, 3360)  triples t = 8h+i (h the half of 128 elements, i = 0..7) of
//	             three chunks c = 0..2, at 288+192t+64c: row r's dword at
//	             +4r holds quants 128h+4i+32c+(0..3), one a byte in bits
//	             0–5, and in bits 6–7 bits 2c, 2c+1 of the quant 96
//	             elements on from chunk 0's (128h+4i+96+(0..3)); so a
//	             triple holds elements 128h+4i+{0,32,64,96}+(0..3), and
//	             the four triples 8h+4k.. 8h+4k+3 sub-blocks
//	             8h+k+{0,2,4,6} whole. Three of a triple's four quant
//	             dwords are one and away (0x3f), the fourth the chunks'
//	             top bits shifted and or-ed: fewer instructions than
//	             ggml's ql/qh split needs (docs/performance.md).
//
// Rows past the matrix's last (m not a multiple of 16) are zeros: scale 0.
// The unsigned quants are what vpdpbusd multiplies (unsigned by signed);
// the kernels take the offset's share (8 or 128 times the activation
// block's quant sum) from each block's integer sum, which is then exactly
// ggml's.

// packRows is the rows of a packed group. The plan sizes the copies by
// the same rule (backend.CPUPackedBytes), so it is backend's constant.
const packRows = backend.CPUPackRows

// packBlockBytes is the bytes of one packed group's block.
func packBlockBytes(dt tensor.DType) int {
	return packRows * backend.CPUPackedRowBytes(dt, blockElems(dt))
}

// blockElems is the elements of one block of dt's packed copies.
func blockElems(dt tensor.DType) int {
	if dt == tensor.Q4_K || dt == tensor.Q6_K {
		return qkK
	}
	return 32
}

// packedWeight is a packed copy of one weight.
type packedWeight struct {
	free    func() // releases data (allocPacked)
	typ     tensor.DType
	ne      [4]int
	nb      int // blocks per row
	groups  int // row groups per matrix
	data    []byte
	matSize int // bytes per matrix
}

// group returns group g of matrix mat.
func (p *packedWeight) group(mat, g int) []byte {
	gs := p.nb * packBlockBytes(p.typ)
	o := mat*p.matSize + g*gs
	return p.data[o : o+gs]
}

// Pack makes MulMat read w, when it is MulMat's a, from a packed copy
// (backend.CPUPackedBytes(w.Type, w.Ne) of memory, held by the backend
// until Close). w must be a dense weight of a type backend.CPUPackable
// takes, whose data stays unchanged. GetRows of w (a tied embedding)
// reads its rows from the copy too (unpack.go); other kernels read w
// itself. release (the plan's ir.Packing.Release) lets w's pages leave
// memory once it is packed (engine.ReleasePages): they come back from the
// mapped file if anything reads them.
func (b *Backend) Pack(w *tensor.Tensor, release bool) error {
	if !backend.CPUPackable(w.Type) {
		return fmt.Errorf("pack: %s weights are not packed (only q4_0, q8_0, q4_K and q6_K)", w.Type)
	}
	be := blockElems(w.Type)
	if !w.Contiguous() || w.Ne[0]%be != 0 || len(w.Data) < w.Span() || w.NElem() == 0 {
		return fmt.Errorf("pack: weight %s%v is not a dense, non-empty matrix of whole blocks", w.Type, w.Ne)
	}
	if err := engine.CheckHostMemory("packed weights", backend.CPUPackedBytes(w.Type, w.Ne)); err != nil {
		return err
	}
	p := &packedWeight{typ: w.Type, ne: w.Ne, nb: w.Ne[0] / be, groups: ceilDiv(w.Ne[1], packRows)}
	var free func()
	p.data, free = allocPacked(int(backend.CPUPackedBytes(w.Type, w.Ne)))
	// Close frees the copies; a Backend dropped without Close frees each
	// once it is unreachable.
	cleanup := runtime.AddCleanup(p, func(f func()) { f() }, free)
	p.free = func() { cleanup.Stop(); free() }
	p.matSize = p.groups * p.nb * packBlockBytes(w.Type)
	b.parallel(&packTaskQ{w: w, p: p}, len(p.data), w.Ne[2]*w.Ne[3]*p.groups)
	if release {
		engine.ReleasePages(w.Data[:w.Span()])
	}
	if old := b.packed[&w.Data[0]]; old != nil {
		old.free()
	}
	b.packed[&w.Data[0]] = p
	return nil
}

// packedFor returns the packed copy of a, or nil: a is the weight Pack
// was given, the same bytes with the same type and shape.
func (b *Backend) packedFor(a *tensor.Tensor) *packedWeight {
	if len(b.packed) == 0 || len(a.Data) == 0 {
		return nil
	}
	p := b.packed[&a.Data[0]]
	if p == nil || p.typ != a.Type || p.ne != a.Ne || !a.Contiguous() {
		return nil
	}
	return p
}

// packTaskQ packs a weight, a chunk of row groups per chunk.
type packTaskQ struct {
	w *tensor.Tensor
	p *packedWeight
}

func (t *packTaskQ) run(chunk, nchunks, _ int) {
	p, w := t.p, t.w
	n := w.Ne[2] * w.Ne[3] * p.groups
	lo, hi := split(n, chunk, nchunks)
	rowBytes := w.Type.RowSize(w.Ne[0])
	bs := w.Type.RowSize(blockElems(w.Type))
	pb := packBlockBytes(w.Type)
	pack := packCodecs[w.Type].pack
	for i := lo; i < hi; i++ {
		mat, g := i/p.groups, i%p.groups
		i2, i3 := mat%w.Ne[2], mat/w.Ne[2]
		dst := p.group(mat, g)
		for r := 0; r < packRows; r++ {
			row := g*packRows + r
			if row >= w.Ne[1] {
				break // padding rows stay zero
			}
			src := w.Data[i3*w.Nb[3]+i2*w.Nb[2]+row*w.Nb[1]:][:rowBytes]
			for blk := 0; blk < p.nb; blk++ {
				pack(dst[blk*pb:(blk+1)*pb], src[blk*bs:(blk+1)*bs], r)
			}
		}
	}
}

// packCodecs are each packed type's block packer and its inverse, one
// place for both directions so that a layout changes in one: pack writes
// the ggml block s as row r of the group block d, unpack (unpack.go)
// rebuilds s from it.
var packCodecs = map[tensor.DType]struct{ pack, unpack func(d, s []byte, r int) }{
	tensor.Q4_0: {packQ4_0, unpackQ4_0},
	tensor.Q8_0: {packQ8_0, unpackQ8_0},
	tensor.Q4_K: {packQ4_K, unpackQ4_K},
	tensor.Q6_K: {packQ6_K, unpackQ6_K},
}

// packQ4_0 writes the q4_0 block s as row r of the group block d.
func packQ4_0(d, s []byte, r int) {
	copy(d[2*r:][:2], s[0:2])
	for c := 0; c < 4; c++ {
		copy(d[32+64*c+4*r:][:4], s[2+4*c:][:4])
	}
}

// packQ8_0 writes the q8_0 block s as row r of the group block d, its
// quants plus 128: the unsigned operand of vpdpbusd.
func packQ8_0(d, s []byte, r int) {
	copy(d[2*r:][:2], s[0:2])
	for c := 0; c < 8; c++ {
		for i := 0; i < 4; i++ {
			d[32+64*c+4*r+i] = s[2+4*c+i] ^ 0x80
		}
	}
}

// packQ4_K writes the q4_K block s as row r of the group block d.
func packQ4_K(d, s []byte, r int) {
	copy(d[2*r:][:2], s[0:2])
	copy(d[32+2*r:][:2], s[2:4])
	sc, mn := kScaleMin(s[4:16])
	for j := 0; j < 8; j++ {
		d[64+16*j+r] = byte(sc[j])
		d[192+32*(j/2)+2*r+j%2] = byte(mn[j])
	}
	for c := 0; c < 32; c++ {
		copy(d[320+64*c+4*r:][:4], s[16+4*c:16+4*c+4])
	}
}

// packQ6_K writes the q6_K block s (ql, qh, scales, d) as row r of the
// group block d, four quants of each output (ggml's dequantize_row_q6_K:
// elements l+32o of a half) at a time, a byte each of a uint32.
func packQ6_K(d, s []byte, r int) {
	copy(d[2*r:][:2], s[208:210])
	for j := 0; j < 16; j++ {
		d[32+16*j+r] = s[192+j]
	}
	const lo2, lo4 = 0x03030303, 0x0f0f0f0f
	le := binary.LittleEndian
	for h := 0; h < 2; h++ {
		ql, qh := s[64*h:], s[128+32*h:]
		for i := 0; i < 8; i++ {
			a, b, hb := le.Uint32(ql[4*i:]), le.Uint32(ql[32+4*i:]), le.Uint32(qh[4*i:])
			q0 := a&lo4 | hb&lo2<<4
			q1 := b&lo4 | hb>>2&lo2<<4
			q2 := a>>4&lo4 | hb>>4&lo2<<4
			q3 := b>>4&lo4 | hb>>6&lo2<<4
			t := d[288+192*(8*h+i)+4*r:]
			le.PutUint32(t, q0|q3&lo2<<6)
			le.PutUint32(t[64:], q1|q3>>2&lo2<<6)
			le.PutUint32(t[128:], q2|q3>>4&lo2<<6)
		}
	}
}
