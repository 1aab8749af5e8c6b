//go:build !noasm

#include "textflag.h"

// The quantized dot products of qdot_amd64.go, 8 blocks per iteration:
// each block's int8 products are summed into 8 int32 lanes, the 8 blocks'
// lanes are reduced to the 8 exact block sums (vphaddd tree), converted to
// float32 and multiplied by the 8 blocks' da·dx (the f16 scales gathered
// with vpgatherdd and converted with vcvtph2ps), then added to 8 float32
// lanes. Registers kept across the loop:
//
//	Y15 the float32 sums      Y14 int16 ones (vpmaddwd)
//	Y13 q8_0 scale offsets    Y12 dword mask 0xffff
//	Y11 byte mask 0x0f        Y10 bytes 8          Y4 q4_0 scale offsets

DATA qdotQ8Off<>+0(SB)/4, $0
DATA qdotQ8Off<>+4(SB)/4, $34
DATA qdotQ8Off<>+8(SB)/4, $68
DATA qdotQ8Off<>+12(SB)/4, $102
DATA qdotQ8Off<>+16(SB)/4, $136
DATA qdotQ8Off<>+20(SB)/4, $170
DATA qdotQ8Off<>+24(SB)/4, $204
DATA qdotQ8Off<>+28(SB)/4, $238
GLOBL qdotQ8Off<>(SB), RODATA|NOPTR, $32

DATA qdotQ4Off<>+0(SB)/4, $0
DATA qdotQ4Off<>+4(SB)/4, $18
DATA qdotQ4Off<>+8(SB)/4, $36
DATA qdotQ4Off<>+12(SB)/4, $54
DATA qdotQ4Off<>+16(SB)/4, $72
DATA qdotQ4Off<>+20(SB)/4, $90
DATA qdotQ4Off<>+24(SB)/4, $108
DATA qdotQ4Off<>+28(SB)/4, $126
GLOBL qdotQ4Off<>(SB), RODATA|NOPTR, $32

// QDOT_SETUP loads the arguments and the constants.
#define QDOT_SETUP \
	MOVQ a_base+0(FP), SI; \
	MOVQ x_base+24(FP), DI; \
	MOVQ nb+48(FP), CX; \
	SHRQ $3, CX; \
	VXORPS Y15, Y15, Y15; \
	VPCMPEQW Y14, Y14, Y14; \
	VPSRLW $15, Y14, Y14; \
	VMOVDQU qdotQ8Off<>(SB), Y13; \
	VMOVDQU qdotQ4Off<>(SB), Y4; \
	VPCMPEQD Y12, Y12, Y12; \
	VPSRLD $16, Y12, Y12; \
	MOVL $0x0f0f0f0f, AX; \
	VMOVD AX, X11; \
	VPBROADCASTD X11, Y11; \
	MOVL $0x08080808, AX; \
	VMOVD AX, X10; \
	VPBROADCASTD X10, Y10

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
#define Q4_UNPACK(aoff) \
	VMOVDQU aoff(SI), X5; \
	VPSRLW $4, X5, X6; \
	VINSERTI128 $1, X6, Y5, Y5; \
	VPAND Y11, Y5, Y5; \
	VPSUBB Y10, Y5, Y5

#define Q4_AVX2(aoff, xoff, dst) \
	Q4_UNPACK(aoff); \
	VMOVDQU xoff(DI), Y6; \
	VPABSB Y5, Y7; \
	VPSIGNB Y5, Y6, Y6; \
	VPMADDUBSW Y6, Y7, dst; \
	VPMADDWD Y14, dst, dst

#define Q4_VNNI(aoff, xoff, dst) \
	Q4_UNPACK(aoff); \
	VMOVDQU xoff(DI), Y6; \
	VPABSB Y5, Y7; \
	VPSIGNB Y5, Y6, Y6; \
	VPXOR dst, dst, dst; \
	VPDPBUSD Y6, Y7, dst

// QDOT_REDUCE4 folds the lane sums of four blocks in Y0..Y3 into u: per
// 128-bit half, element j is that half's sum of block j.
#define QDOT_REDUCE4(u) \
	VPHADDD Y1, Y0, Y0; \
	VPHADDD Y3, Y2, Y2; \
	VPHADDD Y2, Y0, u

// QDOT_SCALE adds the 8 block sums of Y8 (halves) and Y9, times the 8
// blocks' da·dx, to Y15; aoff holds the offsets of a's scales.
#define QDOT_SCALE(aoff) \
	VPERM2I128 $0x20, Y9, Y8, Y0; \
	VPERM2I128 $0x31, Y9, Y8, Y1; \
	VPADDD Y1, Y0, Y8; \
	VCVTDQ2PS Y8, Y8; \
	VPCMPEQD Y1, Y1, Y1; \
	VPGATHERDD Y1, (SI)(aoff*1), Y2; \
	VPCMPEQD Y1, Y1, Y1; \
	VPGATHERDD Y1, (DI)(Y13*1), Y3; \
	VPAND Y12, Y2, Y2; \
	VPAND Y12, Y3, Y3; \
	VPACKUSDW Y3, Y2, Y2; \
	VPERMQ $0xd8, Y2, Y2; \
	VCVTPH2PS X2, Y3; \
	VEXTRACTI128 $1, Y2, X2; \
	VCVTPH2PS X2, Y2; \
	VMULPS Y2, Y3, Y3; \
	VMULPS Y3, Y8, Y8; \
	VADDPS Y8, Y15, Y15

// QDOT_HSUM sets X0 to the sum of Y15's lanes.
#define QDOT_HSUM \
	VEXTRACTF128 $1, Y15, X0; \
	VADDPS X0, X15, X0; \
	VHADDPS X0, X0, X0; \
	VHADDPS X0, X0, X0

// func dotQ8_0AVX2(a, x []byte, nb int) float32
TEXT ·dotQ8_0AVX2(SB), NOSPLIT, $0-60
	QDOT_SETUP
	TESTQ CX, CX
	JZ dotQ8_0AVX2_done
dotQ8_0AVX2_loop:
	Q8_AVX2(2, Y0)
	Q8_AVX2(36, Y1)
	Q8_AVX2(70, Y2)
	Q8_AVX2(104, Y3)
	QDOT_REDUCE4(Y8)
	Q8_AVX2(138, Y0)
	Q8_AVX2(172, Y1)
	Q8_AVX2(206, Y2)
	Q8_AVX2(240, Y3)
	QDOT_REDUCE4(Y9)
	QDOT_SCALE(Y13)
	ADDQ $272, SI
	ADDQ $272, DI
	DECQ CX
	JNZ dotQ8_0AVX2_loop
dotQ8_0AVX2_done:
	QDOT_HSUM
	MOVSS X0, ret+56(FP)
	VZEROUPPER
	RET

// func dotQ8_0VNNI(a, x []byte, nb int) float32
TEXT ·dotQ8_0VNNI(SB), NOSPLIT, $0-60
	QDOT_SETUP
	TESTQ CX, CX
	JZ dotQ8_0VNNI_done
dotQ8_0VNNI_loop:
	Q8_VNNI(2, Y0)
	Q8_VNNI(36, Y1)
	Q8_VNNI(70, Y2)
	Q8_VNNI(104, Y3)
	QDOT_REDUCE4(Y8)
	Q8_VNNI(138, Y0)
	Q8_VNNI(172, Y1)
	Q8_VNNI(206, Y2)
	Q8_VNNI(240, Y3)
	QDOT_REDUCE4(Y9)
	QDOT_SCALE(Y13)
	ADDQ $272, SI
	ADDQ $272, DI
	DECQ CX
	JNZ dotQ8_0VNNI_loop
dotQ8_0VNNI_done:
	QDOT_HSUM
	MOVSS X0, ret+56(FP)
	VZEROUPPER
	RET

// func dotQ4_0AVX2(a, x []byte, nb int) float32
TEXT ·dotQ4_0AVX2(SB), NOSPLIT, $0-60
	QDOT_SETUP
	TESTQ CX, CX
	JZ dotQ4_0AVX2_done
dotQ4_0AVX2_loop:
	Q4_AVX2(2, 2, Y0)
	Q4_AVX2(20, 36, Y1)
	Q4_AVX2(38, 70, Y2)
	Q4_AVX2(56, 104, Y3)
	QDOT_REDUCE4(Y8)
	Q4_AVX2(74, 138, Y0)
	Q4_AVX2(92, 172, Y1)
	Q4_AVX2(110, 206, Y2)
	Q4_AVX2(128, 240, Y3)
	QDOT_REDUCE4(Y9)
	QDOT_SCALE(Y4)
	ADDQ $144, SI
	ADDQ $272, DI
	DECQ CX
	JNZ dotQ4_0AVX2_loop
dotQ4_0AVX2_done:
	QDOT_HSUM
	MOVSS X0, ret+56(FP)
	VZEROUPPER
	RET

// func dotQ4_0VNNI(a, x []byte, nb int) float32
TEXT ·dotQ4_0VNNI(SB), NOSPLIT, $0-60
	QDOT_SETUP
	TESTQ CX, CX
	JZ dotQ4_0VNNI_done
dotQ4_0VNNI_loop:
	Q4_VNNI(2, 2, Y0)
	Q4_VNNI(20, 36, Y1)
	Q4_VNNI(38, 70, Y2)
	Q4_VNNI(56, 104, Y3)
	QDOT_REDUCE4(Y8)
	Q4_VNNI(74, 138, Y0)
	Q4_VNNI(92, 172, Y1)
	Q4_VNNI(110, 206, Y2)
	Q4_VNNI(128, 240, Y3)
	QDOT_REDUCE4(Y9)
	QDOT_SCALE(Y4)
	ADDQ $144, SI
	ADDQ $272, DI
	DECQ CX
	JNZ dotQ4_0VNNI_loop
dotQ4_0VNNI_done:
	QDOT_HSUM
	MOVSS X0, ret+56(FP)
	VZEROUPPER
	RET
