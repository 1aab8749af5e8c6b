//go:build !noasm

#include "textflag.h"
#include "asm_amd64.h"

// BINARY_AVX512(op) and BINARY_AVX2(op) are the bodies of the elementwise
// d = a op x kernels (op VADDPS, VSUBPS, VMULPS or VDIVPS): four vectors per
// step, then one, then (AVX-512) a masked tail; the AVX2 version takes a
// multiple of 8 elements.
#define BINARY_AVX512(op) \
	MOVQ d_base+0(FP), DI; \
	MOVQ d_len+8(FP), CX; \
	MOVQ a_base+24(FP), SI; \
	MOVQ x_base+48(FP), DX; \
	TAIL16; \
	MOVQ CX, BX; \
	SHRQ $2, BX; \
	ANDQ $3, CX; \
	TESTQ BX, BX; \
	JZ one; \
four:; \
	VMOVUPS 0(SI), Z0; \
	op 0(DX), Z0, Z0; \
	VMOVUPS Z0, 0(DI); \
	VMOVUPS 64(SI), Z1; \
	op 64(DX), Z1, Z1; \
	VMOVUPS Z1, 64(DI); \
	VMOVUPS 128(SI), Z2; \
	op 128(DX), Z2, Z2; \
	VMOVUPS Z2, 128(DI); \
	VMOVUPS 192(SI), Z3; \
	op 192(DX), Z3, Z3; \
	VMOVUPS Z3, 192(DI); \
	ADDQ $256, SI; \
	ADDQ $256, DI; \
	ADDQ $256, DX; \
	DECQ BX; \
	JNZ four; \
one:; \
	TESTQ CX, CX; \
	JZ tail; \
oneloop:; \
	VMOVUPS 0(SI), Z0; \
	op 0(DX), Z0, Z0; \
	VMOVUPS Z0, 0(DI); \
	ADDQ $64, SI; \
	ADDQ $64, DI; \
	ADDQ $64, DX; \
	DECQ CX; \
	JNZ oneloop; \
tail:; \
	KORTESTW K1, K1; \
	JZ done; \
	VMOVUPS.Z 0(SI), K1, Z0; \
	VMOVUPS.Z 0(DX), K1, Z4; \
	op Z4, Z0, Z0; \
	VMOVUPS Z0, K1, 0(DI); \
done:; \
	VZEROUPPER; \
	RET

#define BINARY_AVX2(op) \
	MOVQ d_base+0(FP), DI; \
	MOVQ d_len+8(FP), CX; \
	MOVQ a_base+24(FP), SI; \
	MOVQ x_base+48(FP), DX; \
	SHRQ $3, CX; \
	MOVQ CX, BX; \
	SHRQ $2, BX; \
	ANDQ $3, CX; \
	TESTQ BX, BX; \
	JZ one; \
four:; \
	VMOVUPS 0(SI), Y0; \
	op 0(DX), Y0, Y0; \
	VMOVUPS Y0, 0(DI); \
	VMOVUPS 32(SI), Y1; \
	op 32(DX), Y1, Y1; \
	VMOVUPS Y1, 32(DI); \
	VMOVUPS 64(SI), Y2; \
	op 64(DX), Y2, Y2; \
	VMOVUPS Y2, 64(DI); \
	VMOVUPS 96(SI), Y3; \
	op 96(DX), Y3, Y3; \
	VMOVUPS Y3, 96(DI); \
	ADDQ $128, SI; \
	ADDQ $128, DI; \
	ADDQ $128, DX; \
	DECQ BX; \
	JNZ four; \
one:; \
	TESTQ CX, CX; \
	JZ tail; \
oneloop:; \
	VMOVUPS 0(SI), Y0; \
	op 0(DX), Y0, Y0; \
	VMOVUPS Y0, 0(DI); \
	ADDQ $32, SI; \
	ADDQ $32, DI; \
	ADDQ $32, DX; \
	DECQ CX; \
	JNZ oneloop; \
tail:; \
done:; \
	VZEROUPPER; \
	RET

// Elementwise float32 loops, shaped as BINARY_AVX512 and BINARY_AVX2 are.

// func addF32AVX512(d, a, x []float32)
TEXT ·addF32AVX512(SB), NOSPLIT, $0-72
	BINARY_AVX512(VADDPS)

// func subF32AVX512(d, a, x []float32)
TEXT ·subF32AVX512(SB), NOSPLIT, $0-72
	BINARY_AVX512(VSUBPS)

// func mulF32AVX512(d, a, x []float32)
TEXT ·mulF32AVX512(SB), NOSPLIT, $0-72
	BINARY_AVX512(VMULPS)

// func divF32AVX512(d, a, x []float32)
TEXT ·divF32AVX512(SB), NOSPLIT, $0-72
	BINARY_AVX512(VDIVPS)

// func scaleF32AVX512(d, a []float32, s float32)
TEXT ·scaleF32AVX512(SB), NOSPLIT, $0-52
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	VBROADCASTSS s+48(FP), Z15
	TAIL16
	MOVQ CX, BX
	SHRQ $2, BX
	ANDQ $3, CX
	TESTQ BX, BX
	JZ scaleF32AVX512_one
scaleF32AVX512_four:
	VMULPS 0(SI), Z15, Z0
	VMOVUPS Z0, 0(DI)
	VMULPS 64(SI), Z15, Z1
	VMOVUPS Z1, 64(DI)
	VMULPS 128(SI), Z15, Z2
	VMOVUPS Z2, 128(DI)
	VMULPS 192(SI), Z15, Z3
	VMOVUPS Z3, 192(DI)
	ADDQ $256, SI
	ADDQ $256, DI
	DECQ BX
	JNZ scaleF32AVX512_four
scaleF32AVX512_one:
	TESTQ CX, CX
	JZ scaleF32AVX512_tail
scaleF32AVX512_oneloop:
	VMULPS 0(SI), Z15, Z0
	VMOVUPS Z0, 0(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ scaleF32AVX512_oneloop
scaleF32AVX512_tail:
	KORTESTW K1, K1
	JZ scaleF32AVX512_done
	VMOVUPS.Z 0(SI), K1, Z0
	VMULPS Z15, Z0, Z0
	VMOVUPS Z0, K1, 0(DI)
scaleF32AVX512_done:
	VZEROUPPER
	RET

// func addScaledF32AVX512(w, m []float32, s float32)
TEXT ·addScaledF32AVX512(SB), NOSPLIT, $0-52
	MOVQ w_base+0(FP), DI
	MOVQ w_len+8(FP), CX
	MOVQ m_base+24(FP), SI
	VBROADCASTSS s+48(FP), Z15
	TAIL16
	MOVQ CX, BX
	SHRQ $2, BX
	ANDQ $3, CX
	TESTQ BX, BX
	JZ addScaledF32AVX512_one
addScaledF32AVX512_four:
	VMOVUPS 0(DI), Z0
	VFMADD231PS 0(SI), Z15, Z0
	VMOVUPS Z0, 0(DI)
	VMOVUPS 64(DI), Z1
	VFMADD231PS 64(SI), Z15, Z1
	VMOVUPS Z1, 64(DI)
	VMOVUPS 128(DI), Z2
	VFMADD231PS 128(SI), Z15, Z2
	VMOVUPS Z2, 128(DI)
	VMOVUPS 192(DI), Z3
	VFMADD231PS 192(SI), Z15, Z3
	VMOVUPS Z3, 192(DI)
	ADDQ $256, SI
	ADDQ $256, DI
	DECQ BX
	JNZ addScaledF32AVX512_four
addScaledF32AVX512_one:
	TESTQ CX, CX
	JZ addScaledF32AVX512_tail
addScaledF32AVX512_oneloop:
	VMOVUPS 0(DI), Z0
	VFMADD231PS 0(SI), Z15, Z0
	VMOVUPS Z0, 0(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ addScaledF32AVX512_oneloop
addScaledF32AVX512_tail:
	KORTESTW K1, K1
	JZ addScaledF32AVX512_done
	VMOVUPS.Z 0(DI), K1, Z0
	VMOVUPS.Z 0(SI), K1, Z4
	VFMADD231PS Z4, Z15, Z0
	VMOVUPS Z0, K1, 0(DI)
addScaledF32AVX512_done:
	VZEROUPPER
	RET

// func addF32AVX2(d, a, x []float32)
TEXT ·addF32AVX2(SB), NOSPLIT, $0-72
	BINARY_AVX2(VADDPS)

// func subF32AVX2(d, a, x []float32)
TEXT ·subF32AVX2(SB), NOSPLIT, $0-72
	BINARY_AVX2(VSUBPS)

// func mulF32AVX2(d, a, x []float32)
TEXT ·mulF32AVX2(SB), NOSPLIT, $0-72
	BINARY_AVX2(VMULPS)

// func divF32AVX2(d, a, x []float32)
TEXT ·divF32AVX2(SB), NOSPLIT, $0-72
	BINARY_AVX2(VDIVPS)

// func scaleF32AVX2(d, a []float32, s float32)
TEXT ·scaleF32AVX2(SB), NOSPLIT, $0-52
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	VBROADCASTSS s+48(FP), Y14
	SHRQ $3, CX              // CX = vectors of 8
	MOVQ CX, BX
	SHRQ $2, BX
	ANDQ $3, CX
	TESTQ BX, BX
	JZ scaleF32AVX2_one
scaleF32AVX2_four:
	VMULPS 0(SI), Y14, Y0
	VMOVUPS Y0, 0(DI)
	VMULPS 32(SI), Y14, Y1
	VMOVUPS Y1, 32(DI)
	VMULPS 64(SI), Y14, Y2
	VMOVUPS Y2, 64(DI)
	VMULPS 96(SI), Y14, Y3
	VMOVUPS Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	DECQ BX
	JNZ scaleF32AVX2_four
scaleF32AVX2_one:
	TESTQ CX, CX
	JZ scaleF32AVX2_tail
scaleF32AVX2_oneloop:
	VMULPS 0(SI), Y14, Y0
	VMOVUPS Y0, 0(DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ scaleF32AVX2_oneloop
scaleF32AVX2_tail:
scaleF32AVX2_done:
	VZEROUPPER
	RET

// func addScaledF32AVX2(w, m []float32, s float32)
TEXT ·addScaledF32AVX2(SB), NOSPLIT, $0-52
	MOVQ w_base+0(FP), DI
	MOVQ w_len+8(FP), CX
	MOVQ m_base+24(FP), SI
	VBROADCASTSS s+48(FP), Y14
	SHRQ $3, CX              // CX = vectors of 8
	MOVQ CX, BX
	SHRQ $2, BX
	ANDQ $3, CX
	TESTQ BX, BX
	JZ addScaledF32AVX2_one
addScaledF32AVX2_four:
	VMOVUPS 0(DI), Y0
	VFMADD231PS 0(SI), Y14, Y0
	VMOVUPS Y0, 0(DI)
	VMOVUPS 32(DI), Y1
	VFMADD231PS 32(SI), Y14, Y1
	VMOVUPS Y1, 32(DI)
	VMOVUPS 64(DI), Y2
	VFMADD231PS 64(SI), Y14, Y2
	VMOVUPS Y2, 64(DI)
	VMOVUPS 96(DI), Y3
	VFMADD231PS 96(SI), Y14, Y3
	VMOVUPS Y3, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	DECQ BX
	JNZ addScaledF32AVX2_four
addScaledF32AVX2_one:
	TESTQ CX, CX
	JZ addScaledF32AVX2_tail
addScaledF32AVX2_oneloop:
	VMOVUPS 0(DI), Y0
	VFMADD231PS 0(SI), Y14, Y0
	VMOVUPS Y0, 0(DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ addScaledF32AVX2_oneloop
addScaledF32AVX2_tail:
addScaledF32AVX2_done:
	VZEROUPPER
	RET

// func maxF32AVX512(x []float32) float32
//
// NaNs are skipped: VMAXPS returns its second source (the running max)
// when either is NaN.
TEXT ·maxF32AVX512(SB), NOSPLIT, $0-28
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	MOVL $0xff800000, AX
	VPBROADCASTD AX, Z8         // -Inf
	VMOVAPS Z8, Z0
	VMOVAPS Z8, Z1
	VMOVAPS Z8, Z2
	VMOVAPS Z8, Z3
	TAIL16
	MOVQ CX, BX
	SHRQ $2, BX
	ANDQ $3, CX
	TESTQ BX, BX
	JZ max_one
max_four:
	VMOVUPS 0(SI), Z4
	VMAXPS Z0, Z4, Z0
	VMOVUPS 64(SI), Z5
	VMAXPS Z1, Z5, Z1
	VMOVUPS 128(SI), Z6
	VMAXPS Z2, Z6, Z2
	VMOVUPS 192(SI), Z7
	VMAXPS Z3, Z7, Z3
	ADDQ $256, SI
	DECQ BX
	JNZ max_four
max_one:
	TESTQ CX, CX
	JZ max_tail
max_oneloop:
	VMOVUPS (SI), Z4
	VMAXPS Z0, Z4, Z0
	ADDQ $64, SI
	DECQ CX
	JNZ max_oneloop
max_tail:
	VMOVAPS Z8, Z4
	VMOVUPS (SI), K1, Z4        // -Inf outside the tail
	VMAXPS Z1, Z4, Z1
	VMAXPS Z1, Z0, Z0
	VMAXPS Z3, Z2, Z2
	VMAXPS Z2, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VMAXPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4E, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xB1, X0, X1
	VMAXPS X1, X0, X0
	MOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func sumSqF64AVX512(x []float32) float64
//
// Σ float64(x[i]·x[i]): the float32 squares, summed in four float64
// accumulators of eight lanes.
TEXT ·sumSqF64AVX512(SB), NOSPLIT, $0-32
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	TAIL16
	TESTQ CX, CX
	JZ sumsq_tail
sumsq_loop:
	VMOVUPS (SI), Z4
	VMULPS Z4, Z4, Z4
	VCVTPS2PD Y4, Z5
	VEXTRACTF64X4 $1, Z4, Y6
	VCVTPS2PD Y6, Z6
	VADDPD Z5, Z0, Z0
	VADDPD Z6, Z1, Z1
	ADDQ $64, SI
	DECQ CX
	JZ sumsq_tail
	VMOVUPS (SI), Z4
	VMULPS Z4, Z4, Z4
	VCVTPS2PD Y4, Z5
	VEXTRACTF64X4 $1, Z4, Y6
	VCVTPS2PD Y6, Z6
	VADDPD Z5, Z2, Z2
	VADDPD Z6, Z3, Z3
	ADDQ $64, SI
	DECQ CX
	JNZ sumsq_loop
sumsq_tail:
	VMOVUPS.Z (SI), K1, Z4
	VMULPS Z4, Z4, Z4
	VCVTPS2PD Y4, Z5
	VEXTRACTF64X4 $1, Z4, Y6
	VCVTPS2PD Y6, Z6
	VADDPD Z5, Z0, Z0
	VADDPD Z6, Z1, Z1
	VADDPD Z1, Z0, Z0
	VADDPD Z3, Z2, Z2
	VADDPD Z2, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPD Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD X1, X0, X0
	VHADDPD X0, X0, X0
	MOVSD X0, ret+24(FP)
	VZEROUPPER
	RET
