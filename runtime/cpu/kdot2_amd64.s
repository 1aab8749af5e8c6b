//go:build !noasm

#include "textflag.h"

// The dot products of kdot2_amd64.go (q2_K, q3_K and iq4_xs weights
// against q8_K), many rows a call and a 256-element block per iteration
// as kdot_amd64.s's q4_K: the block's integer sums exact in int32 lanes
// (vpmaddubsw of the unsigned quants, or of |value| with x's signs, pairs
// in int16 without saturation, then vpmaddwd by the 16-element groups'
// scales, or AVX-512 VNNI's vpdpwssd), converted and scaled into float32
// lanes (q2_K's mins too) summed once per row: the Go loop's value to
// float32 rounding. Registers kept across the loop:
//
//	SI, DI  a's and x's block        CX  blocks left
//	Y15     the row's float32 lanes
//	R9-R13, DX, BX  the rows' loop (K2_ROWS)
//
// and, per block, Y4 and Y8 the int32 lanes of Σ scale·Σ q·x.

// K2_ROWS(setup, block, size) is a rows kernel: for each of rows rows of
// a (lda bytes apart) the blocks against x's, block the macro of one
// block of size bytes at SI (x's at DI) adding its value to Y15's lanes,
// their sum stored to dst (ldd floats apart). setup loads the constants,
// once a call.
#define K2_ROWS(setup, block, size) \
	setup; \
	MOVQ a_base+0(FP), R11; \
	MOVQ lda+24(FP), R13; \
	MOVQ x_base+32(FP), R10; \
	MOVQ nb+56(FP), R9; \
	MOVQ dst_base+64(FP), DX; \
	MOVQ ldd+88(FP), BX; \
	SHLQ $2, BX; \
	MOVQ rows+96(FP), R12; \
	TESTQ R12, R12; \
	JZ done; \
row:; \
	MOVQ R11, SI; \
	MOVQ R10, DI; \
	MOVQ R9, CX; \
	VXORPS Y15, Y15, Y15; \
	TESTQ CX, CX; \
	JZ store; \
loop:; \
	block; \
	ADDQ $size, SI; \
	ADDQ $292, DI; \
	DECQ CX; \
	JNZ loop; \
store:; \
	VEXTRACTF128 $1, Y15, X0; \
	VADDPS X0, X15, X15; \
	VPSHUFD $0x4e, X15, X0; \
	VADDPS X0, X15, X15; \
	VMOVSHDUP X15, X0; \
	VADDSS X0, X15, X15; \
	MOVSS X15, (DX); \
	ADDQ BX, DX; \
	ADDQ R13, R11; \
	DECQ R12; \
	JNZ row; \
done:; \
	VZEROUPPER; \
	RET

// K2_BYTES(c, y) sets y's bytes to c.
#define K2_BYTES(c, y) \
	MOVL $c, AX; \
	VMOVD AX, X8; \
	VPBROADCASTD X8, y

// The scaled sums into acc (Y4 and Y8 in turns, apart so that vpdpwssd's
// latency overlaps): vpmaddwd and vpaddd, or vpdpwssd.
#define MADD_AVX2(acc) \
	VPMADDWD Y7, Y6, Y6; \
	VPADDD Y6, acc, acc

#define MADD_VNNI(acc) VPDPWSSD Y7, Y6, acc

// K2_GROUP(xoff, s, MADD, acc): the 32 unsigned quants of elements
// 32s..32s+31 of a half in Y6 against x's at xoff(DI), with the scales of
// the half's groups 2s and 2s+1 (Y5: the half's 8 int16 scales in both
// 128-bit halves), into acc.
#define K2_GROUP(xoff, s, MADD, acc) \
	VPMADDUBSW (xoff)(DI), Y6, Y6; \
	VPSHUFB k2gshuf<>+(32*s)(SB), Y5, Y7; \
	MADD(acc)

// K2_ACCUM(doff) adds Y4's int32 lanes, as float32, times f16(d)·dx to
// Y15's lanes, d at doff(SI).
#define K2_ACCUM(doff) \
	VCVTDQ2PS Y4, Y4; \
	MOVWLZX (doff)(SI), AX; \
	VMOVD AX, X2; \
	VCVTPH2PS X2, X2; \
	VMULSS 0(DI), X2, X2; \
	VBROADCASTSS X2, Y2; \
	VFMADD231PS Y2, Y4, Y15

// q2_K (84 bytes: scales[16] (scale | min<<4), qs[64], d, dmin): quants
// (qs[32h+l] >> 2s) & 3 against x's element 128h+32s+l; Y13 bytes 0x03,
// Y14 bytes 0x0f.
#define Q2K_SUB(s, h, MADD, acc) \
	VPSRLW $(2*s), Y1, Y6; \
	VPAND Y13, Y6, Y6; \
	K2_GROUP(4+128*h+32*s, s, MADD, acc)

#define Q2K_HALF(h, perm, MADD) \
	VMOVDQU (16+32*h)(SI), Y1; \
	VPERMQ $perm, Y0, Y5; \
	Q2K_SUB(0, h, MADD, Y4); \
	Q2K_SUB(1, h, MADD, Y8); \
	Q2K_SUB(2, h, MADD, Y4); \
	Q2K_SUB(3, h, MADD, Y8)

#define Q2K_SETUP \
	K2_BYTES(0x03030303, Y13); \
	K2_BYTES(0x0f0f0f0f, Y14)

// Q2K_BLOCK: Y0 the 16 scales as int16, Y9 8 int32 lanes of Σ min·bsum;
// then Y15 += f16(d)·dx·isum − f16(dmin)·dx·msum, lane by lane.
#define Q2K_BLOCK(MADD) \
	VMOVDQU 0(SI), X1; \
	VPAND X14, X1, X0; \
	VPMOVZXBW X0, Y0; \
	VPSRLW $4, X1, X1; \
	VPAND X14, X1, X1; \
	VPMOVZXBW X1, Y1; \
	VPMADDWD 260(DI), Y1, Y9; \
	VPXOR Y4, Y4, Y4; \
	VPXOR Y8, Y8, Y8; \
	Q2K_HALF(0, 0x44, MADD); \
	Q2K_HALF(1, 0xee, MADD); \
	VPADDD Y8, Y4, Y4; \
	VCVTDQ2PS Y4, Y4; \
	VCVTDQ2PS Y9, Y9; \
	MOVL 80(SI), AX; \
	VMOVD AX, X2; \
	VCVTPH2PS X2, X2; \
	VMULSS 0(DI), X2, X3; \
	VMOVSHDUP X2, X2; \
	VMULSS 0(DI), X2, X2; \
	VBROADCASTSS X3, Y3; \
	VBROADCASTSS X2, Y2; \
	VFMADD231PS Y3, Y4, Y15; \
	VFNMADD231PS Y2, Y9, Y15

// func dotQ2_KRowsAVX2(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)
TEXT ·dotQ2_KRowsAVX2(SB), NOSPLIT, $0-104
	K2_ROWS(Q2K_SETUP, Q2K_BLOCK(MADD_AVX2), 84)

// func dotQ2_KRowsVNNI(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)
TEXT ·dotQ2_KRowsVNNI(SB), NOSPLIT, $0-104
	K2_ROWS(Q2K_SETUP, Q2K_BLOCK(MADD_VNNI), 84)

// q3_K (110 bytes: hmask[32], qs[64], scales[12], d): quants q' =
// (qs[32h+l] >> 2s) & 3 | (hmask[l] bit 4h+s) << 2, the Go loop's
// value plus 4, so isum = Σ scale·Σ q'·x − 4·Σ scale·bsum. Y13 bytes 0x03,
// Y11 bytes 0x04, Y12 int16 32s; hmask in Y3.
#define Q3K_HBIT_L(n) VPSLLW $n, Y3, Y7
#define Q3K_HBIT_R(n) VPSRLW $n, Y3, Y7
#define Q3K_HBIT_0 VMOVDQA Y3, Y7

#define Q3K_SUB(s, h, HBIT, MADD, acc) \
	VPSRLW $(2*s), Y1, Y6; \
	VPAND Y13, Y6, Y6; \
	HBIT; \
	VPAND Y11, Y7, Y7; \
	VPOR Y7, Y6, Y6; \
	K2_GROUP(4+128*h+32*s, s, MADD, acc)

// Q3K_SCALES decodes the 12 bytes of 6-bit scales at 96(SI) (the Go
// loop's aux: the low nibbles of its first 8 bytes, then their high
// nibbles, each with 2 bits of the last 4 bytes above) into Y0's 16
// int16 scales less 32, and Y9 to 8 int32 lanes of 4·Σ scale·bsum.
#define Q3K_SCALES \
	VMOVQ 96(SI), X0; \
	VPUNPCKLQDQ X0, X0, X0; \
	VPSRLVD k3scales<>+0(SB), X0, X0; \
	VPAND k3scales<>+32(SB), X0, X0; \
	VPBROADCASTD 104(SI), X1; \
	VPSRLVD k3scales<>+16(SB), X1, X1; \
	VPAND k3scales<>+48(SB), X1, X1; \
	VPSLLD $4, X1, X1; \
	VPOR X1, X0, X0; \
	VPMOVZXBW X0, Y0; \
	VPSUBW Y12, Y0, Y0; \
	VPMADDWD 260(DI), Y0, Y9; \
	VPSLLD $2, Y9, Y9

#define Q3K_SETUP \
	K2_BYTES(0x03030303, Y13); \
	K2_BYTES(0x04040404, Y11); \
	K2_BYTES(0x00200020, Y12)

#define Q3K_BLOCK(MADD) \
	Q3K_SCALES; \
	VMOVDQU 0(SI), Y3; \
	VPXOR Y4, Y4, Y4; \
	VPXOR Y8, Y8, Y8; \
	VMOVDQU 32(SI), Y1; \
	VPERMQ $0x44, Y0, Y5; \
	Q3K_SUB(0, 0, Q3K_HBIT_L(2), MADD, Y4); \
	Q3K_SUB(1, 0, Q3K_HBIT_L(1), MADD, Y8); \
	Q3K_SUB(2, 0, Q3K_HBIT_0, MADD, Y4); \
	Q3K_SUB(3, 0, Q3K_HBIT_R(1), MADD, Y8); \
	VMOVDQU 64(SI), Y1; \
	VPERMQ $0xee, Y0, Y5; \
	Q3K_SUB(0, 1, Q3K_HBIT_R(2), MADD, Y4); \
	Q3K_SUB(1, 1, Q3K_HBIT_R(3), MADD, Y8); \
	Q3K_SUB(2, 1, Q3K_HBIT_R(4), MADD, Y4); \
	Q3K_SUB(3, 1, Q3K_HBIT_R(5), MADD, Y8); \
	VPADDD Y8, Y4, Y4; \
	VPSUBD Y9, Y4, Y4; \
	K2_ACCUM(108)

// func dotQ3_KRowsAVX2(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)
TEXT ·dotQ3_KRowsAVX2(SB), NOSPLIT, $0-104
	K2_ROWS(Q3K_SETUP, Q3K_BLOCK(MADD_AVX2), 110)

// func dotQ3_KRowsVNNI(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)
TEXT ·dotQ3_KRowsVNNI(SB), NOSPLIT, $0-104
	K2_ROWS(Q3K_SETUP, Q3K_BLOCK(MADD_VNNI), 110)

// iq4_xs (136 bytes: d, scales_h u16, scales_l[4], qs[128]): sub-block j
// (elements 32j..32j+31) the low then the high nibbles of qs[16j:16j+16],
// looked up in kvalues_iq4nl (Y14), their products with x exact as long
// as x holds no -128 (quantize_row_q8_K never writes one); its scale
// ls_j − 32, the 8 of them decoded by variable shifts into Y0's words
// 0-7, in both 128-bit halves. Y13 bytes 0x0f.
#define XS_SCALES \
	VPBROADCASTD 4(SI), Y0; \
	VPSRLVD kxs<>+0(SB), Y0, Y0; \
	VPAND kxs<>+64(SB), Y0, Y0; \
	MOVWLZX 2(SI), AX; \
	VMOVD AX, X1; \
	VPBROADCASTD X1, Y1; \
	VPSRLVD kxs<>+32(SB), Y1, Y1; \
	VPAND kxs<>+96(SB), Y1, Y1; \
	VPSLLD $4, Y1, Y1; \
	VPOR Y1, Y0, Y0; \
	VPSUBD kxs<>+128(SB), Y0, Y0; \
	VPACKSSDW Y0, Y0, Y0; \
	VPERMQ $0x88, Y0, Y0

// XS_SUB(q, j, MADD, acc): sub-block j's nibbles in q, into acc.
#define XS_SUB(q, j, MADD, acc) \
	VPSHUFB q, Y14, q; \
	VPABSB q, Y5; \
	VMOVDQU (4+32*(j))(DI), Y6; \
	VPSIGNB q, Y6, Y6; \
	VPMADDUBSW Y6, Y5, Y6; \
	VPSHUFB k2wshuf<>+(32*(j))(SB), Y0, Y7; \
	MADD(acc)

// XS_PAIR(p, MADD): sub-blocks 2p and 2p+1, qs[32p:32p+32], into Y4 and Y8.
#define XS_PAIR(p, MADD) \
	VMOVDQU (8+32*p)(SI), Y1; \
	VPAND Y13, Y1, Y2; \
	VPSRLW $4, Y1, Y1; \
	VPAND Y13, Y1, Y1; \
	VPERM2I128 $0x20, Y1, Y2, Y3; \
	VPERM2I128 $0x31, Y1, Y2, Y1; \
	XS_SUB(Y3, 2*p, MADD, Y4); \
	XS_SUB(Y1, 2*p+1, MADD, Y8)

#define XS_SETUP \
	K2_BYTES(0x0f0f0f0f, Y13); \
	VBROADCASTI128 k2kvalues<>(SB), Y14

#define XS_BLOCK(MADD) \
	XS_SCALES; \
	VPXOR Y4, Y4, Y4; \
	VPXOR Y8, Y8, Y8; \
	XS_PAIR(0, MADD); \
	XS_PAIR(1, MADD); \
	XS_PAIR(2, MADD); \
	XS_PAIR(3, MADD); \
	VPADDD Y8, Y4, Y4; \
	K2_ACCUM(0)

// func dotIQ4_XSRowsAVX2(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)
TEXT ·dotIQ4_XSRowsAVX2(SB), NOSPLIT, $0-104
	K2_ROWS(XS_SETUP, XS_BLOCK(MADD_AVX2), 136)

// func dotIQ4_XSRowsVNNI(a []byte, lda int, x []byte, nb int, dst []float32, ldd, rows int)
TEXT ·dotIQ4_XSRowsVNNI(SB), NOSPLIT, $0-104
	K2_ROWS(XS_SETUP, XS_BLOCK(MADD_VNNI), 136)

// The constants: vpshufb masks picking one int16 scale into every word
// (k2gshuf: mask s, word 2s in the low 128-bit half and 2s+1 in the
// high; k2wshuf: mask j, word j in both), kvalues_iq4nl, and iq4_xs's
// and q3_K's scale decoding (k3scales: the shifts of the scale words'
// nibbles and of the high bits' word, the masks 0x0f and 0x03; kxs: the
// shifts of scales_l's nibbles and scales_h's bit pairs, the masks 15
// and 3, and 32).
DATA k2gshuf<>+0(SB)/8, $0x0100010001000100
DATA k2gshuf<>+8(SB)/8, $0x0100010001000100
DATA k2gshuf<>+16(SB)/8, $0x0302030203020302
DATA k2gshuf<>+24(SB)/8, $0x0302030203020302
DATA k2gshuf<>+32(SB)/8, $0x0504050405040504
DATA k2gshuf<>+40(SB)/8, $0x0504050405040504
DATA k2gshuf<>+48(SB)/8, $0x0706070607060706
DATA k2gshuf<>+56(SB)/8, $0x0706070607060706
DATA k2gshuf<>+64(SB)/8, $0x0908090809080908
DATA k2gshuf<>+72(SB)/8, $0x0908090809080908
DATA k2gshuf<>+80(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k2gshuf<>+88(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k2gshuf<>+96(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k2gshuf<>+104(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k2gshuf<>+112(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k2gshuf<>+120(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL k2gshuf<>(SB), RODATA|NOPTR, $128

DATA k2wshuf<>+0(SB)/8, $0x0100010001000100
DATA k2wshuf<>+8(SB)/8, $0x0100010001000100
DATA k2wshuf<>+16(SB)/8, $0x0100010001000100
DATA k2wshuf<>+24(SB)/8, $0x0100010001000100
DATA k2wshuf<>+32(SB)/8, $0x0302030203020302
DATA k2wshuf<>+40(SB)/8, $0x0302030203020302
DATA k2wshuf<>+48(SB)/8, $0x0302030203020302
DATA k2wshuf<>+56(SB)/8, $0x0302030203020302
DATA k2wshuf<>+64(SB)/8, $0x0504050405040504
DATA k2wshuf<>+72(SB)/8, $0x0504050405040504
DATA k2wshuf<>+80(SB)/8, $0x0504050405040504
DATA k2wshuf<>+88(SB)/8, $0x0504050405040504
DATA k2wshuf<>+96(SB)/8, $0x0706070607060706
DATA k2wshuf<>+104(SB)/8, $0x0706070607060706
DATA k2wshuf<>+112(SB)/8, $0x0706070607060706
DATA k2wshuf<>+120(SB)/8, $0x0706070607060706
DATA k2wshuf<>+128(SB)/8, $0x0908090809080908
DATA k2wshuf<>+136(SB)/8, $0x0908090809080908
DATA k2wshuf<>+144(SB)/8, $0x0908090809080908
DATA k2wshuf<>+152(SB)/8, $0x0908090809080908
DATA k2wshuf<>+160(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k2wshuf<>+168(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k2wshuf<>+176(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k2wshuf<>+184(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k2wshuf<>+192(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k2wshuf<>+200(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k2wshuf<>+208(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k2wshuf<>+216(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k2wshuf<>+224(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k2wshuf<>+232(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k2wshuf<>+240(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k2wshuf<>+248(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL k2wshuf<>(SB), RODATA|NOPTR, $256

DATA k2kvalues<>+0(SB)/8, $0xf6eaddcfbfad9881
DATA k2kvalues<>+8(SB)/8, $0x7159453526190d01
GLOBL k2kvalues<>(SB), RODATA|NOPTR, $16

DATA k3scales<>+0(SB)/8, $0x0000000000000000
DATA k3scales<>+8(SB)/8, $0x0000000400000004
DATA k3scales<>+16(SB)/8, $0x0000000200000000
DATA k3scales<>+24(SB)/8, $0x0000000600000004
DATA k3scales<>+32(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA k3scales<>+40(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA k3scales<>+48(SB)/8, $0x0303030303030303
DATA k3scales<>+56(SB)/8, $0x0303030303030303
GLOBL k3scales<>(SB), RODATA|NOPTR, $64

DATA kxs<>+0(SB)/8, $0x0000000400000000
DATA kxs<>+8(SB)/8, $0x0000000c00000008
DATA kxs<>+16(SB)/8, $0x0000001400000010
DATA kxs<>+24(SB)/8, $0x0000001c00000018
DATA kxs<>+32(SB)/8, $0x0000000200000000
DATA kxs<>+40(SB)/8, $0x0000000600000004
DATA kxs<>+48(SB)/8, $0x0000000a00000008
DATA kxs<>+56(SB)/8, $0x0000000e0000000c
DATA kxs<>+64(SB)/8, $0x0000000f0000000f
DATA kxs<>+72(SB)/8, $0x0000000f0000000f
DATA kxs<>+80(SB)/8, $0x0000000f0000000f
DATA kxs<>+88(SB)/8, $0x0000000f0000000f
DATA kxs<>+96(SB)/8, $0x0000000300000003
DATA kxs<>+104(SB)/8, $0x0000000300000003
DATA kxs<>+112(SB)/8, $0x0000000300000003
DATA kxs<>+120(SB)/8, $0x0000000300000003
DATA kxs<>+128(SB)/8, $0x0000002000000020
DATA kxs<>+136(SB)/8, $0x0000002000000020
DATA kxs<>+144(SB)/8, $0x0000002000000020
DATA kxs<>+152(SB)/8, $0x0000002000000020
GLOBL kxs<>(SB), RODATA|NOPTR, $160
