//go:build !noasm

#include "textflag.h"

// The packed kernels at the avx2 level (packed_amd64.go; layout in
// pack.go). With 256-bit registers a group block is two halves of 8 rows:
// half h is bytes 32h..32h+31 of each 64-byte chunk and scales 8h..8h+7,
// one int32 lane per row as in the VNNI kernels. vpdpbusd becomes
// vpmaddubsw (unsigned weight bytes times the column's signed bytes, pairs
// summed to int16) then vpmaddwd with int16 ones (pairs summed to int32).
// Registers:
//
//	SI the group's block (scales at 0, quant chunks from 32)
//	DI the panel's block: column j's quants at 32j
//	R8, R9 the panel's block scales (float32) and negated offset shares
//	       (int32)
//	CX blocks left, DX the tile
//	Y0..Y7 one half's weights, in the order of the column's quant dwords:
//	       Y_i times the column's dword i (bytes 4i..4i+3) broadcast
//	Y8 that half's row scales as float32
//	Y9..Y13 scratch, Y14 int16 ones, Y15 the type's byte constant
//
// Sixteen ymm registers hold one half's weights and a few sums, not also
// the 8×2 accumulators of a panel (nor, in two passes of four columns, the
// 4×2 of a pass beside both halves' weights). So the panel kernels take a
// block one half at a time, all eight columns against it, and add each
// term into the tile in memory: a load and a store per column and half,
// beside twenty (q4_0) to thirty-five (q8_0) vector instructions, and a
// block's weights are loaded and unpacked once.

// PACKED2_SETUP loads the arguments, the int16 ones and Y15's constant c
// (four bytes).
#define PACKED2_SETUP(c) \
	MOVQ w+0(FP), SI; \
	MOVQ xq+8(FP), DI; \
	MOVQ xd+16(FP), R8; \
	MOVQ xc+24(FP), R9; \
	MOVQ nb+32(FP), CX; \
	MOVQ tile+40(FP), DX; \
	VPCMPEQW Y14, Y14, Y14; \
	VPSRLW $15, Y14, Y14; \
	MOVL $c, AX; \
	VMOVD AX, X15; \
	VPBROADCASTD X15, Y15

// Q4_HALF sets Y0..Y7 to half h (byte offset 0 or 32) of the q4_0 group
// block's chunks as unsigned bytes: low nibbles of chunks 0..3 (the
// column's dwords 0..3), then their high nibbles (dwords 4..7); and Y8 to
// the half's row scales. Y15 holds bytes 0x0f.
#define Q4_HALF(h) \
	VMOVDQU (32+h)(SI), Y0; \
	VMOVDQU (96+h)(SI), Y1; \
	VMOVDQU (160+h)(SI), Y2; \
	VMOVDQU (224+h)(SI), Y3; \
	VPSRLW $4, Y0, Y4; \
	VPSRLW $4, Y1, Y5; \
	VPSRLW $4, Y2, Y6; \
	VPSRLW $4, Y3, Y7; \
	VPAND Y15, Y0, Y0; \
	VPAND Y15, Y1, Y1; \
	VPAND Y15, Y2, Y2; \
	VPAND Y15, Y3, Y3; \
	VPAND Y15, Y4, Y4; \
	VPAND Y15, Y5, Y5; \
	VPAND Y15, Y6, Y6; \
	VPAND Y15, Y7, Y7; \
	VCVTPH2PS (h/2)(SI), Y8

// Q4_ISUM sets T to the int32 Σ nibble·x per row of Y0..Y7 against the
// column's quants at x(DI), plus the column's negated offset share at
// s(R9): the block's integer sum (nibble − 8)·x, as the VNNI kernels give
// it. The int16 pair sums of all eight dwords are added (in two chains, T
// over dwords 0..3 and U over 4..7) before one vpmaddwd: each is at most
// 2·15·128 in magnitude, eight of them less than 2¹⁵. U, B and P are
// scratch; B and P may be one register.
#define Q4_ISUM(x, s, T, U, B, P) \
	VPBROADCASTD (x+0)(DI), B; \
	VPMADDUBSW B, Y0, T; \
	VPBROADCASTD (x+16)(DI), B; \
	VPMADDUBSW B, Y4, U; \
	VPBROADCASTD (x+4)(DI), B; \
	VPMADDUBSW B, Y1, P; \
	VPADDW P, T, T; \
	VPBROADCASTD (x+20)(DI), B; \
	VPMADDUBSW B, Y5, P; \
	VPADDW P, U, U; \
	VPBROADCASTD (x+8)(DI), B; \
	VPMADDUBSW B, Y2, P; \
	VPADDW P, T, T; \
	VPBROADCASTD (x+24)(DI), B; \
	VPMADDUBSW B, Y6, P; \
	VPADDW P, U, U; \
	VPBROADCASTD (x+12)(DI), B; \
	VPMADDUBSW B, Y3, P; \
	VPADDW P, T, T; \
	VPBROADCASTD (x+28)(DI), B; \
	VPMADDUBSW B, Y7, P; \
	VPADDW P, U, U; \
	VPADDW U, T, T; \
	VPMADDWD Y14, T, T; \
	VPBROADCASTD s(R9), B; \
	VPADDD B, T, T

// TERM adds the integer sums T of a block's half times the rows' scales
// (Y8) times the column's scale at s(R8) to acc, as the VNNI kernels do:
// float32(isum)·(da·dx), one rounding for the product and the sum. S is
// scratch.
#define TERM(s, T, S, acc) \
	VCVTDQ2PS T, T; \
	VBROADCASTSS s(R8), S; \
	VMULPS S, Y8, S; \
	VFMADD231PS S, T, acc

// TILE_TERM is TERM with acc the tile's floats at t(DX).
#define TILE_TERM(s, t, T, S) \
	VCVTDQ2PS T, T; \
	VBROADCASTSS s(R8), S; \
	VMULPS S, Y8, S; \
	VFMADD213PS t(DX), S, T; \
	VMOVUPS T, t(DX)

// ZERO_TILE4 and ZERO_TILE8 zero a panel's tile (four or eight columns),
// which the panel kernels accumulate in.
#define ZERO_TILE4 \
	VXORPS Y9, Y9, Y9; \
	VMOVUPS Y9, (DX); \
	VMOVUPS Y9, 32(DX); \
	VMOVUPS Y9, 64(DX); \
	VMOVUPS Y9, 96(DX); \
	VMOVUPS Y9, 128(DX); \
	VMOVUPS Y9, 160(DX); \
	VMOVUPS Y9, 192(DX); \
	VMOVUPS Y9, 224(DX)

#define ZERO_TILE8 \
	ZERO_TILE4; \
	VMOVUPS Y9, 256(DX); \
	VMOVUPS Y9, 288(DX); \
	VMOVUPS Y9, 320(DX); \
	VMOVUPS Y9, 352(DX); \
	VMOVUPS Y9, 384(DX); \
	VMOVUPS Y9, 416(DX); \
	VMOVUPS Y9, 448(DX); \
	VMOVUPS Y9, 480(DX)

// Q4_COL8 is column j of a q4_0 panel against the half in Y0..Y8; t is the
// half's offset in the tile's column (0 or 32 bytes).
#define Q4_COL8(j, t) \
	Q4_ISUM(32*j, 4*j, Y11, Y13, Y9, Y10); \
	TILE_TERM(4*j, 64*j+t, Y11, Y12)

#define Q4_PANEL_HALF(h) \
	Q4_HALF(h); \
	Q4_COL8(0, h); \
	Q4_COL8(1, h); \
	Q4_COL8(2, h); \
	Q4_COL8(3, h); \
	Q4_COL8(4, h); \
	Q4_COL8(5, h); \
	Q4_COL8(6, h); \
	Q4_COL8(7, h)

// For q8_0 the kernels compute Σ q·x itself, not Σ (q+128)·x: they do NOT
// add the column's negated offset share xc (−128·Σx, which only the
// unsigned form needs) and read none of xc. Their sums are the Go loop's
// and the VNNI kernels' wherever xc is what the panels hold, −128 times the
// block's quant sum.
//
// ggml's sign trick (ggml_vec_dot_q8_0_q8_0) multiplies without
// saturating: the signed quant q (the stored byte xor 0x80) as |q|, an
// unsigned byte, times x with q's sign, so a pair is at most 2·128·127 <
// 2¹⁵ where (q+128)·x pairs reach 2·255·127. x never holds −128 (the
// activations are quantized to |v| ≤ 127), which vpsignb could not negate.

// Q8_FIRST sets T to the int32 Σ q·x per row of one chunk: Q its signed
// quants (a register or memory), A their magnitudes, x(DI) the column's
// quant dword. Q8_NEXT adds it to T, with B scratch.
#define Q8_FIRST(x, Q, A, T) \
	VPBROADCASTD x(DI), T; \
	VPSIGNB Q, T, T; \
	VPMADDUBSW T, A, T; \
	VPMADDWD Y14, T, T

#define Q8_NEXT(x, Q, A, T, B) \
	VPBROADCASTD x(DI), B; \
	VPSIGNB Q, B, B; \
	VPMADDUBSW B, A, B; \
	VPMADDWD Y14, B, B; \
	VPADDD B, T, T

// Q8_LOAD sets Q to chunk c of half h of the q8_0 group block as signed
// quants and A to their magnitudes. Y15 holds bytes 0x80.
#define Q8_LOAD(c, h, Q, A) \
	VPXOR (32+64*c+h)(SI), Y15, Q; \
	VPABSB Q, A

// Q8_X1_HALF adds half h of the q8_0 group block against the column to
// acc, in two chains (Y9, Y10) over chunks 0..3 and 4..7.
#define Q8_X1_HALF(h, acc) \
	VCVTPH2PS (h/2)(SI), Y8; \
	Q8_LOAD(0, h, Y0, Y1); \
	Q8_FIRST(0, Y0, Y1, Y9); \
	Q8_LOAD(4, h, Y2, Y3); \
	Q8_FIRST(16, Y2, Y3, Y10); \
	Q8_LOAD(1, h, Y4, Y5); \
	Q8_NEXT(4, Y4, Y5, Y9, Y11); \
	Q8_LOAD(5, h, Y6, Y7); \
	Q8_NEXT(20, Y6, Y7, Y10, Y11); \
	Q8_LOAD(2, h, Y0, Y1); \
	Q8_NEXT(8, Y0, Y1, Y9, Y11); \
	Q8_LOAD(6, h, Y2, Y3); \
	Q8_NEXT(24, Y2, Y3, Y10, Y11); \
	Q8_LOAD(3, h, Y4, Y5); \
	Q8_NEXT(12, Y4, Y5, Y9, Y11); \
	Q8_LOAD(7, h, Y6, Y7); \
	Q8_NEXT(28, Y6, Y7, Y10, Y11); \
	VPADDD Y10, Y9, Y9; \
	TERM(0, Y9, Y11, acc)

// The q8_0 panel kernel keeps a half's magnitudes in Y0..Y7 and its signed
// quants in the frame (vpsignb takes them from memory): both would need
// sixteen registers.

// Q8_STORE sets Y_c (A) to chunk c's magnitudes and stores its signed
// quants at 32c(SP).
#define Q8_STORE(c, h, A) \
	Q8_LOAD(c, h, Y9, A); \
	VMOVDQU Y9, (32*c)(SP)

// Q8_COL8 is column j of a q8_0 panel against the half in Y0..Y8 and the
// frame; t is the half's offset in the tile's column (0 or 32 bytes).
#define Q8_COL8(j, t) \
	Q8_FIRST(32*j+0, 0(SP), Y0, Y11); \
	Q8_FIRST(32*j+16, 128(SP), Y4, Y12); \
	Q8_NEXT(32*j+4, 32(SP), Y1, Y11, Y9); \
	Q8_NEXT(32*j+20, 160(SP), Y5, Y12, Y10); \
	Q8_NEXT(32*j+8, 64(SP), Y2, Y11, Y9); \
	Q8_NEXT(32*j+24, 192(SP), Y6, Y12, Y10); \
	Q8_NEXT(32*j+12, 96(SP), Y3, Y11, Y9); \
	Q8_NEXT(32*j+28, 224(SP), Y7, Y12, Y10); \
	VPADDD Y12, Y11, Y11; \
	TILE_TERM(4*j, 64*j+t, Y11, Y13)

#define Q4_PANEL4_HALF(h) \
	Q4_HALF(h); \
	Q4_COL8(0, h); \
	Q4_COL8(1, h); \
	Q4_COL8(2, h); \
	Q4_COL8(3, h)

// Q8_STORE_HALF loads half h of the q8_0 group block: its row scales to
// Y8, its magnitudes to Y0..Y7, its signed quants to the frame.
#define Q8_STORE_HALF(h) \
	VCVTPH2PS (h/2)(SI), Y8; \
	Q8_STORE(0, h, Y0); \
	Q8_STORE(1, h, Y1); \
	Q8_STORE(2, h, Y2); \
	Q8_STORE(3, h, Y3); \
	Q8_STORE(4, h, Y4); \
	Q8_STORE(5, h, Y5); \
	Q8_STORE(6, h, Y6); \
	Q8_STORE(7, h, Y7)

#define Q8_PANEL_HALF(h) \
	Q8_STORE_HALF(h); \
	Q8_COL8(0, h); \
	Q8_COL8(1, h); \
	Q8_COL8(2, h); \
	Q8_COL8(3, h); \
	Q8_COL8(4, h); \
	Q8_COL8(5, h); \
	Q8_COL8(6, h); \
	Q8_COL8(7, h)

#define Q8_PANEL4_HALF(h) \
	Q8_STORE_HALF(h); \
	Q8_COL8(0, h); \
	Q8_COL8(1, h); \
	Q8_COL8(2, h); \
	Q8_COL8(3, h)

// PANEL4_AVX2 is PANEL8_AVX2 over four columns (see the VNNI PANEL4),
// prefetching the weights as VECTOR_AVX2 does.
#define PANEL4_AVX2(c, HALF, PREFETCH, bytes) \
	PACKED2_SETUP(c); \
	ZERO_TILE4; \
loop:; \
	PREFETCH; \
	HALF(0); \
	HALF(32); \
	ADDQ $bytes, SI; \
	ADDQ $128, DI; \
	ADDQ $16, R8; \
	ADDQ $16, R9; \
	DECQ CX; \
	JNZ loop; \
	VZEROUPPER; \
	RET

// PANEL8_AVX2 is a panel kernel: c is Y15's constant, HALF(h) adds the
// terms of a block's half h to the tile, bytes is the block's size.
#define PANEL8_AVX2(c, HALF, bytes) \
	PACKED2_SETUP(c); \
	ZERO_TILE8; \
loop:; \
	HALF(0); \
	HALF(32); \
	ADDQ $bytes, SI; \
	ADDQ $256, DI; \
	ADDQ $32, R8; \
	ADDQ $32, R9; \
	DECQ CX; \
	JNZ loop; \
	VZEROUPPER; \
	RET

// VECTOR_AVX2 is a one-column kernel: HALF(h, acc) adds the terms of a
// block's half h to acc. The weights stream from memory: it prefetches a
// kilobyte ahead, as the VNNI kernels do (PREFETCH_Q4, PREFETCH_Q8).
#define VECTOR_AVX2(c, HALF, PREFETCH, bytes) \
	PACKED2_SETUP(c); \
	VXORPS Y12, Y12, Y12; \
	VXORPS Y13, Y13, Y13; \
loop:; \
	PREFETCH; \
	HALF(0, Y12); \
	HALF(32, Y13); \
	ADDQ $bytes, SI; \
	ADDQ $32, DI; \
	ADDQ $4, R8; \
	ADDQ $4, R9; \
	DECQ CX; \
	JNZ loop; \
	VMOVUPS Y12, (DX); \
	VMOVUPS Y13, 32(DX); \
	VZEROUPPER; \
	RET

// Q4_X1_HALF adds half h of the q4_0 group block against the column to acc.
#define Q4_X1_HALF(h, acc) \
	Q4_HALF(h); \
	Q4_ISUM(0, 0, Y11, Y9, Y10, Y10); \
	TERM(0, Y11, Y9, acc)

#define PREFETCH_Q4 \
	PREFETCHT0 1024(SI); \
	PREFETCHT0 1088(SI); \
	PREFETCHT0 1152(SI); \
	PREFETCHT0 1216(SI); \
	PREFETCHT0 1280(SI)

#define PREFETCH_Q8 \
	PREFETCHT0 1024(SI); \
	PREFETCHT0 1088(SI); \
	PREFETCHT0 1152(SI); \
	PREFETCHT0 1216(SI); \
	PREFETCHT0 1280(SI); \
	PREFETCHT0 1344(SI); \
	PREFETCHT0 1408(SI); \
	PREFETCHT0 1472(SI); \
	PREFETCHT0 1536(SI)

// SMALLX2_AVX2 is PANEL4_AVX2 over two row groups at once, the second at
// BX (its tile at tb(DX)): two streams from memory, as the VNNI small
// kernels (packed4_amd64.s) take. The halves' macros read the group at SI,
// so the loop swaps SI and BX (and the tile's offset) between the groups.
// ZERO zeroes both tiles, cols is the panel's columns.
#define SMALLX2_AVX2(c, HALF, PREFETCH, bytes, ZERO, tb, cols) \
	PACKED2_SETUP(c); \
	MOVQ w2+48(FP), BX; \
	MOVQ ·smallAhead(SB), R10; \
	ZERO; \
loop:; \
	PREFETCH; \
	HALF(0); \
	HALF(32); \
	XCHGQ SI, BX; \
	ADDQ $tb, DX; \
	PREFETCH; \
	HALF(0); \
	HALF(32); \
	XCHGQ SI, BX; \
	SUBQ $tb, DX; \
	ADDQ $bytes, SI; \
	ADDQ $bytes, BX; \
	ADDQ $(32*cols), DI; \
	ADDQ $(4*cols), R8; \
	ADDQ $(4*cols), R9; \
	DECQ CX; \
	JNZ loop; \
	VZEROUPPER; \
	RET

#define Q4_PANEL2_HALF(h) \
	Q4_HALF(h); \
	Q4_COL8(0, h); \
	Q4_COL8(1, h)

#define Q8_PANEL2_HALF(h) \
	Q8_STORE_HALF(h); \
	Q8_COL8(0, h); \
	Q8_COL8(1, h)

// PREFETCH_Q4_R10 and PREFETCH_Q8_R10 are PREFETCH_Q4 and PREFETCH_Q8
// R10 bytes ahead (the small kernels' ·smallAhead).
#define PREFETCH_Q4_R10 \
	PREFETCHT0 0(SI)(R10*1); \
	PREFETCHT0 64(SI)(R10*1); \
	PREFETCHT0 128(SI)(R10*1); \
	PREFETCHT0 192(SI)(R10*1); \
	PREFETCHT0 256(SI)(R10*1)

#define PREFETCH_Q8_R10 \
	PREFETCH_Q4_R10; \
	PREFETCHT0 320(SI)(R10*1); \
	PREFETCHT0 384(SI)(R10*1); \
	PREFETCHT0 448(SI)(R10*1); \
	PREFETCHT0 512(SI)(R10*1)

// func packedQ4x1AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)
TEXT ·packedQ4x1AVX2(SB), NOSPLIT, $0-48
	VECTOR_AVX2(0x0f0f0f0f, Q4_X1_HALF, PREFETCH_Q4, 288)

// func packedQ4x8AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)
TEXT ·packedQ4x8AVX2(SB), NOSPLIT, $0-48
	PANEL8_AVX2(0x0f0f0f0f, Q4_PANEL_HALF, 288)

// func packedQ4x4AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)
TEXT ·packedQ4x4AVX2(SB), NOSPLIT, $0-48
	PANEL4_AVX2(0x0f0f0f0f, Q4_PANEL4_HALF, PREFETCH_Q4, 288)

// func packedQ8x4AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)
TEXT ·packedQ8x4AVX2(SB), NOSPLIT, $256-48
	PANEL4_AVX2(0x80808080, Q8_PANEL4_HALF, PREFETCH_Q8, 544)

// func packedQ8x1AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)
TEXT ·packedQ8x1AVX2(SB), NOSPLIT, $0-48
	VECTOR_AVX2(0x80808080, Q8_X1_HALF, PREFETCH_Q8, 544)

// func packedQ8x8AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)
TEXT ·packedQ8x8AVX2(SB), NOSPLIT, $256-48
	PANEL8_AVX2(0x80808080, Q8_PANEL_HALF, 544)

// func packedQ4x4x2AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)
TEXT ·packedQ4x4x2AVX2(SB), NOSPLIT, $0-56
	SMALLX2_AVX2(0x0f0f0f0f, Q4_PANEL4_HALF, PREFETCH_Q4_R10, 288, ZERO_TILE8, 256, 4)

// func packedQ8x4x2AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)
TEXT ·packedQ8x4x2AVX2(SB), NOSPLIT, $256-56
	SMALLX2_AVX2(0x80808080, Q8_PANEL4_HALF, PREFETCH_Q8_R10, 544, ZERO_TILE8, 256, 4)

// func packedQ4x2x2AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)
TEXT ·packedQ4x2x2AVX2(SB), NOSPLIT, $0-56
	SMALLX2_AVX2(0x0f0f0f0f, Q4_PANEL2_HALF, PREFETCH_Q4_R10, 288, ZERO_TILE4, 128, 2)

// func packedQ8x2x2AVX2(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)
TEXT ·packedQ8x2x2AVX2(SB), NOSPLIT, $256-56
	SMALLX2_AVX2(0x80808080, Q8_PANEL2_HALF, PREFETCH_Q8_R10, 544, ZERO_TILE4, 128, 2)
