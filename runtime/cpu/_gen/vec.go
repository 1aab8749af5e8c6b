package main

import (
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// vecFamily is vec_amd64.s, the vector loops of vec.go (declared in
// vec_amd64.go, which gives each one's loop).
func vecFamily(a *asm) {
	for _, s := range []isa{avx512, avx2} {
		for _, op := range []struct {
			name string
			op   func(*build.Context, ...operand.Op)
		}{
			{"add", (*build.Context).VADDPS},
			{"sub", (*build.Context).VSUBPS},
			{"mul", (*build.Context).VMULPS},
			{"div", (*build.Context).VDIVPS},
		} {
			a.binary(op.name, func(ops ...operand.Op) { op.op(a.Context, ops...) }, s)
		}
		a.scale(s)
		a.addScaled(s)
	}
	a.maxF32()
	a.sumSqF64()
}

// binary is the elementwise d = a op x (addF32AVX512 and its kin).
func (a *asm) binary(name string, op func(...operand.Op), s isa) {
	a.text(name+"F32"+s.name, "func(d, a, x []float32)")
	a.Load(a.Param("d").Base(), reg.RDI)
	a.Load(a.Param("d").Len(), reg.RCX)
	a.Load(a.Param("a").Base(), reg.RSI)
	a.Load(a.Param("x").Base(), reg.RDX)
	a.vectors(s)
	a.steps([]stream{{reg.RSI, s.bytes()}, {reg.RDI, s.bytes()}, {reg.RDX, s.bytes()}}, func(i int, at func(int) operand.Mem) {
		a.VMOVUPS(at(0), s.v(i))
		op(at(2), s.v(i), s.v(i))
		a.VMOVUPS(s.v(i), at(1))
	})
	a.maskedTail(s, func() {
		a.VMOVUPS_Z(mem(reg.RSI), reg.K1, s.v(0))
		a.VMOVUPS_Z(mem(reg.RDX), reg.K1, s.v(4))
		op(s.v(4), s.v(0), s.v(0))
		a.VMOVUPS(s.v(0), reg.K1, mem(reg.RDI))
	})
}

// scale is scaleF32AVX512 and scaleF32AVX2, d = a·s.
func (a *asm) scale(s isa) {
	a.text("scaleF32"+s.name, "func(d, a []float32, s float32)")
	a.Load(a.Param("d").Base(), reg.RDI)
	a.Load(a.Param("d").Len(), reg.RCX)
	a.Load(a.Param("a").Base(), reg.RSI)
	k := s.v(s.scalar)
	a.VBROADCASTSS(a.param("s"), k)
	a.vectors(s)
	a.steps([]stream{{reg.RSI, s.bytes()}, {reg.RDI, s.bytes()}}, func(i int, at func(int) operand.Mem) {
		a.VMULPS(at(0), k, s.v(i))
		a.VMOVUPS(s.v(i), at(1))
	})
	a.maskedTail(s, func() {
		a.VMOVUPS_Z(mem(reg.RSI), reg.K1, s.v(0))
		a.VMULPS(k, s.v(0), s.v(0))
		a.VMOVUPS(s.v(0), reg.K1, mem(reg.RDI))
	})
}

// addScaled is addScaledF32AVX512 and addScaledF32AVX2, w = fma(s, m, w).
func (a *asm) addScaled(s isa) {
	a.text("addScaledF32"+s.name, "func(w, m []float32, s float32)")
	a.Load(a.Param("w").Base(), reg.RDI)
	a.Load(a.Param("w").Len(), reg.RCX)
	a.Load(a.Param("m").Base(), reg.RSI)
	k := s.v(s.scalar)
	a.VBROADCASTSS(a.param("s"), k)
	a.vectors(s)
	a.steps([]stream{{reg.RSI, s.bytes()}, {reg.RDI, s.bytes()}}, func(i int, at func(int) operand.Mem) {
		a.VMOVUPS(at(1), s.v(i))
		a.VFMADD231PS(at(0), k, s.v(i))
		a.VMOVUPS(s.v(i), at(1))
	})
	a.maskedTail(s, func() {
		a.VMOVUPS_Z(mem(reg.RDI), reg.K1, s.v(0))
		a.VMOVUPS_Z(mem(reg.RSI), reg.K1, s.v(4))
		a.VFMADD231PS(s.v(4), k, s.v(0))
		a.VMOVUPS(s.v(0), reg.K1, mem(reg.RDI))
	})
}

// maskedTail ends a streaming kernel: on AVX-512 with tail, the K1 lanes
// (if any) after steps' vectors; the AVX2 callers do the rest in Go.
func (a *asm) maskedTail(s isa, tail func()) {
	if s.evex {
		a.KORTESTW(reg.K1, reg.K1)
		a.JZ(operand.LabelRef("done"))
		tail()
		a.Label("done")
	}
	a.ret()
}

// maxF32 is maxF32AVX512, four running maxima from -Inf (Z8). NaNs are
// skipped: VMAXPS returns its second source, the running max, when either
// is NaN.
func (a *asm) maxF32() {
	a.text("maxF32AVX512", "func(x []float32) float32")
	a.Load(a.Param("x").Base(), reg.RSI)
	a.Load(a.Param("x").Len(), reg.RCX)
	a.MOVL(u32(0xff800000), reg.EAX)
	a.VPBROADCASTD(reg.EAX, reg.Z8)
	for i := 0; i < 4; i++ {
		a.VMOVAPS(reg.Z8, avx512.v(i))
	}
	a.vectors(avx512)
	a.steps([]stream{{reg.RSI, 64}}, func(i int, at func(int) operand.Mem) {
		a.VMOVUPS(at(0), avx512.v(4+i))
		a.VMAXPS(avx512.v(i), avx512.v(4+i), avx512.v(i))
	})
	a.VMOVAPS(reg.Z8, reg.Z4)
	a.VMOVUPS(mem(reg.RSI), reg.K1, reg.Z4) // -Inf outside the tail
	a.VMAXPS(reg.Z1, reg.Z4, reg.Z1)
	a.VMAXPS(reg.Z1, reg.Z0, reg.Z0)
	a.VMAXPS(reg.Z3, reg.Z2, reg.Z2)
	a.VMAXPS(reg.Z2, reg.Z0, reg.Z0)
	a.VEXTRACTF64X4(u8(1), reg.Z0, reg.Y1)
	a.VMAXPS(reg.Y1, reg.Y0, reg.Y0)
	a.VEXTRACTF128(u8(1), reg.Y0, reg.X1)
	a.VMAXPS(reg.X1, reg.X0, reg.X0)
	for _, imm := range []int{0x4E, 0xB1} {
		a.VPERMILPS(u8(imm), reg.X0, reg.X1)
		a.VMAXPS(reg.X1, reg.X0, reg.X0)
	}
	a.Store(reg.X0, a.ReturnIndex(0))
	a.ret()
}

// sumSqF64 is sumSqF64AVX512, Σ float64(x[i]·x[i]): the float32 squares of
// a vector a step, summed in float64 alternately into Z0–Z1 and Z2–Z3,
// the tail into Z0–Z1.
func (a *asm) sumSqF64() {
	a.text("sumSqF64AVX512", "func(x []float32) float64")
	a.Load(a.Param("x").Base(), reg.RSI)
	a.Load(a.Param("x").Len(), reg.RCX)
	for i := 0; i < 4; i++ {
		a.VPXORQ(avx512.v(i), avx512.v(i), avx512.v(i))
	}
	a.vectors(avx512)
	// squares adds the squares of Z4 to lo (its low eight) and hi.
	squares := func(lo, hi reg.Register) {
		a.VMULPS(reg.Z4, reg.Z4, reg.Z4)
		a.VCVTPS2PD(reg.Y4, reg.Z5)
		a.VEXTRACTF64X4(u8(1), reg.Z4, reg.Y6)
		a.VCVTPS2PD(reg.Y6, reg.Z6)
		a.VADDPD(reg.Z5, lo, lo)
		a.VADDPD(reg.Z6, hi, hi)
	}
	a.TESTQ(reg.RCX, reg.RCX)
	a.JZ(operand.LabelRef("tail"))
	a.Label("loop")
	for i, sums := range [][2]reg.Register{{reg.Z0, reg.Z1}, {reg.Z2, reg.Z3}} {
		a.VMOVUPS(mem(reg.RSI), reg.Z4)
		squares(sums[0], sums[1])
		a.ADDQ(u32(64), reg.RSI)
		a.DECQ(reg.RCX)
		if i == 0 {
			a.JZ(operand.LabelRef("tail"))
		}
	}
	a.JNZ(operand.LabelRef("loop"))
	a.Label("tail")
	a.VMOVUPS_Z(mem(reg.RSI), reg.K1, reg.Z4)
	squares(reg.Z0, reg.Z1)
	a.VADDPD(reg.Z1, reg.Z0, reg.Z0)
	a.VADDPD(reg.Z3, reg.Z2, reg.Z2)
	a.VADDPD(reg.Z2, reg.Z0, reg.Z0)
	a.VEXTRACTF64X4(u8(1), reg.Z0, reg.Y1)
	a.VADDPD(reg.Y1, reg.Y0, reg.Y0)
	a.VEXTRACTF128(u8(1), reg.Y0, reg.X1)
	a.VADDPD(reg.X1, reg.X0, reg.X0)
	a.VHADDPD(reg.X0, reg.X0, reg.X0)
	a.Store(reg.X0, a.ReturnIndex(0))
	a.ret()
}
