//go:build !noasm

#include "textflag.h"

// quantizeQ8_KAVX2 (q8k_amd64.go): quantizeQ8_KGo's bytes, a block of 256
// per iteration, with the Go loop's operations on each value so that NaN,
// ±Inf and an overflowing scale give its bytes too:
//
//   - amax and mx: the largest and the smallest x (vmaxps and vminps into
//     accumulators from 0, x the first source, so that a NaN, never
//     > amax in Go, leaves them); mx the one of larger magnitude. Only
//     when they tie (-m and m) is the first x of magnitude m looked for.
//   - iscale = -127/mx and d = 1/iscale by vdivss, as Go divides.
//   - the quants: nearestInt itself (vmulps, vaddps 1.5·2²³, the mantissa
//     less 2²²), not vcvtps2dq, which differs on NaN and ±Inf; then signed
//     saturating packs to int8, which are min(127, n) and byte(int8(n))
//     for every n a finite iscale gives (-127..127, or 0..2²²-1 from a
//     NaN). An infinite iscale (|mx| below about 3.7e-37) gives n = -2²²
//     for each finite x ≠ 0, byte 0 in Go; that block takes the slow
//     loop, min and a mask of the low byte.
//   - the bsums: in the fast loop the sums of the int8 quants, which are
//     the Go loop's n there; in the slow loop the low 16 bits of the int32
//     sums of n, as uint16(s) truncates.
//
// Registers kept across the blocks:
//
//	SI  x's block     DI  dst's block     CX  blocks left
//	Y9  vpermd's order                    Y10 bytes 1   Y11 words 1
//	Y12 0x400000      Y13 0x7fffff        Y14 1.5·2²³
//
// and, per block, Y8 iscale.

// Q8K_N32 sets the four vectors Y0–Y3 to nearestInt(iscale·x) as int32
// for the 32 values at xo(R8): Go's min and int8 not yet applied.
#define Q8K_N32(xo) \
	VMULPS xo(R8), Y8, Y0; \
	VMULPS xo+32(R8), Y8, Y1; \
	VMULPS xo+64(R8), Y8, Y2; \
	VMULPS xo+96(R8), Y8, Y3; \
	VADDPS Y14, Y0, Y0; \
	VADDPS Y14, Y1, Y1; \
	VADDPS Y14, Y2, Y2; \
	VADDPS Y14, Y3, Y3; \
	VPAND  Y13, Y0, Y0; \
	VPAND  Y13, Y1, Y1; \
	VPAND  Y13, Y2, Y2; \
	VPAND  Y13, Y3, Y3; \
	VPSUBD Y12, Y0, Y0; \
	VPSUBD Y12, Y1, Y1; \
	VPSUBD Y12, Y2, Y2; \
	VPSUBD Y12, Y3, Y3

// Q8K_FAST32 quantizes the 32 values at xo(R8) into the 32 bytes at
// qo(R9) and sets m to the sums of their groups of 4 quants (its low
// half sums to the first sub-block's bsum, its high half the second's).
// The packs leave dwords [a0-3 b0-3 c0-3 d0-3 | a4-7 b4-7 c4-7 d4-7] of
// Y0–Y3's bytes; vpermd orders them. It uses Y0–Y3.
#define Q8K_FAST32(xo, qo, m) \
	Q8K_N32(xo); \
	VPACKSSDW  Y1, Y0, Y0; \
	VPACKSSDW  Y3, Y2, Y2; \
	VPACKSSWB  Y2, Y0, Y0; \
	VPERMD     Y0, Y9, Y0; \
	VMOVDQU    Y0, qo(R9); \
	VPMADDUBSW Y0, Y10, Y0; \
	VPMADDWD   Y11, Y0, m

// Q8K_EXACT32 is Q8K_FAST32 as the Go loop computes it, for any iscale:
// min 127 (Y11), the low byte (Y10 0xff) packed unsigned, and h the
// vphaddd of the two sub-blocks' int32 sums. It uses Y0–Y5.
#define Q8K_EXACT32(xo, qo, h) \
	Q8K_N32(xo); \
	VPMINSD   Y11, Y0, Y0; \
	VPMINSD   Y11, Y1, Y1; \
	VPMINSD   Y11, Y2, Y2; \
	VPMINSD   Y11, Y3, Y3; \
	VPADDD    Y1, Y0, Y4; \
	VPADDD    Y3, Y2, Y5; \
	VPHADDD   Y5, Y4, h; \
	VPAND     Y10, Y0, Y0; \
	VPAND     Y10, Y1, Y1; \
	VPAND     Y10, Y2, Y2; \
	VPAND     Y10, Y3, Y3; \
	VPACKUSDW Y1, Y0, Y0; \
	VPACKUSDW Y3, Y2, Y2; \
	VPACKUSWB Y2, Y0, Y0; \
	VPERMD    Y0, Y9, Y0; \
	VMOVDQU   Y0, qo(R9)

// Q8K_FIND32 sets AX to the mask of the 32 values at xo(R8) whose |x| is
// Y0's (Y5: the sign bits). It uses Y1–Y4, BX, DX and R11.
#define Q8K_FIND32(xo) \
	VANDNPS   xo(R8), Y5, Y1; \
	VANDNPS   xo+32(R8), Y5, Y2; \
	VANDNPS   xo+64(R8), Y5, Y3; \
	VANDNPS   xo+96(R8), Y5, Y4; \
	VCMPPS    $0, Y0, Y1, Y1; \
	VCMPPS    $0, Y0, Y2, Y2; \
	VCMPPS    $0, Y0, Y3, Y3; \
	VCMPPS    $0, Y0, Y4, Y4; \
	VMOVMSKPS Y1, AX; \
	VMOVMSKPS Y2, BX; \
	VMOVMSKPS Y3, DX; \
	VMOVMSKPS Y4, R11; \
	SHLL      $8, BX; \
	SHLL      $16, DX; \
	SHLL      $24, R11; \
	ORL       BX, AX; \
	ORL       R11, DX; \
	ORL       DX, AX

// Q8K_LIMITS sets Y0–Y3 to the lanes' running max and Y4–Y7 to their
// running min of the 32 values at xo(R8), from their previous values.
#define Q8K_LIMITS(xo) \
	VMOVUPS xo(R8), Y15; \
	VMAXPS  Y0, Y15, Y0; \
	VMINPS  Y4, Y15, Y4; \
	VMOVUPS xo+32(R8), Y15; \
	VMAXPS  Y1, Y15, Y1; \
	VMINPS  Y5, Y15, Y5; \
	VMOVUPS xo+64(R8), Y15; \
	VMAXPS  Y2, Y15, Y2; \
	VMINPS  Y6, Y15, Y6; \
	VMOVUPS xo+96(R8), Y15; \
	VMAXPS  Y3, Y15, Y3; \
	VMINPS  Y7, Y15, Y7

// func quantizeQ8_KAVX2(dst []byte, x []float32)
TEXT ·quantizeQ8_KAVX2(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	SHRQ $8, CX
	JZ   done
	VPBROADCASTD q8kc<>+4(SB), Y14
	VPBROADCASTD q8kc<>+8(SB), Y13
	VPBROADCASTD q8kc<>+12(SB), Y12
	VPBROADCASTD q8kc<>+32(SB), Y11
	VPBROADCASTD q8kc<>+36(SB), Y10
	VMOVDQU      q8kperm<>(SB), Y9

block:
	// The largest and smallest x, 8 accumulators from 0.
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ   SI, R8
	MOVL   $4, R11

limits:
	Q8K_LIMITS(0)
	Q8K_LIMITS(128)
	ADDQ $256, R8
	DECL R11
	JNZ  limits

	// Y0 lanes 0-3: hi = max x; lanes 4-7: nl = -min x (both ≥ 0).
	VMAXPS       Y1, Y0, Y0
	VMAXPS       Y3, Y2, Y2
	VMAXPS       Y2, Y0, Y0
	VMINPS       Y5, Y4, Y4
	VMINPS       Y7, Y6, Y6
	VMINPS       Y6, Y4, Y4
	VBROADCASTSS q8kc<>+0(SB), Y5 // sign bits
	VXORPS       Y5, Y4, Y4
	VPERM2F128   $0x20, Y4, Y0, Y1
	VPERM2F128   $0x31, Y4, Y0, Y2
	VMAXPS       Y2, Y1, Y0
	VPERMILPS    $0x4e, Y0, Y1
	VMAXPS       Y1, Y0, Y0
	VPERMILPS    $0xb1, Y0, Y1
	VMAXPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VUCOMISS     X1, X0
	JEQ          tie
	VMAXSS       X1, X0, X3 // amax
	VCMPSS       $1, X1, X0, X2 // hi < nl: mx is min x
	VANDPS       X5, X2, X2
	VXORPS       X2, X3, X1 // mx

scale:
	VMOVSS       q8kc<>+24(SB), X2 // -127
	VDIVSS       X1, X2, X2        // iscale
	VMOVSS       q8kc<>+28(SB), X3 // 1
	VDIVSS       X2, X3, X3        // d
	VMOVSS       X3, (DI)
	VBROADCASTSS X2, Y8
	VMOVD        X2, AX
	ANDL         $0x7fffffff, AX
	CMPL         AX, $0x7f800000
	JEQ          slow

	// The quants and bsums, 128 values (8 sub-blocks) per iteration.
	MOVQ SI, R8
	LEAQ 4(DI), R9
	LEAQ 260(DI), R10
	MOVL $2, R11

fast:
	Q8K_FAST32(0, 0, Y4)
	Q8K_FAST32(128, 32, Y5)
	Q8K_FAST32(256, 64, Y6)
	Q8K_FAST32(384, 96, Y7)
	VPHADDD      Y5, Y4, Y4
	VPHADDD      Y7, Y6, Y6
	VPHADDD      Y6, Y4, Y4     // sub-blocks 0 2 4 6 | 1 3 5 7
	VEXTRACTI128 $1, Y4, X5
	VPUNPCKLDQ   X5, X4, X6
	VPUNPCKHDQ   X5, X4, X7
	VPACKSSDW    X7, X6, X6
	VMOVDQU      X6, (R10)
	ADDQ         $512, R8
	ADDQ         $128, R9
	ADDQ         $16, R10
	DECL         R11
	JNZ          fast

next:
	ADDQ $1024, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  block

done:
	VZEROUPPER
	RET

tie:
	// hi = nl: an all-zero block (±0 and NaN only), or m and -m both in
	// it: mx is the first of them.
	VMOVD X0, AX
	TESTL AX, AX
	JZ    zero
	VBROADCASTSS X0, Y0
	MOVQ  SI, R8

find:
	Q8K_FIND32(0)
	TESTL AX, AX
	JNZ   found
	ADDQ  $128, R8
	JMP   find

found:
	BSFL   AX, AX
	VMOVSS (R8)(AX*4), X1
	JMP    scale

zero:
	VPXOR   Y1, Y1, Y1
	VMOVDQU Y1, 0(DI)
	VMOVDQU Y1, 32(DI)
	VMOVDQU Y1, 64(DI)
	VMOVDQU Y1, 96(DI)
	VMOVDQU Y1, 128(DI)
	VMOVDQU Y1, 160(DI)
	VMOVDQU Y1, 192(DI)
	VMOVDQU Y1, 224(DI)
	VMOVDQU Y1, 256(DI)
	VMOVDQU X1, 276(DI)
	JMP     next

slow:
	// An infinite iscale: Q8K_EXACT32, 64 values per iteration, Y10 and
	// Y11 its constants meanwhile.
	VPBROADCASTD q8kc<>+20(SB), Y10
	VPBROADCASTD q8kc<>+16(SB), Y11
	MOVQ         SI, R8
	LEAQ         4(DI), R9
	LEAQ         260(DI), R10
	MOVL         $4, R11

exact:
	Q8K_EXACT32(0, 0, Y6)
	Q8K_EXACT32(128, 32, Y7)
	VPHADDD      Y7, Y6, Y6            // per lane the 4 sub-blocks' halves
	VEXTRACTI128 $1, Y6, X7
	VPADDD       X7, X6, X6
	VPSHUFB      q8kbsum<>(SB), X6, X6 // the low 16 bits of each
	VMOVQ        X6, (R10)
	ADDQ         $256, R8
	ADDQ         $64, R9
	ADDQ         $8, R10
	DECL         R11
	JNZ          exact
	VPBROADCASTD q8kc<>+32(SB), Y11
	VPBROADCASTD q8kc<>+36(SB), Y10
	JMP          next

// The sign bit, 1.5·2²³, nearestInt's mantissa mask and offset, 127,
// 0xff, -127, 1, and int16 and int8 ones.
DATA q8kc<>+0(SB)/4, $0x80000000
DATA q8kc<>+4(SB)/4, $0x4b400000
DATA q8kc<>+8(SB)/4, $0x007fffff
DATA q8kc<>+12(SB)/4, $0x00400000
DATA q8kc<>+16(SB)/4, $127
DATA q8kc<>+20(SB)/4, $0xff
DATA q8kc<>+24(SB)/4, $0xc2fe0000
DATA q8kc<>+28(SB)/4, $0x3f800000
DATA q8kc<>+32(SB)/4, $0x00010001
DATA q8kc<>+36(SB)/4, $0x01010101
GLOBL q8kc<>(SB), RODATA|NOPTR, $40

// vpermd's order for the packed bytes: dwords [a0-3 b0-3 c0-3 d0-3 |
// a4-7 b4-7 c4-7 d4-7] to a, b, c, d.
DATA q8kperm<>+0(SB)/4, $0
DATA q8kperm<>+4(SB)/4, $4
DATA q8kperm<>+8(SB)/4, $1
DATA q8kperm<>+12(SB)/4, $5
DATA q8kperm<>+16(SB)/4, $2
DATA q8kperm<>+20(SB)/4, $6
DATA q8kperm<>+24(SB)/4, $3
DATA q8kperm<>+28(SB)/4, $7
GLOBL q8kperm<>(SB), RODATA|NOPTR, $32

// vpshufb's order: the low 16 bits of 4 int32 into the low 8 bytes.
DATA q8kbsum<>+0(SB)/8, $0x0d0c090805040100
DATA q8kbsum<>+8(SB)/8, $0x8080808080808080
GLOBL q8kbsum<>(SB), RODATA|NOPTR, $16
