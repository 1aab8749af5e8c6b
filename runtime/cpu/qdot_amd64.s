//go:build !noasm

#include "textflag.h"

// The quantized dot products of qdot_amd64.go, 8 blocks per iteration:
// each block's int8 products are summed into 8 int32 lanes, the 8 blocks'
// lanes are reduced to the 8 exact block sums (vphaddd tree), converted to
// float32 and multiplied by the 8 blocks' da·dx (a's f16 scales inserted
// with vpinsrw and converted with vcvtph2ps; x's come as float32, xd),
// then added to 8 float32 lanes. Registers kept across the loop:
//
//	Y15 the float32 sums      Y14 int16 ones (vpmaddwd)
//	Y11 bytes 0x0f
//	SI, DI, R8 (R9): a, x and xd (xs) at the group's first block

// QDOT_SETUP loads the arguments and the constants; nbarg is nb's offset
// in the frame.
#define QDOT_SETUP(nbarg) \
	MOVQ a_base+0(FP), SI; \
	MOVQ x_base+24(FP), DI; \
	MOVQ xd_base+48(FP), R8; \
	MOVQ nbarg(FP), CX; \
	SHRQ $3, CX; \
	VXORPS Y15, Y15, Y15; \
	VPCMPEQW Y14, Y14, Y14; \
	VPSRLW $15, Y14, Y14; \
	MOVL $0x0f0f0f0f, AX; \
	VMOVD AX, X11; \
	VPBROADCASTD X11, Y11

// Q8_AVX2 sets dst to the 8 int32 lane sums of the q8_0 blocks at off-2.
#define Q8_AVX2(off, dst) \
	VMOVDQU off(SI), Y5; \
	VMOVDQU off(DI), Y6; \
	VPABSB Y5, Y7; \
	VPSIGNB Y5, Y6, Y6; \
	VPMADDUBSW Y6, Y7, dst; \
	VPMADDWD Y14, dst, dst

#define Q8_VNNI(off, dst) \
	VMOVDQU off(SI), Y5; \
	VMOVDQU off(DI), Y6; \
	VPABSB Y5, Y7; \
	VPSIGNB Y5, Y6, Y6; \
	VPXOR dst, dst, dst; \
	VPDPBUSD Y6, Y7, dst

// Q4_AVX2: the q4_0 block whose quants are at aoff(SI) with the q8_0 block
// whose quants are at xoff(DI).
// Q4_UNPACK sets Y5 to the q4_0 block's 32 nibbles at aoff(SI) as
// unsigned bytes, low nibbles first.
#define Q4_UNPACK(aoff) \
	VMOVDQU aoff(SI), X5; \
	VPSRLW $4, X5, X6; \
	VINSERTI128 $1, X6, Y5, Y5; \
	VPAND Y11, Y5, Y5

// Q4_AVX2 sets dst to the 8 int32 lane sums of Σ nibble·x for the q4_0
// block whose quants are at aoff(SI) and the q8_0 block whose quants are at
// xoff(DI): unsigned nibbles times signed bytes, pairs summed in int16
// without saturation (2·15·128 < 2¹⁵). The −8·Σx comes with Q4_SUMS.
#define Q4_AVX2(aoff, xoff, dst) \
	Q4_UNPACK(aoff); \
	VMOVDQU xoff(DI), Y6; \
	VPMADDUBSW Y6, Y5, dst; \
	VPMADDWD Y14, dst, dst

#define Q4_VNNI(aoff, xoff, dst) \
	Q4_UNPACK(aoff); \
	VPXOR dst, dst, dst; \
	VPDPBUSD xoff(DI), Y5, dst

// QDOT_REDUCE4 folds the lane sums of four blocks in Y0..Y3 into u: per
// 128-bit half, element j is that half's sum of block j.
#define QDOT_REDUCE4(u) \
	VPHADDD Y1, Y0, Y0; \
	VPHADDD Y3, Y2, Y2; \
	VPHADDD Y2, Y0, u

// QDOT_SUMS sets Y8 to the 8 block sums: Y8's and Y9's halves added.
#define QDOT_SUMS \
	VPERM2I128 $0x20, Y9, Y8, Y0; \
	VPERM2I128 $0x31, Y9, Y8, Y1; \
	VPADDD Y1, Y0, Y8

// Q4_SUMS is QDOT_SUMS for q4_0, less 8·Σx of each block (x's quant sums
// at R9): Σ (nibble − 8)·x.
#define Q4_SUMS \
	QDOT_SUMS; \
	VMOVDQU (R9), Y2; \
	VPSLLD $3, Y2, Y2; \
	VPSUBD Y2, Y8, Y8

// QDOT_SCALE adds the 8 block sums of Y8 times the 8 blocks' da·dx to
// Y15: a's f16 scales at 0, st, .., 7·st off SI (st the weight block's
// size), x's float32 scales at R8.
#define QDOT_SCALE(st) \
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

// QDOT_HSUM sets X0 to the sum of Y15's lanes.
#define QDOT_HSUM \
	VEXTRACTF128 $1, Y15, X0; \
	VADDPS X0, X15, X0; \
	VHADDPS X0, X0, X0; \
	VHADDPS X0, X0, X0

// Q8_DOT(BLOCK) and Q4_DOT(BLOCK) are the bodies of the q8_0 and q4_0 dot
// products, BLOCK the per-block macro of the instruction set (Q8_AVX2,
// Q8_VNNI, Q4_AVX2, Q4_VNNI).
#define Q8_DOT(BLOCK) \
	QDOT_SETUP(nb+72); \
	TESTQ CX, CX; \
	JZ done; \
loop:; \
	BLOCK(2, Y0); \
	BLOCK(36, Y1); \
	BLOCK(70, Y2); \
	BLOCK(104, Y3); \
	QDOT_REDUCE4(Y8); \
	BLOCK(138, Y0); \
	BLOCK(172, Y1); \
	BLOCK(206, Y2); \
	BLOCK(240, Y3); \
	QDOT_REDUCE4(Y9); \
	QDOT_SUMS; \
	QDOT_SCALE(34); \
	ADDQ $272, SI; \
	ADDQ $272, DI; \
	ADDQ $32, R8; \
	DECQ CX; \
	JNZ loop; \
done:; \
	QDOT_HSUM; \
	MOVSS X0, ret+80(FP); \
	VZEROUPPER; \
	RET

#define Q4_DOT(BLOCK) \
	QDOT_SETUP(nb+96); \
	MOVQ xs_base+72(FP), R9; \
	TESTQ CX, CX; \
	JZ done; \
loop:; \
	BLOCK(2, 2, Y0); \
	BLOCK(20, 36, Y1); \
	BLOCK(38, 70, Y2); \
	BLOCK(56, 104, Y3); \
	QDOT_REDUCE4(Y8); \
	BLOCK(74, 138, Y0); \
	BLOCK(92, 172, Y1); \
	BLOCK(110, 206, Y2); \
	BLOCK(128, 240, Y3); \
	QDOT_REDUCE4(Y9); \
	Q4_SUMS; \
	QDOT_SCALE(18); \
	ADDQ $144, SI; \
	ADDQ $272, DI; \
	ADDQ $32, R8; \
	ADDQ $32, R9; \
	DECQ CX; \
	JNZ loop; \
done:; \
	QDOT_HSUM; \
	MOVSS X0, ret+104(FP); \
	VZEROUPPER; \
	RET

// func dotQ8_0AVX2(a, x []byte, xd []float32, nb int) float32
TEXT ·dotQ8_0AVX2(SB), NOSPLIT, $0-84
	Q8_DOT(Q8_AVX2)

// func dotQ8_0VNNI(a, x []byte, xd []float32, nb int) float32
TEXT ·dotQ8_0VNNI(SB), NOSPLIT, $0-84
	Q8_DOT(Q8_VNNI)

// func dotQ4_0AVX2(a, x []byte, xd []float32, xs []int32, nb int) float32
TEXT ·dotQ4_0AVX2(SB), NOSPLIT, $0-108
	Q4_DOT(Q4_AVX2)

// func dotQ4_0VNNI(a, x []byte, xd []float32, xs []int32, nb int) float32
TEXT ·dotQ4_0VNNI(SB), NOSPLIT, $0-108
	Q4_DOT(Q4_VNNI)
