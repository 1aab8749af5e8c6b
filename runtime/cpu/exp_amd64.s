//go:build !noasm

#include "textflag.h"
#include "asm_amd64.h"

// EXP_CONSTS loads the expConsts at R10: Z30, Z31 the 2^(i/16) table,
// Z20 16/ln2, Z21 ln2/16, Z22 0x1.8p52, Z23 1, Z24 1/2, Z25 1/6, Z26 1/24
// (float64), Z27 -104, Z28 89, Z18 +Inf (float32).
#define EXP_CONSTS \
	VMOVUPD 0(R10), Z30; \
	VMOVUPD 64(R10), Z31; \
	VBROADCASTSD 128(R10), Z20; \
	VBROADCASTSD 136(R10), Z21; \
	VBROADCASTSD 144(R10), Z22; \
	VBROADCASTSD 152(R10), Z23; \
	VBROADCASTSD 160(R10), Z24; \
	VBROADCASTSD 168(R10), Z25; \
	VBROADCASTSD 176(R10), Z26; \
	VBROADCASTSS 184(R10), Z27; \
	VBROADCASTSS 188(R10), Z28; \
	VBROADCASTSS 192(R10), Z18

// EXP16 sets Z10 to e^v for the 16 float32 values v in Z1, as exp.go's
// expRowGo computes them: in float64, v = k·ln2/16 + r, 2^(k/16) from the
// table with k/16's integer part added to its exponent, e^r ≈ (1 + r) +
// r²·(1/2 + r·(1/6 + r/24)); v ≤ -104 gives 0, v ≥ 89 +Inf, NaN NaN. It
// needs EXP_CONSTS and uses Z2–Z12 and K2–K5.
#define EXP16 \
	VCVTPS2PD Y1, Z2; \
	VEXTRACTF64X4 $1, Z1, Y11; \
	VCVTPS2PD Y11, Z12; \
	VMULPD Z20, Z2, Z3; \
	VADDPD Z22, Z3, Z3; \
	VSUBPD Z22, Z3, Z4; \
	VMULPD Z21, Z4, Z4; \
	VSUBPD Z4, Z2, Z4; \
	VMULPD Z26, Z4, Z5; \
	VADDPD Z25, Z5, Z5; \
	VMULPD Z4, Z5, Z5; \
	VADDPD Z24, Z5, Z5; \
	VMULPD Z4, Z4, Z6; \
	VMULPD Z6, Z5, Z5; \
	VADDPD Z23, Z4, Z6; \
	VADDPD Z5, Z6, Z5; \
	VMOVDQU64 Z3, Z6; \
	VPERMI2PD Z31, Z30, Z6; \
	VPSRLQ $4, Z3, Z7; \
	VPSLLQ $52, Z7, Z7; \
	VPADDQ Z7, Z6, Z6; \
	VMULPD Z6, Z5, Z5; \
	VCVTPD2PS Z5, Y8; \
	VMULPD Z20, Z12, Z3; \
	VADDPD Z22, Z3, Z3; \
	VSUBPD Z22, Z3, Z4; \
	VMULPD Z21, Z4, Z4; \
	VSUBPD Z4, Z12, Z4; \
	VMULPD Z26, Z4, Z5; \
	VADDPD Z25, Z5, Z5; \
	VMULPD Z4, Z5, Z5; \
	VADDPD Z24, Z5, Z5; \
	VMULPD Z4, Z4, Z6; \
	VMULPD Z6, Z5, Z5; \
	VADDPD Z23, Z4, Z6; \
	VADDPD Z5, Z6, Z5; \
	VMOVDQU64 Z3, Z6; \
	VPERMI2PD Z31, Z30, Z6; \
	VPSRLQ $4, Z3, Z7; \
	VPSLLQ $52, Z7, Z7; \
	VPADDQ Z7, Z6, Z6; \
	VMULPD Z6, Z5, Z5; \
	VCVTPD2PS Z5, Y9; \
	VINSERTF64X4 $1, Y9, Z8, Z8; \
	VCMPPS $0x1E, Z27, Z1, K2; \
	VCMPPS $0x11, Z28, Z1, K3; \
	KANDW K2, K3, K3; \
	VPXORD Z10, Z10, Z10; \
	VCMPPS $0x1E, Z10, Z1, K4; \
	VMOVAPS Z18, K4, Z10; \
	VCMPPS $3, Z1, Z1, K5; \
	VMOVAPS Z1, K5, Z10; \
	VMOVAPS Z8, K3, Z10

// The exponential of exp.go, eight float64 lanes at a time, for 16 float32
// values per step. c points at an expConsts; see expRowGo for the method.

// func expRowAVX512(y, x []float32, s, m float32, c *expConsts) float64
TEXT ·expRowAVX512(SB), NOSPLIT, $0-72
	MOVQ y_base+0(FP), DI
	MOVQ y_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VBROADCASTSS s+48(FP), Z29
	VBROADCASTSS m+52(FP), Z19
	MOVQ c+56(FP), R10
	EXP_CONSTS
	VPXORQ Z16, Z16, Z16         // float64 sums
	VPXORQ Z17, Z17, Z17
	TAIL16
	TESTQ CX, CX
	JZ expRowAVX512_tail
expRowAVX512_loop:
	VMULPS (SI), Z29, Z1
	VSUBPS Z19, Z1, Z1          // v = s·x - m
	EXP16
	VMOVUPS Z10, (DI)
	VCVTPS2PD Y10, Z11
	VADDPD Z11, Z16, Z16
	VEXTRACTF64X4 $1, Z10, Y12
	VCVTPS2PD Y12, Z12
	VADDPD Z12, Z17, Z17
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ expRowAVX512_loop
expRowAVX512_tail:
	KORTESTW K1, K1
	JZ expRowAVX512_sum
	VMOVUPS.Z (SI), K1, Z1
	VMULPS Z1, Z29, Z1
	VSUBPS Z19, Z1, Z1
	EXP16
	VMOVUPS Z10, K1, (DI)
	VMOVAPS.Z Z10, K1, Z10
	VCVTPS2PD Y10, Z11
	VADDPD Z11, Z16, Z16
	VEXTRACTF64X4 $1, Z10, Y12
	VCVTPS2PD Y12, Z12
	VADDPD Z12, Z17, Z17
expRowAVX512_sum:
	VADDPD Z17, Z16, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPD Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD X1, X0, X0
	VHADDPD X0, X0, X0
	MOVSD X0, ret+64(FP)
	VZEROUPPER
	RET

// func siluAVX512(d, x []float32, c *expConsts)
TEXT ·siluAVX512(SB), NOSPLIT, $0-56
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	MOVQ c+48(FP), R10
	EXP_CONSTS
	VBROADCASTSS 196(R10), Z29   // 1 (float32)
	TAIL16
	TESTQ CX, CX
	JZ siluAVX512_tail
siluAVX512_loop:
	VMOVUPS (SI), Z0
	VPXORD Z1, Z1, Z1
	VSUBPS Z0, Z1, Z1          // v = -x
	EXP16
	VADDPS Z29, Z10, Z10
	VDIVPS Z10, Z0, Z0          // x / (1 + e^-x)
	VMOVUPS Z0, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ siluAVX512_loop
siluAVX512_tail:
	KORTESTW K1, K1
	JZ siluAVX512_done
	VMOVUPS.Z (SI), K1, Z0
	VPXORD Z1, Z1, Z1
	VSUBPS Z0, Z1, Z1
	EXP16
	VADDPS Z29, Z10, Z10
	VDIVPS Z10, Z0, Z0
	VMOVUPS Z0, K1, (DI)
siluAVX512_done:
	VZEROUPPER
	RET

// func sigmoidAVX512(d, x []float32, c *expConsts)
TEXT ·sigmoidAVX512(SB), NOSPLIT, $0-56
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	MOVQ c+48(FP), R10
	EXP_CONSTS
	VBROADCASTSS 196(R10), Z29   // 1 (float32)
	TAIL16
	TESTQ CX, CX
	JZ sigmoidAVX512_tail
sigmoidAVX512_loop:
	VPXORD Z1, Z1, Z1
	VSUBPS (SI), Z1, Z1        // v = -x
	EXP16
	VADDPS Z29, Z10, Z10
	VDIVPS Z10, Z29, Z0         // 1 / (1 + e^-x)
	VMOVUPS Z0, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ sigmoidAVX512_loop
sigmoidAVX512_tail:
	KORTESTW K1, K1
	JZ sigmoidAVX512_done
	VMOVUPS.Z (SI), K1, Z0
	VPXORD Z1, Z1, Z1
	VSUBPS Z0, Z1, Z1
	EXP16
	VADDPS Z29, Z10, Z10
	VDIVPS Z10, Z29, Z0
	VMOVUPS Z0, K1, (DI)
sigmoidAVX512_done:
	VZEROUPPER
	RET

// func softMaxRowsAVX512(d, a, m []float32, rows, ldd, lda, ldm, n int, scale float32, c *expConsts)
//
// softMaxTask's row with slope 1 for rows of n ≤ 16 elements, rows rows
// ldd, lda and ldm elements apart (ldm 0: one mask row for all): w = a·scale
// + m, then e^(w - max w) as expRowAVX512 computes it, their sum in float64
// in its order, and e·float32(1/sum): the same operations as the row by row
// path, in one call for the rows of a head.
TEXT ·softMaxRowsAVX512(SB), NOSPLIT, $0-128
	MOVQ d_base+0(FP), DI
	MOVQ a_base+24(FP), SI
	MOVQ m_base+48(FP), BX
	MOVQ rows+72(FP), R9
	MOVQ ldd+80(FP), R11
	SHLQ $2, R11
	MOVQ lda+88(FP), R12
	SHLQ $2, R12
	MOVQ ldm+96(FP), R13
	SHLQ $2, R13
	MOVQ n+104(FP), CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1            // K1 = the row's lanes
	VBROADCASTSS scale+112(FP), Z29
	MOVQ c+120(FP), R10
	EXP_CONSTS
	MOVL $0xFF800000, AX
	VPBROADCASTD AX, Z15         // -Inf
	TESTQ R9, R9
	JZ smrows_done
smrows_loop:
	VMOVUPS.Z (SI), K1, Z1
	VMULPS Z29, Z1, Z1           // w = a·scale
	VMOVUPS.Z (BX), K1, Z2
	VADDPS Z2, Z1, Z1            // + mask
	VMOVAPS Z15, Z3
	VMOVAPS Z1, K1, Z3           // -Inf past the row
	VSHUFF32X4 $0x4E, Z3, Z3, Z4
	VMAXPS Z4, Z3, Z3
	VSHUFF32X4 $0xB1, Z3, Z3, Z4
	VMAXPS Z4, Z3, Z3
	VSHUFPS $0x4E, Z3, Z3, Z4
	VMAXPS Z4, Z3, Z3
	VSHUFPS $0xB1, Z3, Z3, Z4
	VMAXPS Z4, Z3, Z3            // every lane: max w
	VSUBPS Z3, Z1, Z1            // v = w - max
	EXP16
	VMOVAPS.Z Z10, K1, Z10
	VCVTPS2PD Y10, Z16
	VEXTRACTF64X4 $1, Z10, Y12
	VCVTPS2PD Y12, Z17
	VADDPD Z17, Z16, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPD Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD X1, X0, X0
	VHADDPD X0, X0, X0           // the sum
	VDIVSD X0, X23, X2           // 1/sum
	VCVTSD2SS X2, X2, X2
	VBROADCASTSS X2, Z2
	VMULPS Z2, Z10, Z10
	VMOVUPS Z10, K1, (DI)
	ADDQ R11, DI
	ADDQ R12, SI
	ADDQ R13, BX
	DECQ R9
	JNZ smrows_loop
smrows_done:
	VZEROUPPER
	RET
