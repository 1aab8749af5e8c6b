package main

import (
	"math/bits"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// dotFamily is dot_amd64.s, the kernels of dot.go (declared in
// dot_amd64.go, which gives each one's loop), in the order of the
// hand-written file it replaced, so that the linked code kept its layout.
func dotFamily(a *asm) {
	for _, s := range []isa{avx512, avx2} {
		for _, e := range []elem{f32, f16} {
			a.dot(e, s)
		}
		for _, e := range []elem{f32, f16} {
			a.dot4x1(e, s)
		}
		if s.evex {
			for _, e := range []elem{f32, f16} {
				a.dot4x4(e)
			}
		} else {
			for _, e := range []elem{f32, f16} {
				a.dot4x4AVX2(e)
			}
		}
	}
	a.dotPanel()
	for _, s := range []isa{avx512, avx2} {
		a.dotBF16(s)
	}
}

// dot is the one-row dot Σ a[k]·x[k] (dotF32AVX512 and its kin): four
// accumulators V0–V3 over four vectors a step, then V0 a vector at a time,
// then on AVX-512 the masked tail into V1; the result is (V0+V1) + (V2+V3)
// with its lanes summed.
func (a *asm) dot(e elem, s isa) {
	a.text("dot"+e.name+s.name, "func(a []"+e.goType+", x []float32) float32")
	a.Load(a.Param("a").Base(), reg.RSI)
	a.Load(a.Param("x").Base(), reg.RDI)
	a.Load(a.Param("x").Len(), reg.RCX)
	a.vectors(s)
	for i := 0; i < 4; i++ {
		a.zero(s, s.v(i))
	}
	a.steps([]stream{{reg.RSI, s.lanes * e.size}, {reg.RDI, s.bytes()}}, func(i int, at func(int) operand.Mem) {
		a.load(e, at(0), s.v(4+i))
		a.fma(s.v(4+i), at(1), s.v(i))
	})
	if s.evex {
		a.loadMasked(e, mem(reg.RSI), reg.K1, s.v(4))
		a.VMOVUPS_Z(mem(reg.RDI), reg.K1, s.v(5))
		a.fma(s.v(4), s.v(5), s.v(1))
	}
	a.VADDPS(s.v(1), s.v(0), s.v(0))
	a.VADDPS(s.v(3), s.v(2), s.v(2))
	a.VADDPS(s.v(2), s.v(0), s.v(0))
	a.sum(s)
	a.Store(reg.X0, a.ReturnIndex(0))
	a.ret()
}

// sum adds V0's lanes into X0's lowest (V1 scratch): a one-row dot's
// result.
func (a *asm) sum(s isa) {
	if s.evex {
		a.VEXTRACTF64X4(u8(1), reg.Z0, reg.Y1)
		a.VADDPS(reg.Y1, reg.Y0, reg.Y0)
	}
	a.VEXTRACTF128(u8(1), reg.Y0, reg.X1)
	a.VADDPS(reg.X1, reg.X0, reg.X0)
	a.VHADDPS(reg.X0, reg.X0, reg.X0)
	a.VHADDPS(reg.X0, reg.X0, reg.X0)
}

// dotBF16 is dotBF16AVX512 and dotBF16AVX2, a vector of a and of x a step
// (len(a) a multiple of the vector size). A bf16 value is the top half of
// its float32, so unpacking a vector's words with zeros (the last register)
// below them gives float32s, the low words into V0's sum and the high ones
// into V1's: the same lane order for a and x, which is all a dot needs.
func (a *asm) dotBF16(s isa) {
	a.text("dotBF16"+s.name, "func(a, x []byte) float32")
	a.Load(a.Param("a").Base(), reg.RSI)
	a.Load(a.Param("a").Len(), reg.RCX)
	a.Load(a.Param("x").Base(), reg.RDI)
	a.SHRQ(u8(bits.TrailingZeros(uint(s.bytes()))), reg.RCX)
	zeros := s.v(s.regs() - 1)
	if s.evex {
		a.VPXORD(zeros, zeros, zeros)
	} else {
		a.VPXOR(zeros, zeros, zeros)
	}
	a.zero(s, s.v(0))
	a.zero(s, s.v(1))
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(operand.LabelRef("done"))
	a.Label("loop")
	for i, p := range []reg.Register{reg.RSI, reg.RDI} {
		if s.evex {
			a.VMOVDQU64(mem(p), s.v(8+i))
		} else {
			a.VMOVDQU(mem(p), s.v(8+i))
		}
	}
	for h, unpack := range []func(...operand.Op){a.VPUNPCKLWD, a.VPUNPCKHWD} {
		row, x := s.v(4+2*h), s.v(5+2*h)
		unpack(s.v(8), zeros, row)
		unpack(s.v(9), zeros, x)
		a.fma(row, x, s.v(h))
	}
	a.ADDQ(u32(s.bytes()), reg.RSI)
	a.ADDQ(u32(s.bytes()), reg.RDI)
	a.DECQ(reg.RCX)
	a.JNZ(operand.LabelRef("loop"))
	a.Label("done")
	a.VADDPS(s.v(1), s.v(0), s.v(0))
	a.sum(s)
	a.Store(reg.X0, a.ReturnIndex(0))
	a.ret()
}

// quad is the addresses of four rows or columns from base: one stride
// apart, three being three strides.
func quad(base, one, three reg.Register) [4]operand.Mem {
	return [4]operand.Mem{
		{Base: base},
		{Base: base, Index: one, Scale: 1},
		{Base: base, Index: one, Scale: 2},
		{Base: base, Index: three, Scale: 1},
	}
}

// dot4x1 is the dots of four rows of a (SI, R8 bytes apart, R11 three rows)
// with x (dot4x1F32AVX512 and its kin). A step reads s.blocks vectors of
// x, V(b), each with its own accumulators (block b, row i: V(acc+4b+i));
// on AVX-512 one block more may be left, and the masked tail goes to the
// last block's. Each step prefetches the same columns of the next four rows
// (nextRows), which the next call reads.
func (a *asm) dot4x1(e elem, s isa) {
	a.text("dot4x1"+e.name+s.name, "func(a []"+e.goType+", lda int, x []float32, c *[4]float32)")
	a.Load(a.Param("a").Base(), reg.RSI)
	a.Load(a.Param("lda"), reg.R8)
	a.SHLQ(u8(e.shift()), reg.R8)
	a.LEAQ(operand.Mem{Base: reg.R8, Index: reg.R8, Scale: 2}, reg.R11)
	a.LEAQ(operand.Mem{Base: reg.RSI, Index: reg.R8, Scale: 4}, reg.R9)
	a.Load(a.Param("x").Base(), reg.RDI)
	a.Load(a.Param("x").Len(), reg.RCX)
	a.vectors(s)
	nb := s.blocks
	acc := func(b, i int) reg.Register { return s.v(s.acc + 4*b + i) }
	for b := 0; b < nb; b++ {
		for i := 0; i < 4; i++ {
			a.zero(s, acc(b, i))
		}
	}
	rows := quad(reg.RSI, reg.R8, reg.R11)
	row := func(i, b int) operand.Mem { return rows[i].Offset(b * s.lanes * e.size) }
	// block adds block b of each row times V(b), converting a row into
	// V(nb+4b+i) where it must.
	block := func(b int) {
		for i := 0; i < 4; i++ {
			a.fma(a.source(e, row(i, b), s.v(nb+4*b+i)), s.v(b), acc(b, i))
		}
	}
	advance := func(blocks int) {
		a.ADDQ(u32(blocks*s.lanes*e.size), reg.RSI)
		a.ADDQ(u32(blocks*s.bytes()), reg.RDI)
	}
	steps := reg.RCX
	if nb > 1 {
		steps = reg.RBX
		a.MOVQ(reg.RCX, steps)
		a.SHRQ(u8(bits.TrailingZeros(uint(nb))), steps)
		a.ANDQ(u8(nb-1), reg.RCX)
	}
	a.TESTQ(steps, steps)
	a.JZ(operand.LabelRef("rest"))
	a.Label("loop")
	a.nextRows(nb*s.lanes*e.size, steps)
	for b := 0; b < nb; b++ {
		a.VMOVUPS(mem(reg.RDI).Offset(b*s.bytes()), s.v(b))
	}
	for b := 0; b < nb; b++ {
		block(b)
	}
	advance(nb)
	a.DECQ(steps)
	a.JNZ(operand.LabelRef("loop"))
	a.Label("rest")
	if nb > 1 { // nb is 2: at most one vector is left
		a.TESTQ(reg.RCX, reg.RCX)
		a.JZ(operand.LabelRef("tail"))
		a.VMOVUPS(mem(reg.RDI), s.v(0))
		block(0)
		advance(1)
	}
	a.Label("tail")
	if s.evex {
		a.VMOVUPS_Z(mem(reg.RDI), reg.K1, s.v(0))
		for i := 0; i < 4; i++ {
			a.loadMasked(e, row(i, 0), reg.K1, s.v(nb+i))
			a.fma(s.v(nb+i), s.v(0), acc(nb-1, i))
		}
		for i := 0; i < 4; i++ {
			a.VADDPS(acc(1, i), acc(0, i), acc(0, i))
		}
		a.pairSum(a.VSHUFF32X4, 0x44, 0xEE, acc(0, 1), acc(0, 0), reg.Z0, reg.Z1, reg.Z0) // lanes: row 0, 0, 1, 1
		a.pairSum(a.VSHUFF32X4, 0x44, 0xEE, acc(0, 3), acc(0, 2), reg.Z2, reg.Z3, reg.Z2) // row 2, 2, 3, 3
		a.pairSum(a.VSHUFF32X4, 0x88, 0xDD, reg.Z2, reg.Z0, reg.Z4, reg.Z5, reg.Z4)       // lane i: 4 sums of row i
		for _, imm := range []int{0x4E, 0xB1} {
			a.VSHUFPS(u8(imm), reg.Z4, reg.Z4, reg.Z5)
			a.VADDPS(reg.Z5, reg.Z4, reg.Z4)
		}
		// Every element of lane i is now row i's sum: store one of each.
		a.MOVL(u32(0x1111), reg.EAX)
		a.KMOVW(reg.EAX, reg.K2)
		a.Load(a.Param("c"), reg.RDX)
		a.VCOMPRESSPS(reg.Z4, reg.K2, mem(reg.RDX))
	} else {
		a.VHADDPS(acc(0, 1), acc(0, 0), reg.Y0)
		a.VHADDPS(acc(0, 3), acc(0, 2), reg.Y1)
		a.VHADDPS(reg.Y1, reg.Y0, reg.Y0)
		a.VEXTRACTF128(u8(1), reg.Y0, reg.X1)
		a.VADDPS(reg.X1, reg.X0, reg.X0)
		a.Load(a.Param("c"), reg.RDX)
		a.VMOVUPS(reg.X0, mem(reg.RDX))
	}
	a.ret()
}

// nextRows asks, into L2, for the lines of the four rows after the four a
// dot4x1 kernel reads that a step of n bytes of each row covers: R9 walks
// those rows as SI walks its own. A step of less than a line asks for the
// next line every 64/n steps, when steps' low bits are clear. The rows are
// usually a weight read in place from the file's mapping: 4 KiB pages,
// where the hardware prefetcher stops, and a row of a 2048-wide f16 matrix
// is one page (the gains are in commit eb9fae1's message).
func (a *asm) nextRows(n int, steps reg.Register) {
	if n < 64 {
		a.TESTQ(u32(64/n-1), steps)
		a.JNZ(operand.LabelRef("fetched"))
	}
	for off := 0; off < max(n, 64); off += 64 {
		for _, m := range quad(reg.R9, reg.R8, reg.R11) {
			a.PREFETCHT1(m.Offset(off))
		}
	}
	a.ADDQ(u32(max(n, 64)), reg.R9)
	if n < 64 {
		a.Label("fetched")
	}
}

// pairSum sets d to shuf(lo, y, x) + shuf(hi, y, x), t0 and t1 scratch.
func (a *asm) pairSum(shuf func(...operand.Op), lo, hi int, y, x, t0, t1, d reg.Register) {
	shuf(u8(lo), y, x, t0)
	shuf(u8(hi), y, x, t1)
	a.VADDPS(t1, t0, d)
}

// The AVX-512 4×4 blocks (dot4x4F32AVX512, dot4x4F16AVX512,
// dotPanelF32AVX512): rows i of a (SI, R8 bytes apart, R9 three rows) in
// Z0–Z3, the four columns j of x (DI, R10 apart, R11 three) in Z4–Z7, the
// sums of row i · column j in Z(16+4i+j); K1 and CX are the tail's lanes
// and the full vectors (tail16).

// dot4x4 is dot4x4F32AVX512 and dot4x4F16AVX512.
func (a *asm) dot4x4(e elem) {
	a.text("dot4x4"+e.name+"AVX512", "func(a []"+e.goType+", lda int, x []float32, ldx, k int, c []float32, ldc int)")
	a.Load(a.Param("a").Base(), reg.RSI)
	a.Load(a.Param("lda"), reg.R8)
	a.SHLQ(u8(e.shift()), reg.R8)
	a.LEAQ(operand.Mem{Base: reg.R8, Index: reg.R8, Scale: 2}, reg.R9)
	a.Load(a.Param("x").Base(), reg.RDI)
	a.Load(a.Param("ldx"), reg.R10)
	a.SHLQ(u8(2), reg.R10)
	a.LEAQ(operand.Mem{Base: reg.R10, Index: reg.R10, Scale: 2}, reg.R11)
	a.Load(a.Param("k"), reg.RCX)
	a.vectors(avx512)
	a.block4x4(e)
	a.Load(a.Param("c").Base(), reg.RDX)
	a.Load(a.Param("ldc"), reg.R8)
	a.SHLQ(u8(2), reg.R8)
	a.LEAQ(operand.Mem{Base: reg.R8, Index: reg.R8, Scale: 2}, reg.R9)
	a.store4x4(reg.RDX, reg.R8, reg.R9)
	a.ret()
}

// dotPanel is dotPanelF32AVX512: the 4×4 block for each four rows, AX the
// block's first row, R12 the blocks left, the column stride of c in R13.
func (a *asm) dotPanel() {
	a.text("dotPanelF32AVX512", "func(m int, a []float32, lda int, x []float32, ldx, k int, c []float32, ldc int)")
	a.Load(a.Param("a").Base(), reg.RAX)
	a.Load(a.Param("lda"), reg.R8)
	a.SHLQ(u8(2), reg.R8)
	a.LEAQ(operand.Mem{Base: reg.R8, Index: reg.R8, Scale: 2}, reg.R9)
	a.Load(a.Param("ldx"), reg.R10)
	a.SHLQ(u8(2), reg.R10)
	a.LEAQ(operand.Mem{Base: reg.R10, Index: reg.R10, Scale: 2}, reg.R11)
	a.Load(a.Param("k"), reg.RCX)
	a.tail16(reg.EBX, reg.RBX) // BX: the full vectors, CX's for each block
	a.Load(a.Param("c").Base(), reg.RDX)
	a.Load(a.Param("ldc"), reg.R13)
	a.SHLQ(u8(2), reg.R13)
	a.Load(a.Param("m"), reg.R12)
	a.SHRQ(u8(2), reg.R12)
	a.TESTQ(reg.R12, reg.R12)
	a.JZ(operand.LabelRef("done"))
	a.Label("rows")
	a.MOVQ(reg.RAX, reg.RSI)
	a.Load(a.Param("x").Base(), reg.RDI)
	a.MOVQ(reg.RBX, reg.RCX)
	a.block4x4(f32)
	a.LEAQ(operand.Mem{Base: reg.R13, Index: reg.R13, Scale: 2}, reg.RSI)
	a.store4x4(reg.RDX, reg.R13, reg.RSI)
	a.LEAQ(operand.Mem{Base: reg.RAX, Index: reg.R8, Scale: 4}, reg.RAX)
	a.ADDQ(u32(16), reg.RDX)
	a.DECQ(reg.R12)
	a.JNZ(operand.LabelRef("rows"))
	a.Label("done")
	a.ret()
}

// block4x4 is a 4×4 block over CX full vectors and the K1 tail, its sums
// reduced into Z16 (reduce4x4).
func (a *asm) block4x4(e elem) {
	for r := 16; r < 32; r++ {
		a.zero(avx512, avx512.v(r))
	}
	rows := quad(reg.RSI, reg.R8, reg.R9)
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(operand.LabelRef("tail"))
	a.Label("loop")
	for i, m := range rows {
		a.load(e, m, avx512.v(i))
	}
	a.fma4x4(false)
	a.ADDQ(u32(16*e.size), reg.RSI)
	a.ADDQ(u32(64), reg.RDI)
	a.DECQ(reg.RCX)
	a.JNZ(operand.LabelRef("loop"))
	a.Label("tail")
	a.KORTESTW(reg.K1, reg.K1)
	a.JZ(operand.LabelRef("reduce"))
	for i, m := range rows {
		a.loadMasked(e, m, reg.K1, avx512.v(i))
	}
	a.fma4x4(true)
	a.Label("reduce")
	a.reduce4x4()
}

// fma4x4 adds the products of the rows in Z0–Z3 with the next vector (or,
// masked, the K1 lanes) of each column.
func (a *asm) fma4x4(masked bool) {
	for j, m := range quad(reg.RDI, reg.R10, reg.R11) {
		x := avx512.v(4 + j)
		if masked {
			a.VMOVUPS_Z(m, reg.K1, x)
		} else {
			a.VMOVUPS(m, x)
		}
		for i := 0; i < 4; i++ {
			a.fma(avx512.v(i), x, avx512.v(16+4*i+j))
		}
	}
}

// reduce4x4 sums each accumulator's lanes, halving their number at each
// stage: Z16's lane 4j+i is then row i · column j. Z8 and Z9 are scratch.
func (a *asm) reduce4x4() {
	for stage, st := range []struct {
		shuf   func(...operand.Op)
		lo, hi int
	}{
		{a.VSHUFF32X4, 0x44, 0xEE},
		{a.VSHUFF32X4, 0x88, 0xDD},
		{a.VSHUFPS, 0x88, 0xDD},
		{a.VSHUFPS, 0x88, 0xDD},
	} {
		for p := 0; p < 8>>stage; p++ {
			a.pairSum(st.shuf, st.lo, st.hi, avx512.v(17+2*p), avx512.v(16+2*p), reg.Z8, reg.Z9, avx512.v(16+p))
		}
	}
}

// store4x4 writes reduce4x4's Z16 to four columns of c (at c, ld bytes
// apart, ld3 three columns), column j from lanes 4j..4j+3. X8 is scratch.
func (a *asm) store4x4(c, ld, ld3 reg.Register) {
	cols := quad(c, ld, ld3)
	a.VMOVUPS(reg.X16, cols[0])
	for j := 1; j < 4; j++ {
		a.VEXTRACTF32X4(u8(j), reg.Z16, reg.X8)
		a.VMOVUPS(reg.X8, cols[j])
	}
}

// dot4x4AVX2 is dot4x4F32AVX2 and dot4x4F16AVX2 (k a multiple of 8): two
// passes of two columns, the rows of a in Y0–Y3 (f16 converted as they
// load), the pass's columns (R12, R10 bytes apart) in Y4–Y5, row i ·
// column j of the pass in Y(6+4j+i); BX counts the passes, DX the pass's
// columns of c (R13 bytes apart).
func (a *asm) dot4x4AVX2(e elem) {
	a.text("dot4x4"+e.name+"AVX2", "func(a []"+e.goType+", lda int, x []float32, ldx, k int, c []float32, ldc int)")
	a.Load(a.Param("lda"), reg.R8)
	a.SHLQ(u8(e.shift()), reg.R8)
	a.LEAQ(operand.Mem{Base: reg.R8, Index: reg.R8, Scale: 2}, reg.R9)
	a.Load(a.Param("ldx"), reg.R10)
	a.SHLQ(u8(2), reg.R10)
	a.Load(a.Param("c").Base(), reg.RDX)
	a.Load(a.Param("ldc"), reg.R13)
	a.SHLQ(u8(2), reg.R13)
	a.Load(a.Param("x").Base(), reg.RDI)
	a.MOVQ(u32(2), reg.RBX)
	a.Label("pass")
	a.Load(a.Param("a").Base(), reg.RSI)
	a.MOVQ(reg.RDI, reg.R12)
	a.Load(a.Param("k"), reg.RCX)
	a.SHRQ(u8(3), reg.RCX)
	for r := 6; r < 14; r++ {
		a.zero(avx2, avx2.v(r))
	}
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(operand.LabelRef("reduce"))
	a.Label("loop")
	for i, m := range quad(reg.RSI, reg.R8, reg.R9) {
		a.load(e, m, avx2.v(i))
	}
	a.VMOVUPS(mem(reg.R12), reg.Y4)
	a.VMOVUPS(operand.Mem{Base: reg.R12, Index: reg.R10, Scale: 1}, reg.Y5)
	for j := 0; j < 2; j++ {
		for i := 0; i < 4; i++ {
			a.fma(avx2.v(i), avx2.v(4+j), avx2.v(6+4*j+i))
		}
	}
	a.ADDQ(u32(8*e.size), reg.RSI)
	a.ADDQ(u32(32), reg.R12)
	a.DECQ(reg.RCX)
	a.JNZ(operand.LabelRef("loop"))
	a.Label("reduce")
	for p := 0; p < 4; p++ {
		a.VHADDPS(avx2.v(7+2*p), avx2.v(6+2*p), avx2.v(p))
	}
	a.VHADDPS(reg.Y1, reg.Y0, reg.Y0)
	a.VHADDPS(reg.Y3, reg.Y2, reg.Y2)
	a.VPERM2F128(u8(0x20), reg.Y2, reg.Y0, reg.Y1)
	a.VPERM2F128(u8(0x31), reg.Y2, reg.Y0, reg.Y3)
	a.VADDPS(reg.Y3, reg.Y1, reg.Y1)
	a.VMOVUPS(reg.X1, mem(reg.RDX))
	a.VEXTRACTF128(u8(1), reg.Y1, reg.X3)
	a.VMOVUPS(reg.X3, operand.Mem{Base: reg.RDX, Index: reg.R13, Scale: 1})
	a.LEAQ(operand.Mem{Base: reg.RDX, Index: reg.R13, Scale: 2}, reg.RDX)
	a.LEAQ(operand.Mem{Base: reg.RDI, Index: reg.R10, Scale: 2}, reg.RDI)
	a.DECQ(reg.RBX)
	a.JNZ(operand.LabelRef("pass"))
	a.ret()
}
