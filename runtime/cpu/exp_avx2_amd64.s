//go:build !noasm

#include "textflag.h"

// The exponential of exp.go at the avx2 level (exp_amd64.go): expRowGo,
// siluGo and sigmoidGo eight float32 values per step, in two halves of
// four float64 lanes side by side, with the same separate multiplies and
// adds as the Go loop and exp_amd64.s's EXP16, so every value has the Go
// loop's bits. The Go wrappers in exp.go run the last len mod 8 values with
// the Go loop.
//
// AVX2 has no two-table permute (vpermi2pd) for the 16 float64 entries
// 2^(j/16): the frame holds the table split into its entries' low and high
// dwords, 8 entries to a ymm, and the eight values' dwords are two vpermd
// of each by k's low dwords (vpermd takes them mod 8), blended on bit 3 of
// k, then interleaved into the two halves' float64 entries. k/16's integer
// part is added to the high dwords: its bits (52 up of the float64) are
// there, and the 64-bit add carries nothing out of the low dword.
//
// Sixteen ymm registers do not hold all the constants beside the
// temporaries: the ones used once a half live, broadcast, in the frame.

// EXP_CONSTS_AVX2 loads the expConsts at R10: Y0 ln2/16, Y9 16/ln2, Y11
// 0x1.8p52, Y12 1 (float64), and into the frame (which must be 320 bytes)
// 0(SP) 1/2, 32(SP) 1/6, 64(SP) 1/24 (float64), 96(SP) -104, 128(SP) 89,
// 160(SP) +Inf (float32), the low dwords of tab[0:8] at 192(SP) and of
// tab[8:16] at 224(SP), their high dwords at 256(SP) and 288(SP). It uses
// Y2–Y6.
#define EXP_CONSTS_AVX2 \
	VBROADCASTSD 136(R10), Y0; \
	VBROADCASTSD 128(R10), Y9; \
	VBROADCASTSD 144(R10), Y11; \
	VBROADCASTSD 152(R10), Y12; \
	VBROADCASTSD 160(R10), Y2; \
	VMOVUPD Y2, 0(SP); \
	VBROADCASTSD 168(R10), Y2; \
	VMOVUPD Y2, 32(SP); \
	VBROADCASTSD 176(R10), Y2; \
	VMOVUPD Y2, 64(SP); \
	VBROADCASTSS 184(R10), Y2; \
	VMOVUPS Y2, 96(SP); \
	VBROADCASTSS 188(R10), Y2; \
	VMOVUPS Y2, 128(SP); \
	VBROADCASTSS 192(R10), Y2; \
	VMOVUPS Y2, 160(SP); \
	VMOVUPD 0(R10), Y2; \
	VMOVUPD 32(R10), Y3; \
	VMOVUPD 64(R10), Y4; \
	VMOVUPD 96(R10), Y5; \
	VSHUFPS $0x88, Y3, Y2, Y6; \
	VPERMQ $0xD8, Y6, Y6; \
	VMOVUPS Y6, 192(SP); \
	VSHUFPS $0x88, Y5, Y4, Y6; \
	VPERMQ $0xD8, Y6, Y6; \
	VMOVUPS Y6, 224(SP); \
	VSHUFPS $0xDD, Y3, Y2, Y6; \
	VPERMQ $0xD8, Y6, Y6; \
	VMOVUPS Y6, 256(SP); \
	VSHUFPS $0xDD, Y5, Y4, Y6; \
	VPERMQ $0xD8, Y6, Y6; \
	VMOVUPS Y6, 288(SP)

// EXP8 sets Y10 to e^v for the eight float32 values v in Y1, as expRowGo
// computes them, its halves a (the low four) and b side by side: xd = v in
// float64, kf = xd·16/ln2 + 0x1.8p52 (ki its bits), r = xd - (kf -
// 0x1.8p52)·ln2/16, p = (1 + r) + r²·(1/2 + r·(1/6 + r·1/24)), e = p ·
// (tab[ki&15] + (ki>>4)<<52 as bits); v ≤ -104 gives 0, v ≥ 89 +Inf, NaN
// NaN (only lanes with -104 < v < 89 take e). Y8 gathers ki's low dwords,
// a0 a1 b0 b1 | a2 a3 b2 b3, which vpunpckl/hdq undo. It needs
// EXP_CONSTS_AVX2 and uses Y2–Y8.
#define EXP8 \
	VEXTRACTF128 $1, Y1, X3; \
	VCVTPS2PD X1, Y2; \
	VCVTPS2PD X3, Y3; \
	VMULPD Y9, Y2, Y4; \
	VMULPD Y9, Y3, Y5; \
	VADDPD Y11, Y4, Y4; \
	VADDPD Y11, Y5, Y5; \
	VSUBPD Y11, Y4, Y6; \
	VSUBPD Y11, Y5, Y7; \
	VMULPD Y0, Y6, Y6; \
	VMULPD Y0, Y7, Y7; \
	VSUBPD Y6, Y2, Y6; \
	VSUBPD Y7, Y3, Y7; \
	VSHUFPS $0x88, Y5, Y4, Y8; \
	VMULPD 64(SP), Y6, Y2; \
	VMULPD 64(SP), Y7, Y3; \
	VADDPD 32(SP), Y2, Y2; \
	VADDPD 32(SP), Y3, Y3; \
	VMULPD Y6, Y2, Y2; \
	VMULPD Y7, Y3, Y3; \
	VADDPD 0(SP), Y2, Y2; \
	VADDPD 0(SP), Y3, Y3; \
	VMULPD Y6, Y6, Y4; \
	VMULPD Y7, Y7, Y5; \
	VMULPD Y4, Y2, Y2; \
	VMULPD Y5, Y3, Y3; \
	VADDPD Y12, Y6, Y4; \
	VADDPD Y12, Y7, Y5; \
	VADDPD Y2, Y4, Y2; \
	VADDPD Y3, Y5, Y3; \
	VPSLLD $28, Y8, Y4; \
	VPERMD 256(SP), Y8, Y5; \
	VPERMD 288(SP), Y8, Y6; \
	VBLENDVPS Y4, Y6, Y5, Y5; \
	VPERMD 192(SP), Y8, Y6; \
	VPERMD 224(SP), Y8, Y7; \
	VBLENDVPS Y4, Y7, Y6, Y6; \
	VPSRLD $4, Y8, Y8; \
	VPSLLD $20, Y8, Y8; \
	VPADDD Y8, Y5, Y5; \
	VPUNPCKLDQ Y5, Y6, Y4; \
	VPUNPCKHDQ Y5, Y6, Y5; \
	VMULPD Y4, Y2, Y2; \
	VMULPD Y5, Y3, Y3; \
	VCVTPD2PSY Y2, X2; \
	VCVTPD2PSY Y3, X3; \
	VINSERTF128 $1, X3, Y2, Y2; \
	VCMPPS $0x1E, 96(SP), Y1, Y3; \
	VCMPPS $0x11, 128(SP), Y1, Y4; \
	VANDPS Y4, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VCMPPS $0x1E, Y4, Y1, Y5; \
	VANDPS 160(SP), Y5, Y5; \
	VCMPPS $3, Y1, Y1, Y6; \
	VBLENDVPS Y6, Y1, Y5, Y5; \
	VBLENDVPS Y3, Y2, Y5, Y10

// func expRowAVX2(y, x []float32, s, m float32, c *expConsts) float64
TEXT ·expRowAVX2(SB), NOSPLIT, $320-72
	MOVQ y_base+0(FP), DI
	MOVQ y_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	VBROADCASTSS s+48(FP), Y13
	VBROADCASTSS m+52(FP), Y14
	MOVQ c+56(FP), R10
	EXP_CONSTS_AVX2
	VXORPD Y15, Y15, Y15         // float64 sums
	SHRQ $3, CX
	JZ expRowAVX2_sum
expRowAVX2_loop:
	VMULPS (SI), Y13, Y1
	VSUBPS Y14, Y1, Y1           // v = s·x - m
	EXP8
	VMOVUPS Y10, (DI)
	VCVTPS2PD X10, Y2
	VEXTRACTF128 $1, Y10, X3
	VCVTPS2PD X3, Y3
	VADDPD Y3, Y2, Y2
	VADDPD Y2, Y15, Y15
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ expRowAVX2_loop
expRowAVX2_sum:
	VEXTRACTF128 $1, Y15, X1
	VADDPD X1, X15, X0
	VHADDPD X0, X0, X0
	MOVSD X0, ret+64(FP)
	VZEROUPPER
	RET

// func siluAVX2(d, x []float32, c *expConsts)
TEXT ·siluAVX2(SB), NOSPLIT, $320-56
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	MOVQ c+48(FP), R10
	EXP_CONSTS_AVX2
	VBROADCASTSS 196(R10), Y14   // 1 (float32)
	SHRQ $3, CX
	JZ siluAVX2_done
siluAVX2_loop:
	VMOVUPS (SI), Y13
	VXORPS Y1, Y1, Y1
	VSUBPS Y13, Y1, Y1           // v = -x
	EXP8
	VADDPS Y14, Y10, Y10
	VDIVPS Y10, Y13, Y10         // x / (1 + e^-x)
	VMOVUPS Y10, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ siluAVX2_loop
siluAVX2_done:
	VZEROUPPER
	RET

// func sigmoidAVX2(d, x []float32, c *expConsts)
TEXT ·sigmoidAVX2(SB), NOSPLIT, $320-56
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	MOVQ c+48(FP), R10
	EXP_CONSTS_AVX2
	VBROADCASTSS 196(R10), Y14   // 1 (float32)
	SHRQ $3, CX
	JZ sigmoidAVX2_done
sigmoidAVX2_loop:
	VXORPS Y1, Y1, Y1
	VSUBPS (SI), Y1, Y1          // v = -x
	EXP8
	VADDPS Y14, Y10, Y10
	VDIVPS Y10, Y14, Y10         // 1 / (1 + e^-x)
	VMOVUPS Y10, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ sigmoidAVX2_loop
sigmoidAVX2_done:
	VZEROUPPER
	RET
