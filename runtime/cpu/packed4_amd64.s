//go:build !noasm

#include "textflag.h"

// The small-panel kernels over two row groups at once (packed4_amd64.go):
// a panel of two to four columns against the row groups at w and w2, the
// tile w's 4×16 sums then w2's. Registers as in packed_amd64.s, and BX the
// second group's block, R10 the prefetch distance (·streamAhead).
//
// A block's weights are loaded (and for q4_0 unpacked) once per group into
// Z8..Z15 and used by every column; each column's integer sums start from
// its negated offset share and take eight vpdpbusd, then one convert and
// one fma with the two scales' product. Eight columns' chains (four per
// group) keep vpdpbusd busy without splitting a column's sum in two.

#define SMALL_SETUP \
	MOVQ w+0(FP), SI; \
	MOVQ xq+8(FP), DI; \
	MOVQ xd+16(FP), R8; \
	MOVQ xc+24(FP), R9; \
	MOVQ nb+32(FP), CX; \
	MOVQ tile+40(FP), DX; \
	MOVQ w2+48(FP), BX; \
	MOVQ ·smallAhead(SB), R10; \
	MOVL $0x0f0f0f0f, AX; \
	VPBROADCASTD AX, Z31

// Q4_UNPACK_AT sets Z8..Z15 to the q4_0 group block at base as unsigned
// bytes in the order of the column's quant dwords (packed_amd64.s).
#define Q4_UNPACK_AT(base) \
	VMOVDQU32 32(base), Z8; \
	VMOVDQU32 96(base), Z9; \
	VMOVDQU32 160(base), Z10; \
	VMOVDQU32 224(base), Z11; \
	VPSRLW $4, Z8, Z12; \
	VPSRLW $4, Z9, Z13; \
	VPSRLW $4, Z10, Z14; \
	VPSRLW $4, Z11, Z15; \
	VPANDD Z31, Z8, Z8; \
	VPANDD Z31, Z9, Z9; \
	VPANDD Z31, Z10, Z10; \
	VPANDD Z31, Z11, Z11; \
	VPANDD Z31, Z12, Z12; \
	VPANDD Z31, Z13, Z13; \
	VPANDD Z31, Z14, Z14; \
	VPANDD Z31, Z15, Z15

#define Q8_LOAD_AT(base) \
	VMOVDQU32 32(base), Z8; \
	VMOVDQU32 96(base), Z9; \
	VMOVDQU32 160(base), Z10; \
	VMOVDQU32 224(base), Z11; \
	VMOVDQU32 288(base), Z12; \
	VMOVDQU32 352(base), Z13; \
	VMOVDQU32 416(base), Z14; \
	VMOVDQU32 480(base), Z15

#define PF_Q4(base) \
	PREFETCHT1 0(base)(R10*1); \
	PREFETCHT1 64(base)(R10*1); \
	PREFETCHT1 128(base)(R10*1); \
	PREFETCHT1 192(base)(R10*1); \
	PREFETCHT1 256(base)(R10*1)

#define PF_Q8(base) \
	PF_Q4(base); \
	PREFETCHT1 320(base)(R10*1); \
	PREFETCHT1 384(base)(R10*1); \
	PREFETCHT1 448(base)(R10*1); \
	PREFETCHT1 512(base)(R10*1)

// PF_HEAD asks for the first 1.5 KiB of a stream, as far as the loop's
// prefetches run ahead on AMD (on Intel they run 2 KiB ahead, and the
// hardware prefetcher covers the rest).
#define PF_HEAD(base) \
	PREFETCHT1 0(base); \
	PREFETCHT1 64(base); \
	PREFETCHT1 128(base); \
	PREFETCHT1 192(base); \
	PREFETCHT1 256(base); \
	PREFETCHT1 320(base); \
	PREFETCHT1 384(base); \
	PREFETCHT1 448(base); \
	PREFETCHT1 512(base); \
	PREFETCHT1 576(base); \
	PREFETCHT1 640(base); \
	PREFETCHT1 704(base); \
	PREFETCHT1 768(base); \
	PREFETCHT1 832(base); \
	PREFETCHT1 896(base); \
	PREFETCHT1 960(base); \
	PREFETCHT1 1024(base); \
	PREFETCHT1 1088(base); \
	PREFETCHT1 1152(base); \
	PREFETCHT1 1216(base); \
	PREFETCHT1 1280(base); \
	PREFETCHT1 1344(base); \
	PREFETCHT1 1408(base); \
	PREFETCHT1 1472(base)

// COL adds column j's block term (quants at x(DI), scale and share at
// s(R8), s(R9)) against the weights in Z8..Z15 and the rows' scales SC to
// acc. T and S are scratch.
#define COL(x, s, acc, T, S, SC) \
	VPBROADCASTD s(R9), T; \
	VPDPBUSD.BCST (x+0)(DI), Z8, T; \
	VPDPBUSD.BCST (x+4)(DI), Z9, T; \
	VPDPBUSD.BCST (x+8)(DI), Z10, T; \
	VPDPBUSD.BCST (x+12)(DI), Z11, T; \
	VPDPBUSD.BCST (x+16)(DI), Z12, T; \
	VPDPBUSD.BCST (x+20)(DI), Z13, T; \
	VPDPBUSD.BCST (x+24)(DI), Z14, T; \
	VPDPBUSD.BCST (x+28)(DI), Z15, T; \
	VCVTDQ2PS T, T; \
	VMULPS.BCST s(R8), SC, S; \
	VFMADD231PS S, T, acc

// GROUP4 adds one group's block (its weights in Z8..Z15, its scales in
// SC) against four columns to a0..a3.
#define GROUP4(SC, a0, a1, a2, a3) \
	COL(0, 0, a0, Z18, Z26, SC); \
	COL(32, 4, a1, Z19, Z27, SC); \
	COL(64, 8, a2, Z20, Z28, SC); \
	COL(96, 12, a3, Z21, Z29, SC)

// GROUP2 is GROUP4 over two columns.
#define GROUP2(SC, a0, a1) \
	COL(0, 0, a0, Z18, Z26, SC); \
	COL(32, 4, a1, Z19, Z27, SC)

// SMALL_LOOP is a small kernel's loop over the blocks: LOAD(base) the
// block's weights, PF(base) its prefetch, bytes its size, GA and GB the
// two groups' terms against the panel of cols columns.
#define SMALL_LOOP(LOAD, PF, bytes, GA, GB, cols) \
	SMALL_SETUP; \
	PF_HEAD(SI); \
	PF_HEAD(BX); \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7; \
loop:; \
	PF(SI); \
	PF(BX); \
	VCVTPH2PS (SI), Z16; \
	VCVTPH2PS (BX), Z17; \
	LOAD(SI); \
	GA; \
	LOAD(BX); \
	GB; \
	ADDQ $bytes, SI; \
	ADDQ $bytes, BX; \
	ADDQ $(32*cols), DI; \
	ADDQ $(4*cols), R8; \
	ADDQ $(4*cols), R9; \
	DECQ CX; \
	JNZ loop

// SMALL4X2 and SMALL2X2 are the kernels over four and two columns.
#define SMALL4X2(LOAD, PF, bytes) \
	SMALL_LOOP(LOAD, PF, bytes, GROUP4(Z16, Z0, Z1, Z2, Z3), GROUP4(Z17, Z4, Z5, Z6, Z7), 4); \
	VMOVUPS Z0, (DX); \
	VMOVUPS Z1, 64(DX); \
	VMOVUPS Z2, 128(DX); \
	VMOVUPS Z3, 192(DX); \
	VMOVUPS Z4, 256(DX); \
	VMOVUPS Z5, 320(DX); \
	VMOVUPS Z6, 384(DX); \
	VMOVUPS Z7, 448(DX); \
	VZEROUPPER; \
	RET

#define SMALL2X2(LOAD, PF, bytes) \
	SMALL_LOOP(LOAD, PF, bytes, GROUP2(Z16, Z0, Z1), GROUP2(Z17, Z2, Z3), 2); \
	VMOVUPS Z0, (DX); \
	VMOVUPS Z1, 64(DX); \
	VMOVUPS Z2, 128(DX); \
	VMOVUPS Z3, 192(DX); \
	VZEROUPPER; \
	RET

// func packedQ4x4x2VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)
TEXT ·packedQ4x4x2VNNI(SB), NOSPLIT, $0-56
	SMALL4X2(Q4_UNPACK_AT, PF_Q4, 288)

// func packedQ8x4x2VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)
TEXT ·packedQ8x4x2VNNI(SB), NOSPLIT, $0-56
	SMALL4X2(Q8_LOAD_AT, PF_Q8, 544)

// func packedQ4x2x2VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)
TEXT ·packedQ4x2x2VNNI(SB), NOSPLIT, $0-56
	SMALL2X2(Q4_UNPACK_AT, PF_Q4, 288)

// func packedQ8x2x2VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)
TEXT ·packedQ8x2x2VNNI(SB), NOSPLIT, $0-56
	SMALL2X2(Q8_LOAD_AT, PF_Q8, 544)
