//go:build !noasm

#include "textflag.h"

// The packed kernels (packed_amd64.go; layout in pack.go). Registers:
//
//	SI the group's block (scales at 0, quant chunks from 32)
//	DI the panel's block: column j's quants at 32j
//	R8, R9 the panel's block scales (float32) and negated offset shares
//	       (int32), which start each block's integer sums
//	CX blocks left, DX the tile
//	Z31 bytes 0x0f
//
// The weight chunks of a block, unpacked to unsigned bytes, sit in the
// registers W0..W7 in the order of the column's quant dwords: W_i times
// the column's dword i (bytes 4i..4i+3).

#define PACKED_SETUP \
	MOVQ w+0(FP), SI; \
	MOVQ xq+8(FP), DI; \
	MOVQ xd+16(FP), R8; \
	MOVQ xc+24(FP), R9; \
	MOVQ nb+32(FP), CX; \
	MOVQ tile+40(FP), DX; \
	MOVL $0x0f0f0f0f, AX; \
	VPBROADCASTD AX, Z31

// QUANT_SETUP loads the quantizers' arguments (see quantizeColumnAVX512).
#define QUANT_SETUP \
	MOVQ row+0(FP), SI; \
	MOVQ nb+8(FP), R13; \
	MOVQ xq+16(FP), DI; \
	MOVQ qs+24(FP), R10; \
	MOVQ xd+32(FP), R8; \
	MOVQ xc+40(FP), R9; \
	MOVQ ss+48(FP), R11; \
	MOVQ shift+56(FP), CX

// QUANT_STORE stores the block's share (its quant sum in X6, shifted by
// CL and negated) and scale (X4 through f16), and steps to the next block.
#define QUANT_STORE \
	VMOVD X6, AX; \
	SHLL CL, AX; \
	NEGL AX; \
	MOVL AX, (R9); \
	VCVTPS2PH $0, X4, X10; \
	VCVTPH2PS X10, X10; \
	VMOVSS X10, (R8); \
	ADDQ $128, SI; \
	ADDQ R10, DI; \
	ADDQ R11, R8; \
	ADDQ R11, R9

// Q4_UNPACK sets W0..W7 to the q4_0 group block's chunks at base: low
// nibbles of chunks 0..3 (the column's dwords 0..3), then their high
// nibbles (dwords 4..7). Q4_UNPACK8 is it for SI into Z8..Z15.
#define Q4_UNPACK(base, W0, W1, W2, W3, W4, W5, W6, W7) \
	VMOVDQU32 32(base), W0; \
	VMOVDQU32 96(base), W1; \
	VMOVDQU32 160(base), W2; \
	VMOVDQU32 224(base), W3; \
	VPSRLW $4, W0, W4; \
	VPSRLW $4, W1, W5; \
	VPSRLW $4, W2, W6; \
	VPSRLW $4, W3, W7; \
	VPANDD Z31, W0, W0; \
	VPANDD Z31, W1, W1; \
	VPANDD Z31, W2, W2; \
	VPANDD Z31, W3, W3; \
	VPANDD Z31, W4, W4; \
	VPANDD Z31, W5, W5; \
	VPANDD Z31, W6, W6; \
	VPANDD Z31, W7, W7

#define Q4_UNPACK8 Q4_UNPACK(SI, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)

// Q8_LOAD sets W0..W7 to the q8_0 group block's eight chunks at base.
#define Q8_LOAD(base, W0, W1, W2, W3, W4, W5, W6, W7) \
	VMOVDQU32 32(base), W0; \
	VMOVDQU32 96(base), W1; \
	VMOVDQU32 160(base), W2; \
	VMOVDQU32 224(base), W3; \
	VMOVDQU32 288(base), W4; \
	VMOVDQU32 352(base), W5; \
	VMOVDQU32 416(base), W6; \
	VMOVDQU32 480(base), W7

#define Q8_LOAD8 Q8_LOAD(SI, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)

// COLUMN adds column j's block term to acc: the integer sums of Z8..Z15
// against the column's quants at x(DI), from the negated offset share at
// s(R9) (a broadcast load: no zeroing, no subtraction), converted, times
// the rows' scales (Z16) times the column's scale at s(R8). S is scratch.
#define COLUMN(x, s, acc, T, S) \
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
	VMULPS.BCST s(R8), Z16, S; \
	VFMADD231PS S, T, acc

// DOT2 is COLUMN with the sums in two chains (T and U), for one column
// where no other column's work hides vpdpbusd's latency, and the block's
// weights in W0..W7, its rows' scales in SC.
#define DOT2(x, s, acc, T, U, S, SC, W0, W1, W2, W3, W4, W5, W6, W7) \
	VPBROADCASTD s(R9), T; \
	VPXORD U, U, U; \
	VPDPBUSD.BCST (x+0)(DI), W0, T; \
	VPDPBUSD.BCST (x+16)(DI), W4, U; \
	VPDPBUSD.BCST (x+4)(DI), W1, T; \
	VPDPBUSD.BCST (x+20)(DI), W5, U; \
	VPDPBUSD.BCST (x+8)(DI), W2, T; \
	VPDPBUSD.BCST (x+24)(DI), W6, U; \
	VPDPBUSD.BCST (x+12)(DI), W3, T; \
	VPDPBUSD.BCST (x+28)(DI), W7, U; \
	VPADDD U, T, T; \
	VCVTDQ2PS T, T; \
	VMULPS.BCST s(R8), SC, S; \
	VFMADD231PS S, T, acc

// PANEL8 is a kernel over eight columns, LOAD the block's unpacking and
// bytes its size.
#define PANEL8(LOAD, bytes) \
	PACKED_SETUP; \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7; \
loop:; \
	VCVTPH2PS (SI), Z16; \
	LOAD; \
	COLUMN(0, 0, Z0, Z18, Z26); \
	COLUMN(32, 4, Z1, Z19, Z27); \
	COLUMN(64, 8, Z2, Z20, Z28); \
	COLUMN(96, 12, Z3, Z21, Z29); \
	COLUMN(128, 16, Z4, Z22, Z26); \
	COLUMN(160, 20, Z5, Z23, Z27); \
	COLUMN(192, 24, Z6, Z24, Z28); \
	COLUMN(224, 28, Z7, Z25, Z29); \
	ADDQ $bytes, SI; \
	ADDQ $256, DI; \
	ADDQ $32, R8; \
	ADDQ $32, R9; \
	DECQ CX; \
	JNZ loop; \
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

// PANEL4 is PANEL8 over four columns, for batches of two to four tokens
// (a sequence's few tokens, or a few sequences decoded together): half the
// work of padding them to eight. Like VECTOR, its weights stream from
// memory, so it prefetches them (PREFETCH, at R10 ahead); and each column
// sums in two chains (DOT2), as four columns' chains alone would leave
// vpdpbusd's latency exposed.
#define PANEL4(LOAD, PREFETCH, bytes) \
	PACKED_SETUP; \
	MOVQ ·streamAhead(SB), R10; \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
loop:; \
	PREFETCH; \
	VCVTPH2PS (SI), Z16; \
	LOAD; \
	DOT2(0, 0, Z0, Z18, Z22, Z26, Z16, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15); \
	DOT2(32, 4, Z1, Z19, Z23, Z27, Z16, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15); \
	DOT2(64, 8, Z2, Z20, Z24, Z28, Z16, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15); \
	DOT2(96, 12, Z3, Z21, Z25, Z29, Z16, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15); \
	ADDQ $bytes, SI; \
	ADDQ $128, DI; \
	ADDQ $16, R8; \
	ADDQ $16, R9; \
	DECQ CX; \
	JNZ loop; \
	VMOVUPS Z0, (DX); \
	VMOVUPS Z1, 64(DX); \
	VMOVUPS Z2, 128(DX); \
	VMOVUPS Z3, 192(DX); \
	VZEROUPPER; \
	RET

// VECTOR is a kernel over one column: the weights stream from memory, so
// it prefetches them into L2 ·streamAhead bytes ahead (in R10; five lines
// cover a q4_0 block, nine a q8_0 one; the PREFETCH list is the type's).
#define VECTOR(LOAD, PREFETCH, bytes) \
	PACKED_SETUP; \
	MOVQ ·streamAhead(SB), R10; \
	VPXORD Z0, Z0, Z0; \
loop:; \
	PREFETCH; \
	VCVTPH2PS (SI), Z16; \
	LOAD; \
	DOT2(0, 0, Z0, Z18, Z19, Z26, Z16, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15); \
	ADDQ $bytes, SI; \
	ADDQ $32, DI; \
	ADDQ $4, R8; \
	ADDQ $4, R9; \
	DECQ CX; \
	JNZ loop; \
	VMOVUPS Z0, (DX); \
	VZEROUPPER; \
	RET

// VECTOR2 is VECTOR over two row groups at once, the second at BX (its
// tile at 64(DX)): two streams from memory, half a chunk apart, keep more
// misses in flight than one (a plain read of two distant streams measured
// 7–9% above one stream on one thread; on the 1B q4_0 model, 2-thread
// generation went from 2.6 to 2.3 s for 64 tokens).
// LOAD takes the base register and eight weight registers, PREFETCH the
// base register.
#define VECTOR2(LOAD, PREFETCH, bytes) \
	PACKED_SETUP; \
	MOVQ w2+48(FP), BX; \
	MOVQ ·streamAhead(SB), R10; \
	PREFETCH_HEAD(SI); \
	PREFETCH_HEAD(BX); \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
loop:; \
	PREFETCH(SI); \
	PREFETCH(BX); \
	VCVTPH2PS (SI), Z16; \
	VCVTPH2PS (BX), Z17; \
	LOAD(SI, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15); \
	LOAD(BX, Z20, Z21, Z22, Z23, Z24, Z25, Z28, Z29); \
	DOT2(0, 0, Z0, Z18, Z19, Z26, Z16, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15); \
	DOT2(0, 0, Z1, Z2, Z3, Z4, Z17, Z20, Z21, Z22, Z23, Z24, Z25, Z28, Z29); \
	ADDQ $bytes, SI; \
	ADDQ $bytes, BX; \
	ADDQ $32, DI; \
	ADDQ $4, R8; \
	ADDQ $4, R9; \
	DECQ CX; \
	JNZ loop; \
	VMOVUPS Z0, (DX); \
	VMOVUPS Z1, 64(DX); \
	VZEROUPPER; \
	RET

// PREFETCH_HEAD asks for the first 2 KiB a one-column kernel reads, at
// least as far as its own prefetches run ahead (streamAhead, at most 2 KiB):
// the start of a stream, where a thread takes a new chunk.
#define PREFETCH_HEAD(base) \
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
	PREFETCHT1 1472(base); \
	PREFETCHT1 1536(base); \
	PREFETCHT1 1600(base); \
	PREFETCHT1 1664(base); \
	PREFETCHT1 1728(base); \
	PREFETCHT1 1792(base); \
	PREFETCHT1 1856(base); \
	PREFETCHT1 1920(base); \
	PREFETCHT1 1984(base)

#define PREFETCH_Q4 PREFETCH_Q4_AT(SI)
#define PREFETCH_Q8 PREFETCH_Q8_AT(SI)

#define PREFETCH_Q4_AT(base) \
	PREFETCHT1 0(base)(R10*1); \
	PREFETCHT1 64(base)(R10*1); \
	PREFETCHT1 128(base)(R10*1); \
	PREFETCHT1 192(base)(R10*1); \
	PREFETCHT1 256(base)(R10*1)

#define PREFETCH_Q8_AT(base) \
	PREFETCHT1 0(base)(R10*1); \
	PREFETCHT1 64(base)(R10*1); \
	PREFETCHT1 128(base)(R10*1); \
	PREFETCHT1 192(base)(R10*1); \
	PREFETCHT1 256(base)(R10*1); \
	PREFETCHT1 320(base)(R10*1); \
	PREFETCHT1 384(base)(R10*1); \
	PREFETCHT1 448(base)(R10*1); \
	PREFETCHT1 512(base)(R10*1)

// func packedQ4x1VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)
TEXT ·packedQ4x1VNNI(SB), NOSPLIT, $0-48
	VECTOR(Q4_UNPACK8, PREFETCH_Q4, 288)

// func packedQ4x8VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)
TEXT ·packedQ4x8VNNI(SB), NOSPLIT, $0-48
	PANEL8(Q4_UNPACK8, 288)

// func packedQ4x4VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)
TEXT ·packedQ4x4VNNI(SB), NOSPLIT, $0-48
	PANEL4(Q4_UNPACK8, PREFETCH_Q4, 288)

// func packedQ8x4VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)
TEXT ·packedQ8x4VNNI(SB), NOSPLIT, $0-48
	PANEL4(Q8_LOAD8, PREFETCH_Q8, 544)

// func packedQ8x1VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)
TEXT ·packedQ8x1VNNI(SB), NOSPLIT, $0-48
	VECTOR(Q8_LOAD8, PREFETCH_Q8, 544)

// func packedQ8x8VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)
TEXT ·packedQ8x8VNNI(SB), NOSPLIT, $0-48
	PANEL8(Q8_LOAD8, 544)

// func quantizeColumnAVX512(row *float32, nb int, xq *byte, qs int, xd *float32, xc *int32, ss int, shift int)
//
// quantizeQ8_0Go's arithmetic per block of 32: amax, d = amax/127 and
// id = 127/amax (0 when d is), the values times id rounded half to even
// (vcvtps2dq under Go's default rounding mode), d rounded to f16 and back
// (vcvtps2ph $0: to nearest even, as runtime.F32ToF16) — then the quants'
// sum shifted left by shift, negated. Block b's quants go to xq+b·qs, its
// scale and share to xd+b·ss and xc+b·ss.
TEXT ·quantizeColumnAVX512(SB), NOSPLIT, $0-64
	QUANT_SETUP
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z31
	MOVL $0x42fe0000, AX // 127.0
	VMOVD AX, X30
	VXORPS X29, X29, X29
	TESTQ R13, R13
	JZ qdone

qloop:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VPANDD Z31, Z0, Z2
	VPANDD Z31, Z1, Z3
	VMAXPS Z3, Z2, Z2
	VEXTRACTF32X8 $1, Z2, Y3
	VMAXPS Y3, Y2, Y2
	VEXTRACTF128 $1, Y2, X3
	VMAXPS X3, X2, X2
	VPERMILPS $0x4e, X2, X3
	VMAXPS X3, X2, X2
	VPERMILPS $0xb1, X2, X3
	VMAXPS X3, X2, X2
	VDIVSS X30, X2, X4
	VXORPS X5, X5, X5
	VUCOMISS X29, X4
	JEQ qscaled
	VDIVSS X2, X30, X5

qscaled:
	VBROADCASTSS X5, Z5
	VMULPS Z5, Z0, Z0
	VMULPS Z5, Z1, Z1
	VCVTPS2DQ Z0, Z0
	VCVTPS2DQ Z1, Z1
	VPMOVSDB Z0, X8
	VPMOVSDB Z1, X9
	VMOVDQU X8, (DI)
	VMOVDQU X9, 16(DI)
	VPADDD Z1, Z0, Z6
	VEXTRACTI32X8 $1, Z6, Y7
	VPADDD Y7, Y6, Y6
	VEXTRACTI128 $1, Y6, X7
	VPADDD X7, X6, X6
	VPSHUFD $0x4e, X6, X7
	VPADDD X7, X6, X6
	VPSHUFD $0xb1, X6, X7
	VPADDD X7, X6, X6
	QUANT_STORE
	DECQ R13
	JNZ qloop

qdone:
	VZEROUPPER
	RET

// quantPerm puts the dwords of vpacksswb's lane-interleaved result back in
// element order.
DATA quantPerm<>+0(SB)/4, $0
DATA quantPerm<>+4(SB)/4, $4
DATA quantPerm<>+8(SB)/4, $1
DATA quantPerm<>+12(SB)/4, $5
DATA quantPerm<>+16(SB)/4, $2
DATA quantPerm<>+20(SB)/4, $6
DATA quantPerm<>+24(SB)/4, $3
DATA quantPerm<>+28(SB)/4, $7
GLOBL quantPerm<>(SB), RODATA|NOPTR, $32

// func quantizeColumnAVX2(row *float32, nb int, xq *byte, qs int, xd *float32, xc *int32, ss int, shift int)
//
// quantizeColumnAVX512 with 256-bit vectors (X30/X29 are X14/X13 here).
TEXT ·quantizeColumnAVX2(SB), NOSPLIT, $0-64
	QUANT_SETUP
	MOVL $0x7fffffff, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x42fe0000, AX // 127.0
	VMOVD AX, X14
	VXORPS X13, X13, X13
	VMOVDQU quantPerm<>(SB), Y12
	TESTQ R13, R13
	JZ q2done

q2loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VANDPS Y15, Y0, Y4
	VANDPS Y15, Y1, Y5
	VMAXPS Y5, Y4, Y4
	VANDPS Y15, Y2, Y5
	VMAXPS Y5, Y4, Y4
	VANDPS Y15, Y3, Y5
	VMAXPS Y5, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS X5, X4, X8
	VPERMILPS $0x4e, X8, X5
	VMAXPS X5, X8, X8
	VPERMILPS $0xb1, X8, X5
	VMAXPS X5, X8, X8
	VDIVSS X14, X8, X4
	VXORPS X5, X5, X5
	VUCOMISS X13, X4
	JEQ q2scaled
	VDIVSS X8, X14, X5

q2scaled:
	VBROADCASTSS X5, Y5
	VMULPS Y5, Y0, Y0
	VMULPS Y5, Y1, Y1
	VMULPS Y5, Y2, Y2
	VMULPS Y5, Y3, Y3
	VCVTPS2DQ Y0, Y0
	VCVTPS2DQ Y1, Y1
	VCVTPS2DQ Y2, Y2
	VCVTPS2DQ Y3, Y3
	VPADDD Y1, Y0, Y6
	VPADDD Y3, Y2, Y7
	VPADDD Y7, Y6, Y6
	VEXTRACTI128 $1, Y6, X7
	VPADDD X7, X6, X6
	VPSHUFD $0x4e, X6, X7
	VPADDD X7, X6, X6
	VPSHUFD $0xb1, X6, X7
	VPADDD X7, X6, X6
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VPERMD Y0, Y12, Y0
	VMOVDQU Y0, (DI)
	QUANT_STORE
	DECQ R13
	JNZ q2loop

q2done:
	VZEROUPPER
	RET

// func packedQ4x1x2VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)
TEXT ·packedQ4x1x2VNNI(SB), NOSPLIT, $0-56
	VECTOR2(Q4_UNPACK, PREFETCH_Q4_AT, 288)

// func packedQ8x1x2VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32, w2 *byte)
TEXT ·packedQ8x1x2VNNI(SB), NOSPLIT, $0-56
	VECTOR2(Q8_LOAD, PREFETCH_Q8_AT, 544)
