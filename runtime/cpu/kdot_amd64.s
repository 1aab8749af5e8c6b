//go:build !noasm

#include "textflag.h"

// The K-quant dot products of kdot_amd64.go, a 256-element block per
// iteration: the block's integer sums exact in int32 lanes (vpmaddubsw of
// the unsigned quants and x's int8 quants, pairs summed in int16 without
// saturation, then vpmaddwd or AVX-512 VNNI's vpdpwssd by the sub-block
// scales). q5_K reduces them to one int32, converted and scaled as the
// Go loop does and added to a float32 sum in block order: the Go loop's
// bits. q4_K and q6_K scale the lanes into float32 lanes instead, many
// rows a call (KROWS).
// Registers kept across the loop:
//
//	SI, DI  a's and x's block        CX  blocks left
//	X14     the float32 sum          Y15/Z15  bytes 0x0f
//
// and, per block, Y4/Z4 the int32 lanes of Σ scale·Σ q·x.

// KQ_SETUP loads the arguments and the constants every kernel uses.
#define KQ_SETUP \
	MOVQ a_base+0(FP), SI; \
	MOVQ x_base+24(FP), DI; \
	MOVQ nb+48(FP), CX; \
	VXORPS X14, X14, X14; \
	MOVL $0x0f0f0f0f, AX; \
	VMOVD AX, X15; \
	VPBROADCASTD X15, Y15

#define KQ_SETUP512 \
	KQ_SETUP; \
	VPBROADCASTD AX, Z15

// KQ_DONE stores the sum.
#define KQ_DONE \
	MOVSS X14, ret+56(FP); \
	VZEROUPPER; \
	RET

// K4_SCALES decodes the 12 bytes of 6-bit scales and mins at 4(SI) (q4_K
// and q5_K: get_scale_min_k4, as ggml's utmp shuffle) and sets Y0 to
// the 8 scales as int16 (low half) and the 8 mins (high half). It uses AX,
// BX, DX, R8, R9, R10.
#define K4_SCALES \
	MOVL 4(SI), AX; \
	MOVL 8(SI), BX; \
	MOVL 12(SI), DX; \
	MOVL DX, R8; \
	SHRL $4, R8; \
	ANDL $0x0f0f0f0f, R8; \
	MOVL BX, R9; \
	SHRL $6, R9; \
	ANDL $0x03030303, R9; \
	SHLL $4, R9; \
	ORL R9, R8; \
	MOVL DX, R10; \
	ANDL $0x0f0f0f0f, R10; \
	MOVL AX, R9; \
	SHRL $6, R9; \
	ANDL $0x03030303, R9; \
	SHLL $4, R9; \
	ORL R9, R10; \
	ANDL $0x3f3f3f3f, BX; \
	ANDL $0x3f3f3f3f, AX; \
	SHLQ $32, R10; \
	ORQ R10, AX; \
	SHLQ $32, R8; \
	ORQ R8, BX; \
	VMOVQ AX, X0; \
	VPINSRQ $1, BX, X0, X0; \
	VPMOVZXBW X0, Y0

// K4_MINS sets X9 to 4 int32 lanes of Σ min_j·(x's sum over sub-block
// j): x's 16 bsums added in pairs, times Y0's mins.
#define K4_MINS \
	VMOVDQU 260(DI), X9; \
	VPHADDW 276(DI), X9, X9; \
	VEXTRACTI128 $1, Y0, X2; \
	VPMADDWD X2, X9, X9

// K4_FINISH adds the block's f16(d)·dx·isum − f16(dmin)·dx·msum to X14,
// isum the sum of Y4's lanes and msum of X9's.
#define K4_FINISH \
	VEXTRACTI128 $1, Y4, X2; \
	VPADDD X2, X4, X4; \
	VPHADDD X9, X4, X4; \
	VPHADDD X4, X4, X4; \
	VCVTDQ2PS X4, X4; \
	VMOVD 0(SI), X2; \
	VCVTPH2PS X2, X2; \
	VBROADCASTSS 0(DI), X3; \
	VMULPS X3, X2, X2; \
	VMULPS X4, X2, X2; \
	VMOVSHDUP X2, X3; \
	VSUBSS X3, X2, X2; \
	VADDSS X2, X14, X14

// K_RED512 folds Z4's 16 lanes into Y4's 8.
#define K_RED512 \
	VEXTRACTI64X4 $1, Z4, Y2; \
	VPADDD Y2, Y4, Y4

// Q4K_AVX2(i): sub-blocks 2i and 2i+1, the low and high nibbles of
// qs[32i:32i+32] at qoff(SI), against x's quants at xoff(DI); Y5 holds
// the 8 scales in both halves, picked per sub-block with vpshufb.
#define QK_PAIR_AVX2(xoff, i) \
	VPMADDUBSW xoff(DI), Y1, Y1; \
	VPMADDUBSW (xoff+32)(DI), Y2, Y2; \
	VPSHUFB kq4shuf<>+(64*i)(SB), Y5, Y6; \
	VPSHUFB kq4shuf<>+(64*i+32)(SB), Y5, Y7; \
	VPMADDWD Y6, Y1, Y1; \
	VPMADDWD Y7, Y2, Y2; \
	VPADDD Y1, Y4, Y4; \
	VPADDD Y2, Y4, Y4

#define NIBBLES_AVX2(qoff) \
	VMOVDQU qoff(SI), Y1; \
	VPSRLW $4, Y1, Y2; \
	VPAND Y15, Y1, Y1; \
	VPAND Y15, Y2, Y2

#define Q4K_AVX2(i) \
	NIBBLES_AVX2(16+32*i); \
	QK_PAIR_AVX2(4+64*i, i)

// Q5K_AVX2(i) is Q4K_AVX2 with the fifth bits, bits 2i and 2i+1 of qh's
// bytes, in Y3's bits 0 and 1 (Y3 shifted right by 2 after each pair;
// Y12 bytes 0x01, Y11 bytes 0x02).
#define Q5K_AVX2(i) \
	NIBBLES_AVX2(48+32*i); \
	VPAND Y12, Y3, Y6; \
	VPSLLW $4, Y6, Y6; \
	VPOR Y6, Y1, Y1; \
	VPAND Y11, Y3, Y7; \
	VPSLLW $3, Y7, Y7; \
	VPOR Y7, Y2, Y2; \
	VPSRLW $2, Y3, Y3; \
	QK_PAIR_AVX2(4+64*i, i)

// QK_PAIR_VNNI(xoff, i): Z1 holds sub-blocks 2i and 2i+1's quants (256
// bits each), against x's 64 quants at xoff(DI); Z0's low 8 words are
// the scales, spread to Z6 by vpermw with Z16+i's indices.
#define QK_PAIR_VNNI(xoff, idx) \
	VPMADDUBSW xoff(DI), Z1, Z1; \
	VPERMW Z0, idx, Z6; \
	VPDPWSSD Z6, Z1, Z4

#define NIBBLES_VNNI(qoff) \
	VMOVDQU qoff(SI), Y1; \
	VPSRLW $4, Y1, Y2; \
	VINSERTI64X4 $1, Y2, Z1, Z1; \
	VPANDD Z15, Z1, Z1

// Q5K_VNNI(i, idx): Z3 is qh (low half) and qh >> 1 (high half), shifted
// right by 2 after each pair; Z12 bytes 0x01.
#define Q5K_VNNI(i, idx) \
	NIBBLES_VNNI(48+32*i); \
	VPANDD Z12, Z3, Z6; \
	VPSLLW $4, Z6, Z6; \
	VPORD Z6, Z1, Z1; \
	VPSRLW $2, Z3, Z3; \
	QK_PAIR_VNNI(4+64*i, idx)

#define KQ_PERM4 \
	VMOVDQU64 kq4perm<>+0(SB), Z16; \
	VMOVDQU64 kq4perm<>+64(SB), Z17; \
	VMOVDQU64 kq4perm<>+128(SB), Z18; \
	VMOVDQU64 kq4perm<>+192(SB), Z19

// The q4_K kernels keep each block's integer sums in int32 lanes and add
// them, scaled, to float32 lanes (Y14 the scale terms, Y13 the min terms),
// reduced once at the end: no horizontal sum per block. The sums differ
// from the Go loop's by float32 rounding only (the summation order).

// K4_DECODE decodes the 12 bytes of 6-bit scales and mins at 4(SI) (q4_K:
// get_scale_min_k4) with byte shuffles: X1 = the 8 scales (bytes 0-7) and
// the 8 mins (8-15). X8, X9: kq4dec's shuffles, X10 its masks, X11 bytes
// 0x30. It uses X0 and X2.
#define K4_DECODE \
	VMOVDQU 4(SI), X0; \
	VPSHUFB X8, X0, X1; \
	VPSRLW $4, X1, X2; \
	VPBLENDD $8, X2, X1, X1; \
	VPAND X10, X1, X1; \
	VPSHUFB X9, X0, X2; \
	VPSRLW $2, X2, X2; \
	VPAND X11, X2, X2; \
	VPOR X2, X1, X1

// K4_LANES sets Y5 to the 8 scales as int16 in both 128-bit halves and Y3
// to 8 int32 lanes of min_j·(x's sum over sub-block j): x's 16 bsums
// against each min twice (kq4dec+48 repeats them).
#define K4_LANES \
	VPMOVZXBW X1, Y5; \
	VPERMQ $0x44, Y5, Y5; \
	VPSHUFB kq4dec<>+48(SB), X1, X2; \
	VPMOVZXBW X2, Y2; \
	VPMADDWD 260(DI), Y2, Y3

// K4_ACCUM adds the block's lanes to the float sums: Y14 += f16(d)·dx·Y4,
// Y13 += f16(dmin)·dx·Y3.
#define K4_ACCUM \
	VCVTDQ2PS Y4, Y4; \
	VCVTDQ2PS Y3, Y3; \
	VMOVD 0(SI), X2; \
	VCVTPH2PS X2, X2; \
	VBROADCASTSS 0(DI), X6; \
	VMULPS X6, X2, X2; \
	VBROADCASTSS X2, Y6; \
	VFMADD231PS Y6, Y4, Y14; \
	VMOVSHDUP X2, X7; \
	VBROADCASTSS X7, Y7; \
	VFMADD231PS Y7, Y3, Y13

// K4_SETUP loads a's base to SI and K4_DECODE's constants.
#define K4_SETUP \
	MOVQ a_base+0(FP), SI; \
	MOVL $0x0f0f0f0f, AX; \
	VMOVD AX, X15; \
	VPBROADCASTD X15, Y15; \
	VMOVDQU kq4dec<>+0(SB), X8; \
	VMOVDQU kq4dec<>+16(SB), X9; \
	VMOVDQU kq4dec<>+32(SB), X10; \
	MOVL $0x30303030, AX; \
	VMOVD AX, X11; \
	VPBROADCASTD X11, X11

// K4_REDUCE sets X14 to Σ Y14 − Σ Y13, K_REDUCE to Σ Y14.
#define K4_REDUCE \
	VSUBPS Y13, Y14, Y14; \
	K_REDUCE

#define K_REDUCE \
	VEXTRACTF128 $1, Y14, X0; \
	VADDPS X0, X14, X14; \
	VPSHUFD $0x4e, X14, X0; \
	VADDPS X0, X14, X14; \
	VMOVSHDUP X14, X0; \
	VADDSS X0, X14, X14

// Q4K_PAIR_VNNI(i): sub-blocks 2i and 2i+1 (the low and high nibbles of
// qs[32i:32i+32]) against x's quants, each by vpdpbusd into its own 8
// int32 lanes (sums of 4 products, within int16), packed to words and
// multiplied by their scales (kq4pk: word 2i in words 0-3 of each 128-bit
// half, 2i+1 in words 4-7) into Y4 by vpdpwssd.
#define Q4K_PAIR_VNNI(i) \
	VMOVDQU (16+32*i)(SI), Y1; \
	VPSRLW $4, Y1, Y2; \
	VPAND Y15, Y1, Y1; \
	VPAND Y15, Y2, Y2; \
	VPXOR Y6, Y6, Y6; \
	VPXOR Y7, Y7, Y7; \
	VPDPBUSD (4+64*i)(DI), Y1, Y6; \
	VPDPBUSD (36+64*i)(DI), Y2, Y7; \
	VPACKSSDW Y7, Y6, Y6; \
	VPSHUFB kq4pk<>+(32*i)(SB), Y5, Y7; \
	VPDPWSSD Y7, Y6, Y4

// KROWS(setup, zero, block, reduce, size) is a rows kernel: for each of
// rows rows of a (lda bytes apart), the dot product with x over nb blocks
// of size bytes, stored to dst (ldd float32s apart). setup loads a's base
// to SI and the constants; zero clears the float lanes; block adds a
// block's terms to them and reduce sums them into X14. Beyond the loop's
// registers: R11 the row, R10 x, R9 nb, R12 rows left, DX dst, BX ldd·4,
// R13 lda.
#define KROWS(setup, zero, block, reduce, size) \
	setup; \
	MOVQ SI, R11; \
	MOVQ lda+24(FP), R13; \
	MOVQ x_base+32(FP), R10; \
	MOVQ nb+56(FP), R9; \
	MOVQ dst_base+64(FP), DX; \
	MOVQ ldd+88(FP), BX; \
	SHLQ $2, BX; \
	MOVQ rows+96(FP), R12; \
	TESTQ R12, R12; \
	JZ done; \
row: \
	MOVQ R11, SI; \
	MOVQ R10, DI; \
	MOVQ R9, CX; \
	zero; \
	TESTQ CX, CX; \
	JZ sum; \
loop: \
	block; \
	ADDQ $size, SI; \
	ADDQ $292, DI; \
	DECQ CX; \
	JNZ loop; \
sum: \
	reduce; \
	MOVSS X14, (DX); \
	ADDQ BX, DX; \
	ADDQ R13, R11; \
	DECQ R12; \
	JNZ row; \
done: \
	VZEROUPPER; \
	RET

#define K4_ZERO \
	VXORPS Y14, Y14, Y14; \
	VXORPS Y13, Y13, Y13

#define Q4K_BLOCK_AVX2 \
	K4_DECODE; \
	K4_LANES; \
	VPXOR Y4, Y4, Y4; \
	Q4K_AVX2(0); \
	Q4K_AVX2(1); \
	Q4K_AVX2(2); \
	Q4K_AVX2(3); \
	K4_ACCUM

#define Q4K_BLOCK_VNNI \
	K4_DECODE; \
	K4_LANES; \
	VPXOR Y4, Y4, Y4; \
	Q4K_PAIR_VNNI(0); \
	Q4K_PAIR_VNNI(1); \
	Q4K_PAIR_VNNI(2); \
	Q4K_PAIR_VNNI(3); \
	K4_ACCUM

// func dotQ4_KRowsAVX2(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)
TEXT ·dotQ4_KRowsAVX2(SB), NOSPLIT, $0-104
	KROWS(K4_SETUP, K4_ZERO, Q4K_BLOCK_AVX2, K4_REDUCE, 144)

// func dotQ4_KRowsVNNI(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)
TEXT ·dotQ4_KRowsVNNI(SB), NOSPLIT, $0-104
	KROWS(K4_SETUP, K4_ZERO, Q4K_BLOCK_VNNI, K4_REDUCE, 144)

// func dotQ5_KAVX2(a, x []byte, nb int) float32
TEXT ·dotQ5_KAVX2(SB), NOSPLIT, $0-60
	KQ_SETUP
	MOVL $0x01010101, AX
	VMOVD AX, X12
	VPBROADCASTD X12, Y12
	VPADDB Y12, Y12, Y11
	TESTQ CX, CX
	JZ q5avx2done
q5avx2loop:
	K4_SCALES
	K4_MINS
	VPERMQ $0x44, Y0, Y5
	VPXOR Y4, Y4, Y4
	VMOVDQU 16(SI), Y3
	Q5K_AVX2(0)
	Q5K_AVX2(1)
	Q5K_AVX2(2)
	Q5K_AVX2(3)
	K4_FINISH
	ADDQ $176, SI
	ADDQ $292, DI
	DECQ CX
	JNZ q5avx2loop
q5avx2done:
	KQ_DONE

// func dotQ5_KVNNI(a, x []byte, nb int) float32
TEXT ·dotQ5_KVNNI(SB), NOSPLIT, $0-60
	KQ_SETUP512
	KQ_PERM4
	MOVL $0x01010101, AX
	VPBROADCASTD AX, Z12
	TESTQ CX, CX
	JZ q5vnnidone
q5vnniloop:
	K4_SCALES
	K4_MINS
	VPXORD Z4, Z4, Z4
	VMOVDQU 16(SI), Y3
	VPSRLW $1, Y3, Y2
	VINSERTI64X4 $1, Y2, Z3, Z3
	Q5K_VNNI(0, Z16)
	Q5K_VNNI(1, Z17)
	Q5K_VNNI(2, Z18)
	Q5K_VNNI(3, Z19)
	K_RED512
	K4_FINISH
	ADDQ $176, SI
	ADDQ $292, DI
	DECQ CX
	JNZ q5vnniloop
q5vnnidone:
	KQ_DONE

// Q6K_GROUP(xoff, s): the 32 quants of elements 32s..32s+31 of a half in
// Y6 (made by the caller) against x's at xoff(DI), with the scales of
// groups 2s and 2s+1 of the half (Y5: the half's 8 scales in both
// 128-bit halves).
#define Q6K_GROUP(xoff, s) \
	VPMADDUBSW xoff(DI), Y6, Y6; \
	VPSHUFB kq6shuf<>+(32*s)(SB), Y5, Y7; \
	VPMADDWD Y7, Y6, Y6; \
	VPADDD Y6, Y4, Y4

// Q6K_HALF_AVX2(h): elements 128h..128h+127: ql[64h:] in Y1 and Y2, qh[32h:]
// in Y3, q = nibble | (qh bits 2s, 2s+1) << 4 (Y13 bytes 0x30).
#define Q6K_HALF_AVX2(h) \
	VMOVDQU (64*h)(SI), Y1; \
	VMOVDQU (64*h+32)(SI), Y2; \
	VMOVDQU (128+32*h)(SI), Y3; \
	VPAND Y15, Y1, Y6; \
	VPSLLW $4, Y3, Y7; \
	VPAND Y13, Y7, Y7; \
	VPOR Y7, Y6, Y6; \
	Q6K_GROUP(4+128*h, 0); \
	VPAND Y15, Y2, Y6; \
	VPSLLW $2, Y3, Y7; \
	VPAND Y13, Y7, Y7; \
	VPOR Y7, Y6, Y6; \
	Q6K_GROUP(36+128*h, 1); \
	VPSRLW $4, Y1, Y6; \
	VPAND Y15, Y6, Y6; \
	VPAND Y13, Y3, Y7; \
	VPOR Y7, Y6, Y6; \
	Q6K_GROUP(68+128*h, 2); \
	VPSRLW $4, Y2, Y6; \
	VPAND Y15, Y6, Y6; \
	VPSRLW $2, Y3, Y7; \
	VPAND Y13, Y7, Y7; \
	VPOR Y7, Y6, Y6; \
	Q6K_GROUP(100+128*h, 3)

// Q6K_START sets Y0 to the 16 scales as int16 and Y9 to 32·Σ_g
// scale_g·bsum_g in 8 int32 lanes (the −32 of every quant).
#define Q6K_START \
	VPMOVSXBW 192(SI), Y0; \
	VPMADDWD 260(DI), Y0, Y9; \
	VPSLLD $5, Y9, Y9

// Q6K_ACCUM adds the block's lanes, less Y9's, times f16(d)·dx to Y14.
#define Q6K_ACCUM \
	VPSUBD Y9, Y4, Y4; \
	VCVTDQ2PS Y4, Y4; \
	MOVWLZX 208(SI), AX; \
	VMOVD AX, X2; \
	VCVTPH2PS X2, X2; \
	VMULSS 0(DI), X2, X2; \
	VBROADCASTSS X2, Y2; \
	VFMADD231PS Y2, Y4, Y14

#define K6_SETUP_AVX2 \
	MOVQ a_base+0(FP), SI; \
	MOVL $0x0f0f0f0f, AX; \
	VMOVD AX, X15; \
	VPBROADCASTD X15, Y15; \
	MOVL $0x30303030, AX; \
	VMOVD AX, X13; \
	VPBROADCASTD X13, Y13

#define K6_ZERO VXORPS Y14, Y14, Y14

#define Q6K_BLOCK_AVX2 \
	Q6K_START; \
	VPXOR Y4, Y4, Y4; \
	VPERMQ $0x44, Y0, Y5; \
	Q6K_HALF_AVX2(0); \
	VPERMQ $0xee, Y0, Y5; \
	Q6K_HALF_AVX2(1); \
	Q6K_ACCUM

// func dotQ6_KRowsAVX2(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)
TEXT ·dotQ6_KRowsAVX2(SB), NOSPLIT, $0-104
	KROWS(K6_SETUP_AVX2, K6_ZERO, Q6K_BLOCK_AVX2, K_REDUCE, 210)

// Q6K_HALF_VNNI(h, ia, ib): elements 128h..128h+63 in Z1 (ql[64h:64h+64]
// low nibbles with qh's bits 0-1 and 2-3) and 128h+64..128h+127 in Z2
// (high nibbles, qh's bits 4-5 and 6-7): qh in both halves of Z3 shifted
// per 256-bit half by vpsllvw/vpsrlvw (Z20, Z21), Z13 bytes 0x30; the
// scales of 16-element groups spread by vpermw with indices ia and ib.
#define Q6K_HALF_VNNI(h, ia, ib) \
	VMOVDQU64 (64*h)(SI), Z1; \
	VBROADCASTI64X4 (128+32*h)(SI), Z3; \
	VPSRLW $4, Z1, Z2; \
	VPANDD Z15, Z1, Z1; \
	VPANDD Z15, Z2, Z2; \
	VPSLLVW Z20, Z3, Z6; \
	VPSRLVW Z21, Z3, Z7; \
	VPANDD Z13, Z6, Z6; \
	VPANDD Z13, Z7, Z7; \
	VPORD Z6, Z1, Z1; \
	VPORD Z7, Z2, Z2; \
	VPMADDUBSW (4+128*h)(DI), Z1, Z1; \
	VPMADDUBSW (68+128*h)(DI), Z2, Z2; \
	VPERMW Z0, ia, Z6; \
	VPERMW Z0, ib, Z7; \
	VPDPWSSD Z6, Z1, Z4; \
	VPDPWSSD Z7, Z2, Z4

#define K6_SETUP_VNNI \
	K6_SETUP_AVX2; \
	VPBROADCASTD AX, Z13; \
	MOVL $0x0f0f0f0f, AX; \
	VPBROADCASTD AX, Z15; \
	VMOVDQU64 kq6perm<>+0(SB), Z16; \
	VMOVDQU64 kq6perm<>+64(SB), Z17; \
	VMOVDQU64 kq6perm<>+128(SB), Z18; \
	VMOVDQU64 kq6perm<>+192(SB), Z19; \
	VMOVDQU64 kq6shift<>+0(SB), Z20; \
	VMOVDQU64 kq6shift<>+64(SB), Z21

#define Q6K_BLOCK_VNNI \
	Q6K_START; \
	VPXORD Z4, Z4, Z4; \
	Q6K_HALF_VNNI(0, Z16, Z17); \
	Q6K_HALF_VNNI(1, Z18, Z19); \
	K_RED512; \
	Q6K_ACCUM

// func dotQ6_KRowsVNNI(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)
TEXT ·dotQ6_KRowsVNNI(SB), NOSPLIT, $0-104
	KROWS(K6_SETUP_VNNI, K6_ZERO, Q6K_BLOCK_VNNI, K_REDUCE, 210)

// The constants: vpshufb masks picking one int16 scale into every word
// (kq4shuf: mask j, word j in both 128-bit halves; kq6shuf: mask s, word
// 2s in the low half and 2s+1 in the high), vpermw indices (kq4perm:
// words 0-15 take scale 2i, 16-31 scale 2i+1; kq6perm: word w takes
// scale 4q + w/8) and q6_K's per-half qh shifts (kq6shift: left by 4
// and 2; right by 0 and 2).

DATA kq4shuf<>+0(SB)/8, $0x0100010001000100
DATA kq4shuf<>+8(SB)/8, $0x0100010001000100
DATA kq4shuf<>+16(SB)/8, $0x0100010001000100
DATA kq4shuf<>+24(SB)/8, $0x0100010001000100
DATA kq4shuf<>+32(SB)/8, $0x0302030203020302
DATA kq4shuf<>+40(SB)/8, $0x0302030203020302
DATA kq4shuf<>+48(SB)/8, $0x0302030203020302
DATA kq4shuf<>+56(SB)/8, $0x0302030203020302
DATA kq4shuf<>+64(SB)/8, $0x0504050405040504
DATA kq4shuf<>+72(SB)/8, $0x0504050405040504
DATA kq4shuf<>+80(SB)/8, $0x0504050405040504
DATA kq4shuf<>+88(SB)/8, $0x0504050405040504
DATA kq4shuf<>+96(SB)/8, $0x0706070607060706
DATA kq4shuf<>+104(SB)/8, $0x0706070607060706
DATA kq4shuf<>+112(SB)/8, $0x0706070607060706
DATA kq4shuf<>+120(SB)/8, $0x0706070607060706
DATA kq4shuf<>+128(SB)/8, $0x0908090809080908
DATA kq4shuf<>+136(SB)/8, $0x0908090809080908
DATA kq4shuf<>+144(SB)/8, $0x0908090809080908
DATA kq4shuf<>+152(SB)/8, $0x0908090809080908
DATA kq4shuf<>+160(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kq4shuf<>+168(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kq4shuf<>+176(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kq4shuf<>+184(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kq4shuf<>+192(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kq4shuf<>+200(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kq4shuf<>+208(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kq4shuf<>+216(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kq4shuf<>+224(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA kq4shuf<>+232(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA kq4shuf<>+240(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA kq4shuf<>+248(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL kq4shuf<>(SB), RODATA|NOPTR, $256

DATA kq6shuf<>+0(SB)/8, $0x0100010001000100
DATA kq6shuf<>+8(SB)/8, $0x0100010001000100
DATA kq6shuf<>+16(SB)/8, $0x0302030203020302
DATA kq6shuf<>+24(SB)/8, $0x0302030203020302
DATA kq6shuf<>+32(SB)/8, $0x0504050405040504
DATA kq6shuf<>+40(SB)/8, $0x0504050405040504
DATA kq6shuf<>+48(SB)/8, $0x0706070607060706
DATA kq6shuf<>+56(SB)/8, $0x0706070607060706
DATA kq6shuf<>+64(SB)/8, $0x0908090809080908
DATA kq6shuf<>+72(SB)/8, $0x0908090809080908
DATA kq6shuf<>+80(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kq6shuf<>+88(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kq6shuf<>+96(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kq6shuf<>+104(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kq6shuf<>+112(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA kq6shuf<>+120(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL kq6shuf<>(SB), RODATA|NOPTR, $128

DATA kq4perm<>+0(SB)/8, $0x0000000000000000
DATA kq4perm<>+8(SB)/8, $0x0000000000000000
DATA kq4perm<>+16(SB)/8, $0x0000000000000000
DATA kq4perm<>+24(SB)/8, $0x0000000000000000
DATA kq4perm<>+32(SB)/8, $0x0001000100010001
DATA kq4perm<>+40(SB)/8, $0x0001000100010001
DATA kq4perm<>+48(SB)/8, $0x0001000100010001
DATA kq4perm<>+56(SB)/8, $0x0001000100010001
DATA kq4perm<>+64(SB)/8, $0x0002000200020002
DATA kq4perm<>+72(SB)/8, $0x0002000200020002
DATA kq4perm<>+80(SB)/8, $0x0002000200020002
DATA kq4perm<>+88(SB)/8, $0x0002000200020002
DATA kq4perm<>+96(SB)/8, $0x0003000300030003
DATA kq4perm<>+104(SB)/8, $0x0003000300030003
DATA kq4perm<>+112(SB)/8, $0x0003000300030003
DATA kq4perm<>+120(SB)/8, $0x0003000300030003
DATA kq4perm<>+128(SB)/8, $0x0004000400040004
DATA kq4perm<>+136(SB)/8, $0x0004000400040004
DATA kq4perm<>+144(SB)/8, $0x0004000400040004
DATA kq4perm<>+152(SB)/8, $0x0004000400040004
DATA kq4perm<>+160(SB)/8, $0x0005000500050005
DATA kq4perm<>+168(SB)/8, $0x0005000500050005
DATA kq4perm<>+176(SB)/8, $0x0005000500050005
DATA kq4perm<>+184(SB)/8, $0x0005000500050005
DATA kq4perm<>+192(SB)/8, $0x0006000600060006
DATA kq4perm<>+200(SB)/8, $0x0006000600060006
DATA kq4perm<>+208(SB)/8, $0x0006000600060006
DATA kq4perm<>+216(SB)/8, $0x0006000600060006
DATA kq4perm<>+224(SB)/8, $0x0007000700070007
DATA kq4perm<>+232(SB)/8, $0x0007000700070007
DATA kq4perm<>+240(SB)/8, $0x0007000700070007
DATA kq4perm<>+248(SB)/8, $0x0007000700070007
GLOBL kq4perm<>(SB), RODATA|NOPTR, $256

DATA kq6perm<>+0(SB)/8, $0x0000000000000000
DATA kq6perm<>+8(SB)/8, $0x0000000000000000
DATA kq6perm<>+16(SB)/8, $0x0001000100010001
DATA kq6perm<>+24(SB)/8, $0x0001000100010001
DATA kq6perm<>+32(SB)/8, $0x0002000200020002
DATA kq6perm<>+40(SB)/8, $0x0002000200020002
DATA kq6perm<>+48(SB)/8, $0x0003000300030003
DATA kq6perm<>+56(SB)/8, $0x0003000300030003
DATA kq6perm<>+64(SB)/8, $0x0004000400040004
DATA kq6perm<>+72(SB)/8, $0x0004000400040004
DATA kq6perm<>+80(SB)/8, $0x0005000500050005
DATA kq6perm<>+88(SB)/8, $0x0005000500050005
DATA kq6perm<>+96(SB)/8, $0x0006000600060006
DATA kq6perm<>+104(SB)/8, $0x0006000600060006
DATA kq6perm<>+112(SB)/8, $0x0007000700070007
DATA kq6perm<>+120(SB)/8, $0x0007000700070007
DATA kq6perm<>+128(SB)/8, $0x0008000800080008
DATA kq6perm<>+136(SB)/8, $0x0008000800080008
DATA kq6perm<>+144(SB)/8, $0x0009000900090009
DATA kq6perm<>+152(SB)/8, $0x0009000900090009
DATA kq6perm<>+160(SB)/8, $0x000a000a000a000a
DATA kq6perm<>+168(SB)/8, $0x000a000a000a000a
DATA kq6perm<>+176(SB)/8, $0x000b000b000b000b
DATA kq6perm<>+184(SB)/8, $0x000b000b000b000b
DATA kq6perm<>+192(SB)/8, $0x000c000c000c000c
DATA kq6perm<>+200(SB)/8, $0x000c000c000c000c
DATA kq6perm<>+208(SB)/8, $0x000d000d000d000d
DATA kq6perm<>+216(SB)/8, $0x000d000d000d000d
DATA kq6perm<>+224(SB)/8, $0x000e000e000e000e
DATA kq6perm<>+232(SB)/8, $0x000e000e000e000e
DATA kq6perm<>+240(SB)/8, $0x000f000f000f000f
DATA kq6perm<>+248(SB)/8, $0x000f000f000f000f
GLOBL kq6perm<>(SB), RODATA|NOPTR, $256

DATA kq6shift<>+0(SB)/8, $0x0004000400040004
DATA kq6shift<>+8(SB)/8, $0x0004000400040004
DATA kq6shift<>+16(SB)/8, $0x0004000400040004
DATA kq6shift<>+24(SB)/8, $0x0004000400040004
DATA kq6shift<>+32(SB)/8, $0x0002000200020002
DATA kq6shift<>+40(SB)/8, $0x0002000200020002
DATA kq6shift<>+48(SB)/8, $0x0002000200020002
DATA kq6shift<>+56(SB)/8, $0x0002000200020002
DATA kq6shift<>+64(SB)/8, $0x0000000000000000
DATA kq6shift<>+72(SB)/8, $0x0000000000000000
DATA kq6shift<>+80(SB)/8, $0x0000000000000000
DATA kq6shift<>+88(SB)/8, $0x0000000000000000
DATA kq6shift<>+96(SB)/8, $0x0002000200020002
DATA kq6shift<>+104(SB)/8, $0x0002000200020002
DATA kq6shift<>+112(SB)/8, $0x0002000200020002
DATA kq6shift<>+120(SB)/8, $0x0002000200020002
GLOBL kq6shift<>(SB), RODATA|NOPTR, $128

// kq4dec: K4_DECODE's shuffles (bytes s0-3, s8-11, s4-7, s8-11; the
// high bits' bytes s0-3 and s4-7 to bytes 4-7 and 12-15) and masks, then
// K4_LANES' repeat of each min.
DATA kq4dec<>+0(SB)/8, $0x0b0a090803020100
DATA kq4dec<>+8(SB)/8, $0x0b0a090807060504
DATA kq4dec<>+16(SB)/8, $0x0302010080808080
DATA kq4dec<>+24(SB)/8, $0x0706050480808080
DATA kq4dec<>+32(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA kq4dec<>+40(SB)/8, $0x0f0f0f0f3f3f3f3f
DATA kq4dec<>+48(SB)/8, $0x0b0b0a0a09090808
DATA kq4dec<>+56(SB)/8, $0x0f0f0e0e0d0d0c0c
GLOBL kq4dec<>(SB), RODATA|NOPTR, $64

// kq4pk: Q4K_PAIR_VNNI's scales, pair i: words 2i (bytes 4i, 4i+1) four
// times, then 2i+1 four times, in both 128-bit halves.
DATA kq4pk<>+0(SB)/8, $0x0100010001000100
DATA kq4pk<>+8(SB)/8, $0x0302030203020302
DATA kq4pk<>+16(SB)/8, $0x0100010001000100
DATA kq4pk<>+24(SB)/8, $0x0302030203020302
DATA kq4pk<>+32(SB)/8, $0x0504050405040504
DATA kq4pk<>+40(SB)/8, $0x0706070607060706
DATA kq4pk<>+48(SB)/8, $0x0504050405040504
DATA kq4pk<>+56(SB)/8, $0x0706070607060706
DATA kq4pk<>+64(SB)/8, $0x0908090809080908
DATA kq4pk<>+72(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kq4pk<>+80(SB)/8, $0x0908090809080908
DATA kq4pk<>+88(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kq4pk<>+96(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kq4pk<>+104(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA kq4pk<>+112(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kq4pk<>+120(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL kq4pk<>(SB), RODATA|NOPTR, $128
