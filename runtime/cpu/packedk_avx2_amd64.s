//go:build !noasm

#include "textflag.h"

// The q4_K packed kernels of one and four columns at the avx2 level
// (packedk_amd64.go); the panel of eight is packedk8_avx2_amd64.s,
// written by _gen/packedk8.py.

// The kernels of one to four columns are written by hand rather than
// generated: they stream the weights, and so read each group block in
// address order and prefetch ahead as packedQ4Kx4VNNI does (see
// packedk_amd64.s), the head's mins first, each chunk once for both its
// nibbles. A sub-block's scales reach a lane's two words as one
// vpbroadcastq of the half's 8 scale bytes and one vpshufb by kScaleWords.

// kScaleWords picks, for dword lane i of a ymm, byte i of the 8 bytes
// vpbroadcastq put in each 128-bit lane, as both of the lane's words.
DATA kScaleWords<>+0(SB)/8, $0x8001800180008000
DATA kScaleWords<>+8(SB)/8, $0x8003800380028002
DATA kScaleWords<>+16(SB)/8, $0x8005800580048004
DATA kScaleWords<>+24(SB)/8, $0x8007800780068006
GLOBL kScaleWords<>(SB), RODATA|NOPTR, $32

// PACKEDK2_SETUP loads the kernels' arguments, R10 the prefetch distance
// at ahead and Y15 bytes 0x0f.
#define PACKEDK2_SETUP(ahead) \
	MOVQ w+0(FP), SI; \
	MOVQ xq+8(FP), DI; \
	MOVQ xd+16(FP), R8; \
	MOVQ xc+24(FP), R9; \
	MOVQ nb+32(FP), CX; \
	MOVQ tile+40(FP), DX; \
	MOVQ ahead, R10; \
	MOVL $0x0f0f0f0f, AX; \
	VMOVD AX, X15; \
	VPBROADCASTD X15, Y15

// K2_PREFETCH_HEAD prefetches the head of the group block R10 ahead.
#define K2_PREFETCH_HEAD \
	PREFETCHT1 0(SI)(R10*1); \
	PREFETCHT1 64(SI)(R10*1); \
	PREFETCHT1 128(SI)(R10*1); \
	PREFETCHT1 192(SI)(R10*1); \
	PREFETCHT1 256(SI)(R10*1)

// K2_NIBBLES splits the 32 bytes at a(SI) (a chunk's half: 8 rows) into
// L (low nibbles) and H (high), both unsigned bytes below 16.
#define K2_NIBBLES(a, L, H) \
	VMOVDQU a(SI), H; \
	VPAND Y15, H, L; \
	VPSRLW $4, H, H; \
	VPAND Y15, H, H

// K2_SCALE adds the int16 sums A of a sub-block, times its rows' scales
// (8 bytes at s(SI)), to the int32 sums I; Y10 is scratch.
#define K2_SCALE(s, A, I) \
	VPBROADCASTQ s(SI), Y10; \
	VPSHUFB kScaleWords<>(SB), Y10, Y10; \
	VPMADDWD Y10, A, A; \
	VPADDD A, I, I

// K2_MINS sets D to the half's dmin (f16s at d(SI)) times its mins' sums
// (pair p's bytes at m+32p(SI), widened to int16 pairs) against the
// column's sub-block sums at x(R9); Y12, Y13 and Y14 are scratch.
#define K2_MINS(m, x, d, D) \
	VPMOVZXBW m(SI), Y12; \
	VPBROADCASTD x(R9), Y13; \
	VPMADDWD Y12, Y13, D; \
	VPMOVZXBW (m+32)(SI), Y12; \
	VPBROADCASTD (x+4)(R9), Y13; \
	VPMADDWD Y12, Y13, Y14; \
	VPADDD Y14, D, D; \
	VPMOVZXBW (m+64)(SI), Y12; \
	VPBROADCASTD (x+8)(R9), Y13; \
	VPMADDWD Y12, Y13, Y14; \
	VPADDD Y14, D, D; \
	VPMOVZXBW (m+96)(SI), Y12; \
	VPBROADCASTD (x+12)(R9), Y13; \
	VPMADDWD Y12, Y13, Y14; \
	VPADDD Y14, D, D; \
	VCVTDQ2PS D, D; \
	VCVTPH2PS d(SI), Y12; \
	VMULPS Y12, D, D

// K2_1CHUNK adds the chunk at c(SI) times the column's quant dwords at
// x(DI) (low nibbles) and x+32 (high) to the halves' int16 sums: Y0 and
// Y1 low, Y2 and Y3 high.
#define K2_1CHUNK(c, x) \
	PREFETCHT1 c(SI)(R10*1); \
	VPBROADCASTD x(DI), Y13; \
	VPBROADCASTD (x+32)(DI), Y14; \
	K2_NIBBLES(c, Y10, Y11); \
	VPMADDUBSW Y13, Y10, Y10; \
	VPMADDUBSW Y14, Y11, Y11; \
	VPADDW Y10, Y0, Y0; \
	VPADDW Y11, Y2, Y2; \
	K2_NIBBLES(c+32, Y12, Y11); \
	VPMADDUBSW Y13, Y12, Y12; \
	VPMADDUBSW Y14, Y11, Y11; \
	VPADDW Y12, Y1, Y1; \
	VPADDW Y11, Y3, Y3

// K2_1PAIR adds sub-blocks 2p and 2p+1 (chunks at c = 320+512p, quants
// at x = 64p, scales at s = 64+32p) to the halves' int32 sums Y4 and Y5.
#define K2_1PAIR(c, x, s) \
	VPXOR Y0, Y0, Y0; \
	VPXOR Y1, Y1, Y1; \
	VPXOR Y2, Y2, Y2; \
	VPXOR Y3, Y3, Y3; \
	K2_1CHUNK(c, x); \
	K2_1CHUNK(c+64, x+4); \
	K2_1CHUNK(c+128, x+8); \
	K2_1CHUNK(c+192, x+12); \
	K2_1CHUNK(c+256, x+16); \
	K2_1CHUNK(c+320, x+20); \
	K2_1CHUNK(c+384, x+24); \
	K2_1CHUNK(c+448, x+28); \
	K2_SCALE(s, Y0, Y4); \
	K2_SCALE(s+8, Y1, Y5); \
	K2_SCALE(s+16, Y2, Y4); \
	K2_SCALE(s+24, Y3, Y5)

// K2_TILE adds a half's block term (int32 sums I, dmin times the mins'
// sums D, its d at d(SI)) times the column's d at x(R8) to T.
#define K2_TILE(I, D, d, x, T) \
	VCVTDQ2PS I, I; \
	VCVTPH2PS d(SI), Y12; \
	VMULPS Y12, I, I; \
	VSUBPS D, I, I; \
	VBROADCASTSS x(R8), Y12; \
	VFMADD231PS Y12, I, T

// func packedQ4Kx1AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)
//
// Y4 and Y5 the halves' scaled sums, Y6 and Y7 their mins' terms, Y8 and
// Y9 their tiles.
TEXT ·packedQ4Kx1AVX2(SB), NOSPLIT, $0-48
	PACKEDK2_SETUP(·kColumnAheadAVX2(SB))
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9

k21loop:
	K2_PREFETCH_HEAD
	K2_MINS(192, 0, 32, Y6)
	K2_MINS(208, 0, 48, Y7)
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	K2_1PAIR(320, 0, 64)
	K2_1PAIR(832, 64, 96)
	K2_1PAIR(1344, 128, 128)
	K2_1PAIR(1856, 192, 160)
	K2_TILE(Y4, Y6, 0, 0, Y8)
	K2_TILE(Y5, Y7, 16, 0, Y9)
	ADDQ $2368, SI
	ADDQ $256, DI
	ADDQ $4, R8
	ADDQ $16, R9
	DECQ CX
	JNZ k21loop
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, 32(DX)
	VZEROUPPER
	RET

// K2_4COL adds the nibbles in Y13 (low) and Y12 (high) times column j's
// quant dwords at x(DI) and x+32 to its int16 sums L and H; Y14 is
// scratch.
#define K2_4COL(x, L, H) \
	VPBROADCASTD x(DI), Y14; \
	VPMADDUBSW Y14, Y13, Y14; \
	VPADDW Y14, L, L; \
	VPBROADCASTD (x+32)(DI), Y14; \
	VPMADDUBSW Y14, Y12, Y14; \
	VPADDW Y14, H, H

// K2_4CHUNK adds half h's part (at a = c+32h) of the chunk at c(SI), for
// the four columns (quants at x(DI), column j's 256j further), to Y0..Y3
// (low) and Y4..Y7 (high). P is the chunk's prefetch, or nothing.
#define K2_4CHUNK(a, x, P) \
	P; \
	K2_NIBBLES(a, Y13, Y12); \
	K2_4COL(x, Y0, Y4); \
	K2_4COL(x+256, Y1, Y5); \
	K2_4COL(x+512, Y2, Y6); \
	K2_4COL(x+768, Y3, Y7)

// K2_4PAIR adds sub-blocks 2p and 2p+1 of half h (chunks from a =
// 320+512p+32h, quants at x = 64p, scales at s = 64+32p+8h) to the
// columns' int32 sums Y8..Y11. P0..P7 are the chunks' prefetches.
#define K2_4PAIR(a, x, s, P0, P1, P2, P3, P4, P5, P6, P7) \
	VPXOR Y0, Y0, Y0; \
	VPXOR Y1, Y1, Y1; \
	VPXOR Y2, Y2, Y2; \
	VPXOR Y3, Y3, Y3; \
	VPXOR Y4, Y4, Y4; \
	VPXOR Y5, Y5, Y5; \
	VPXOR Y6, Y6, Y6; \
	VPXOR Y7, Y7, Y7; \
	K2_4CHUNK(a, x, P0); \
	K2_4CHUNK(a+64, x+4, P1); \
	K2_4CHUNK(a+128, x+8, P2); \
	K2_4CHUNK(a+192, x+12, P3); \
	K2_4CHUNK(a+256, x+16, P4); \
	K2_4CHUNK(a+320, x+20, P5); \
	K2_4CHUNK(a+384, x+24, P6); \
	K2_4CHUNK(a+448, x+28, P7); \
	VPBROADCASTQ s(SI), Y12; \
	VPSHUFB kScaleWords<>(SB), Y12, Y12; \
	VPBROADCASTQ (s+16)(SI), Y13; \
	VPSHUFB kScaleWords<>(SB), Y13, Y13; \
	VPMADDWD Y12, Y0, Y0; \
	VPMADDWD Y12, Y1, Y1; \
	VPMADDWD Y12, Y2, Y2; \
	VPMADDWD Y12, Y3, Y3; \
	VPMADDWD Y13, Y4, Y4; \
	VPMADDWD Y13, Y5, Y5; \
	VPMADDWD Y13, Y6, Y6; \
	VPMADDWD Y13, Y7, Y7; \
	VPADDD Y0, Y8, Y8; \
	VPADDD Y1, Y9, Y9; \
	VPADDD Y2, Y10, Y10; \
	VPADDD Y3, Y11, Y11; \
	VPADDD Y4, Y8, Y8; \
	VPADDD Y5, Y9, Y9; \
	VPADDD Y6, Y10, Y10; \
	VPADDD Y7, Y11, Y11

// K2_4TILE adds half h's block term for column j (int32 sums I, the mins'
// term at m(SP), the column's d at x(R8)) to its tile rows at t(DX); Y12
// holds the half's d.
#define K2_4TILE(I, m, x, t) \
	VCVTDQ2PS I, I; \
	VMULPS Y12, I, I; \
	VSUBPS m(SP), I, I; \
	VBROADCASTSS x(R8), Y13; \
	VMOVUPS t(DX), Y14; \
	VFMADD231PS Y13, I, Y14; \
	VMOVUPS Y14, t(DX)

// K2_4HALF is the block's work for half h (rows 8h..8h+7): the pairs,
// then its tile rows (at 32h, column j's 64j further). The first half
// prefetches.
#define K2_4HALF(h, P0, P1, P2, P3, P4, P5, P6, P7, Q0, Q1, Q2, Q3, Q4, Q5, Q6, Q7, R0, R1, R2, R3, R4, R5, R6, R7, S0, S1, S2, S3, S4, S5, S6, S7) \
	VPXOR Y8, Y8, Y8; \
	VPXOR Y9, Y9, Y9; \
	VPXOR Y10, Y10, Y10; \
	VPXOR Y11, Y11, Y11; \
	K2_4PAIR(320+32*h, 0, 64+8*h, P0, P1, P2, P3, P4, P5, P6, P7); \
	K2_4PAIR(832+32*h, 64, 96+8*h, Q0, Q1, Q2, Q3, Q4, Q5, Q6, Q7); \
	K2_4PAIR(1344+32*h, 128, 128+8*h, R0, R1, R2, R3, R4, R5, R6, R7); \
	K2_4PAIR(1856+32*h, 192, 160+8*h, S0, S1, S2, S3, S4, S5, S6, S7); \
	VCVTPH2PS (16*h)(SI), Y12; \
	K2_4TILE(Y8, 128*h, 0, 32*h); \
	K2_4TILE(Y9, 128*h+32, 4, 32*h+64); \
	K2_4TILE(Y10, 128*h+64, 8, 32*h+128); \
	K2_4TILE(Y11, 128*h+96, 12, 32*h+192)

#define KP(c) PREFETCHT1 c(SI)(R10*1)
#define KNOP

// func packedQ4Kx4AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)
//
// packedQ4Kx1AVX2 for a panel of four columns, in two passes over each
// group block, one per half: Y0..Y7 the columns' int16 sums, Y8..Y11
// their int32 sums; the mins' terms of (half h, column j) in the frame at
// 128h+32j, the tile in memory.
TEXT ·packedQ4Kx4AVX2(SB), NOSPLIT, $256-48
	PACKEDK2_SETUP(·kStreamAhead(SB))
	VPXOR Y0, Y0, Y0
	VMOVDQU Y0, 0(DX)
	VMOVDQU Y0, 32(DX)
	VMOVDQU Y0, 64(DX)
	VMOVDQU Y0, 96(DX)
	VMOVDQU Y0, 128(DX)
	VMOVDQU Y0, 160(DX)
	VMOVDQU Y0, 192(DX)
	VMOVDQU Y0, 224(DX)

k24loop:
	K2_PREFETCH_HEAD
	K2_MINS(192, 0, 32, Y0)
	K2_MINS(192, 16, 32, Y1)
	K2_MINS(192, 32, 32, Y2)
	K2_MINS(192, 48, 32, Y3)
	K2_MINS(208, 0, 48, Y4)
	K2_MINS(208, 16, 48, Y5)
	K2_MINS(208, 32, 48, Y6)
	K2_MINS(208, 48, 48, Y7)
	VMOVUPS Y0, 0(SP)
	VMOVUPS Y1, 32(SP)
	VMOVUPS Y2, 64(SP)
	VMOVUPS Y3, 96(SP)
	VMOVUPS Y4, 128(SP)
	VMOVUPS Y5, 160(SP)
	VMOVUPS Y6, 192(SP)
	VMOVUPS Y7, 224(SP)
	K2_4HALF(0, KP(320), KP(384), KP(448), KP(512), KP(576), KP(640), KP(704), KP(768), KP(832), KP(896), KP(960), KP(1024), KP(1088), KP(1152), KP(1216), KP(1280), KP(1344), KP(1408), KP(1472), KP(1536), KP(1600), KP(1664), KP(1728), KP(1792), KP(1856), KP(1920), KP(1984), KP(2048), KP(2112), KP(2176), KP(2240), KP(2304))
	K2_4HALF(1, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP, KNOP)
	ADDQ $2368, SI
	ADDQ $1024, DI
	ADDQ $16, R8
	ADDQ $64, R9
	DECQ CX
	JNZ k24loop
	VZEROUPPER
	RET
