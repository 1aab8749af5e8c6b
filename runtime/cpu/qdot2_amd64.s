//go:build !noasm

#include "textflag.h"

// The dot products of qdot2_amd64.go (q5_0, iq4_nl, q4_1, q5_1 weights),
// 8 blocks per iteration, as qdot_amd64.s's q4_0: each block's products
// summed exactly into 8 int32 lanes, the 8 blocks' lanes reduced to their
// 8 block sums (vphaddd tree), converted, scaled and added to 8 float32
// lanes. Registers kept across the loop:
//
//	Y15 the float32 sums      Y14 int16 ones (vpmaddwd)
//	Y11 bytes 0x0f            Y10 bytes 0x10 (the fifth bit)
//	Y12, Y13 q5's bit spreading (byte i: byte i/8 of qh, bit i%8)
//	Y9  iq4_nl's values (kvalues_iq4nl in both 128-bit halves)
//	SI, DI, R8 (R9): a, x and xd (xs) at the group's first block

#define Q2_SETUP \
	VXORPS Y15, Y15, Y15; \
	VPCMPEQW Y14, Y14, Y14; \
	VPSRLW $15, Y14, Y14; \
	MOVL $0x0f0f0f0f, AX; \
	VMOVD AX, X11; \
	VPBROADCASTD X11, Y11; \
	MOVL $0x10101010, AX; \
	VMOVD AX, X10; \
	VPBROADCASTD X10, Y10; \
	VMOVDQU q2spread<>+0(SB), Y12; \
	VMOVDQU q2spread<>+32(SB), Y13

// NIB_UNPACK(aoff) sets Y5 to the 32 nibbles of the 16 bytes at aoff(SI)
// as bytes: the low nibbles (elements 0-15) first.
#define NIB_UNPACK(aoff) \
	VMOVDQU (aoff)(SI), X5; \
	VPSRLW $4, X5, X6; \
	VINSERTI128 $1, X6, Y5, Y5; \
	VPAND Y11, Y5, Y5

// HBIT_AVX2(hoff) adds 16 to Y5's byte i where bit i of the 32 bits at
// hoff(SI) is set: the bits spread to bytes (vpshufb), tested against
// their masks (vpcmpeqb), kept as 0x10.
#define HBIT_AVX2(hoff) \
	VPBROADCASTD (hoff)(SI), Y6; \
	VPSHUFB Y12, Y6, Y6; \
	VPAND Y13, Y6, Y6; \
	VPCMPEQB Y13, Y6, Y6; \
	VPAND Y10, Y6, Y6; \
	VPOR Y6, Y5, Y5

// HBIT_VNNI is HBIT_AVX2 with the bits as a mask register: 16 added under
// the mask.
#define HBIT_VNNI(hoff) \
	KMOVD (hoff)(SI), K1; \
	VPADDB Y10, Y5, K1, Y5

// U8_AVX2(xoff, dst) sets dst to the 8 int32 lane sums of Y5's unsigned
// bytes (at most 31) times x's int8 quants at xoff(DI): pairs in int16
// without saturation (2·31·128 < 2¹⁵).
#define U8_AVX2(xoff, dst) \
	VPMADDUBSW (xoff)(DI), Y5, dst; \
	VPMADDWD Y14, dst, dst

#define U8_VNNI(xoff, dst) \
	VPXOR dst, dst, dst; \
	VPDPBUSD (xoff)(DI), Y5, dst

// S8_AVX2(xoff, dst) is U8_AVX2 for Y5's signed bytes (never -128, nor
// x's): |a| times x with a's sign, pairs at most 2·127·127 < 2¹⁵.
#define S8_AVX2(xoff, dst) \
	VMOVDQU (xoff)(DI), Y6; \
	VPABSB Y5, Y7; \
	VPSIGNB Y5, Y6, Y6; \
	VPMADDUBSW Y6, Y7, dst; \
	VPMADDWD Y14, dst, dst

#define S8_VNNI(xoff, dst) \
	VMOVDQU (xoff)(DI), Y6; \
	VPABSB Y5, Y7; \
	VPSIGNB Y5, Y6, Y6; \
	VPXOR dst, dst, dst; \
	VPDPBUSD Y6, Y7, dst

// The blocks, (a's block offset, x's quants' offset, dst): q5_0 (22
// bytes: d, qh, qs) and q5_1 (24 bytes: d, m, qh, qs) as unsigned 5-bit
// quants (q5_0's −16 comes with the sums); iq4_nl (18 bytes: d, qs) as
// its values, looked up by vpshufb; q4_1 (20 bytes: d, m, qs) unsigned.
#define Q50_AVX2(ao, xo, dst) NIB_UNPACK(ao+6); HBIT_AVX2(ao+2); U8_AVX2(xo, dst)
#define Q50_VNNI(ao, xo, dst) NIB_UNPACK(ao+6); HBIT_VNNI(ao+2); U8_VNNI(xo, dst)
#define Q51_AVX2(ao, xo, dst) NIB_UNPACK(ao+8); HBIT_AVX2(ao+4); U8_AVX2(xo, dst)
#define Q51_VNNI(ao, xo, dst) NIB_UNPACK(ao+8); HBIT_VNNI(ao+4); U8_VNNI(xo, dst)
#define Q41_AVX2(ao, xo, dst) NIB_UNPACK(ao+4); U8_AVX2(xo, dst)
#define Q41_VNNI(ao, xo, dst) NIB_UNPACK(ao+4); U8_VNNI(xo, dst)
#define NL_AVX2(ao, xo, dst) NIB_UNPACK(ao+2); VPSHUFB Y5, Y9, Y5; S8_AVX2(xo, dst)
#define NL_VNNI(ao, xo, dst) NIB_UNPACK(ao+2); VPSHUFB Y5, Y9, Y5; S8_VNNI(xo, dst)

// Q2_REDUCE4 folds the lane sums of four blocks in Y0..Y3 into u: per
// 128-bit half, element j is that half's sum of block j.
#define Q2_REDUCE4(u) \
	VPHADDD Y1, Y0, Y0; \
	VPHADDD Y3, Y2, Y2; \
	VPHADDD Y2, Y0, u

// Q2_GROUP(BLOCK, st, xst) sets Y8 to the 8 block sums of the group: a's
// blocks st bytes apart, x's xst apart, x's quants xq bytes into a block.
#define Q2_GROUP(BLOCK, st, xst, xq) \
	BLOCK(0, xq, Y0); \
	BLOCK(st, xst+xq, Y1); \
	BLOCK(2*st, 2*xst+xq, Y2); \
	BLOCK(3*st, 3*xst+xq, Y3); \
	Q2_REDUCE4(Y8); \
	BLOCK(4*st, 4*xst+xq, Y0); \
	BLOCK(5*st, 5*xst+xq, Y1); \
	BLOCK(6*st, 6*xst+xq, Y2); \
	BLOCK(7*st, 7*xst+xq, Y3); \
	Q2_REDUCE4(Y4); \
	VPERM2I128 $0x20, Y4, Y8, Y0; \
	VPERM2I128 $0x31, Y4, Y8, Y1; \
	VPADDD Y1, Y0, Y8

// Q2_SCALE80 adds the 8 block sums of Y8 times the 8 blocks' da·dx to
// Y15: a's f16 scales at 0, st, .., 7·st off SI, x's float32 scales at
// R8 (q8_0 activations).
#define Q2_SCALE80(st) \
	VCVTDQ2PS Y8, Y8; \
	MOVWLZX 0(SI), AX; \
	VMOVD AX, X2; \
	VPINSRW $1, (1*st)(SI), X2, X2; \
	VPINSRW $2, (2*st)(SI), X2, X2; \
	VPINSRW $3, (3*st)(SI), X2, X2; \
	VPINSRW $4, (4*st)(SI), X2, X2; \
	VPINSRW $5, (5*st)(SI), X2, X2; \
	VPINSRW $6, (6*st)(SI), X2, X2; \
	VPINSRW $7, (7*st)(SI), X2, X2; \
	VCVTPH2PS X2, Y2; \
	VMULPS (R8), Y2, Y2; \
	VMULPS Y2, Y8, Y8; \
	VADDPS Y8, Y15, Y15

// Q2_SCALE81 adds, for q8_1 activations, the 8 blocks' (da·dx)·sum and
// ma·sx to Y15: a's (d, m) and x's (d, s) f16 pairs read as dwords, blocks
// 0, 1, 4, 5 in X2 and X4, 2, 3, 6, 7 in X3 and X5, so that their
// products line up with the sums spread by vunpcklps/vunpckhps between
// ones (Y7).
#define Q2_SCALE81(st) \
	VCVTDQ2PS Y8, Y8; \
	VMOVD 0(SI), X2; \
	VPINSRD $1, (1*st)(SI), X2, X2; \
	VPINSRD $2, (4*st)(SI), X2, X2; \
	VPINSRD $3, (5*st)(SI), X2, X2; \
	VMOVD (2*st)(SI), X3; \
	VPINSRD $1, (3*st)(SI), X3, X3; \
	VPINSRD $2, (6*st)(SI), X3, X3; \
	VPINSRD $3, (7*st)(SI), X3, X3; \
	VMOVD 0(DI), X4; \
	VPINSRD $1, 36(DI), X4, X4; \
	VPINSRD $2, 144(DI), X4, X4; \
	VPINSRD $3, 180(DI), X4, X4; \
	VMOVD 72(DI), X5; \
	VPINSRD $1, 108(DI), X5, X5; \
	VPINSRD $2, 216(DI), X5, X5; \
	VPINSRD $3, 252(DI), X5, X5; \
	VCVTPH2PS X2, Y2; \
	VCVTPH2PS X3, Y3; \
	VCVTPH2PS X4, Y4; \
	VCVTPH2PS X5, Y5; \
	VMULPS Y4, Y2, Y2; \
	VMULPS Y5, Y3, Y3; \
	VBROADCASTSS q2one<>(SB), Y7; \
	VUNPCKLPS Y7, Y8, Y0; \
	VUNPCKHPS Y7, Y8, Y1; \
	VMULPS Y2, Y0, Y0; \
	VMULPS Y3, Y1, Y1; \
	VADDPS Y0, Y15, Y15; \
	VADDPS Y1, Y15, Y15

// Q2_HSUM sets X0 to the sum of Y15's lanes.
#define Q2_HSUM \
	VEXTRACTF128 $1, Y15, X0; \
	VADDPS X0, X15, X0; \
	VHADDPS X0, X0, X0; \
	VHADDPS X0, X0, X0

// Q50_DOT(BLOCK): q5_0 against q8_0, less 16·Σx per block (xs at R9).
#define Q50_DOT(BLOCK) \
	MOVQ a_base+0(FP), SI; \
	MOVQ x_base+24(FP), DI; \
	MOVQ xd_base+48(FP), R8; \
	MOVQ xs_base+72(FP), R9; \
	MOVQ nb+96(FP), CX; \
	SHRQ $3, CX; \
	Q2_SETUP; \
	TESTQ CX, CX; \
	JZ done; \
loop:; \
	Q2_GROUP(BLOCK, 22, 34, 2); \
	VMOVDQU (R9), Y2; \
	VPSLLD $4, Y2, Y2; \
	VPSUBD Y2, Y8, Y8; \
	Q2_SCALE80(22); \
	ADDQ $176, SI; \
	ADDQ $272, DI; \
	ADDQ $32, R8; \
	ADDQ $32, R9; \
	DECQ CX; \
	JNZ loop; \
done:; \
	Q2_HSUM; \
	MOVSS X0, ret+104(FP); \
	VZEROUPPER; \
	RET

// NL_DOT(BLOCK): iq4_nl against q8_0.
#define NL_DOT(BLOCK) \
	MOVQ a_base+0(FP), SI; \
	MOVQ x_base+24(FP), DI; \
	MOVQ xd_base+48(FP), R8; \
	MOVQ nb+72(FP), CX; \
	SHRQ $3, CX; \
	Q2_SETUP; \
	VBROADCASTI128 q2kvalues<>(SB), Y9; \
	TESTQ CX, CX; \
	JZ done; \
loop:; \
	Q2_GROUP(BLOCK, 18, 34, 2); \
	Q2_SCALE80(18); \
	ADDQ $144, SI; \
	ADDQ $272, DI; \
	ADDQ $32, R8; \
	DECQ CX; \
	JNZ loop; \
done:; \
	Q2_HSUM; \
	MOVSS X0, ret+80(FP); \
	VZEROUPPER; \
	RET

// Q81_DOT(BLOCK, st): q4_1 or q5_1 (st bytes a block) against q8_1.
#define Q81_DOT(BLOCK, st) \
	MOVQ a_base+0(FP), SI; \
	MOVQ x_base+24(FP), DI; \
	MOVQ nb+48(FP), CX; \
	SHRQ $3, CX; \
	Q2_SETUP; \
	TESTQ CX, CX; \
	JZ done; \
loop:; \
	Q2_GROUP(BLOCK, st, 36, 4); \
	Q2_SCALE81(st); \
	ADDQ $(8*st), SI; \
	ADDQ $288, DI; \
	DECQ CX; \
	JNZ loop; \
done:; \
	Q2_HSUM; \
	MOVSS X0, ret+56(FP); \
	VZEROUPPER; \
	RET

// func dotQ5_0AVX2(a, x []byte, xd []float32, xs []int32, nb int) float32
TEXT ·dotQ5_0AVX2(SB), NOSPLIT, $0-108
	Q50_DOT(Q50_AVX2)

// func dotQ5_0VNNI(a, x []byte, xd []float32, xs []int32, nb int) float32
TEXT ·dotQ5_0VNNI(SB), NOSPLIT, $0-108
	Q50_DOT(Q50_VNNI)

// func dotIQ4_NLAVX2(a, x []byte, xd []float32, nb int) float32
TEXT ·dotIQ4_NLAVX2(SB), NOSPLIT, $0-84
	NL_DOT(NL_AVX2)

// func dotIQ4_NLVNNI(a, x []byte, xd []float32, nb int) float32
TEXT ·dotIQ4_NLVNNI(SB), NOSPLIT, $0-84
	NL_DOT(NL_VNNI)

// func dotQ4_1AVX2(a, x []byte, nb int) float32
TEXT ·dotQ4_1AVX2(SB), NOSPLIT, $0-60
	Q81_DOT(Q41_AVX2, 20)

// func dotQ4_1VNNI(a, x []byte, nb int) float32
TEXT ·dotQ4_1VNNI(SB), NOSPLIT, $0-60
	Q81_DOT(Q41_VNNI, 20)

// func dotQ5_1AVX2(a, x []byte, nb int) float32
TEXT ·dotQ5_1AVX2(SB), NOSPLIT, $0-60
	Q81_DOT(Q51_AVX2, 24)

// func dotQ5_1VNNI(a, x []byte, nb int) float32
TEXT ·dotQ5_1VNNI(SB), NOSPLIT, $0-60
	Q81_DOT(Q51_VNNI, 24)

// q2spread: vpshufb indices putting byte i/8 of a broadcast dword into
// byte i, then each byte's bit i%8.
DATA q2spread<>+0(SB)/8, $0x0000000000000000
DATA q2spread<>+8(SB)/8, $0x0101010101010101
DATA q2spread<>+16(SB)/8, $0x0202020202020202
DATA q2spread<>+24(SB)/8, $0x0303030303030303
DATA q2spread<>+32(SB)/8, $0x8040201008040201
DATA q2spread<>+40(SB)/8, $0x8040201008040201
DATA q2spread<>+48(SB)/8, $0x8040201008040201
DATA q2spread<>+56(SB)/8, $0x8040201008040201
GLOBL q2spread<>(SB), RODATA|NOPTR, $64

// q2kvalues is kvalues_iq4nl: -127, -104, -83, -65, -49, -35, -22, -10,
// 1, 13, 25, 38, 53, 69, 89, 113.
DATA q2kvalues<>+0(SB)/8, $0xf6eaddcfbfad9881
DATA q2kvalues<>+8(SB)/8, $0x7159453526190d01
GLOBL q2kvalues<>(SB), RODATA|NOPTR, $16

DATA q2one<>+0(SB)/4, $0x3f800000
GLOBL q2one<>(SB), RODATA|NOPTR, $4
