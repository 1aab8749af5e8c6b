//go:build !noasm

#include "textflag.h"
#include "asm_amd64.h"

// NEXT_ROWS asks, into L2, for the line at byte off of each of the four
// rows after the four a dot4x1 kernel reads: R9 walks those rows as SI
// walks its own, R8 and R11 are one and three row strides (see
// dot4x1F16AVX512 for why).
#define NEXT_ROWS(off) \
	PREFETCHT1 off(R9); \
	PREFETCHT1 off(R9)(R8*1); \
	PREFETCHT1 off(R9)(R8*2); \
	PREFETCHT1 off(R9)(R11*1)

// SUM_Y0 adds Y0's eight lanes into X0's lowest (X1 is scratch): a
// one-row dot kernel's result.
#define SUM_Y0 \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS X1, X0, X0; \
	VHADDPS X0, X0, X0; \
	VHADDPS X0, X0, X0

// SUM_Z0 is SUM_Y0 for Z0's sixteen lanes.
#define SUM_Z0 \
	VEXTRACTF64X4 $1, Z0, Y1; \
	VADDPS Y1, Y0, Y0; \
	SUM_Y0

// The 4×4 dot blocks (dot4x4F32AVX512, dot4x4F16AVX512, dotPanelF32AVX512):
// rows i of a in Z0–Z3, four columns j of x at DI, DI+R10, DI+2·R10, DI+R11
// (bytes), the sums of row i · column j in Z(16+4i+j).

// FMA4X4 adds the products of the next 16 elements of each row and column.
#define FMA4X4 \
	VMOVUPS (DI), Z4; \
	VFMADD231PS Z4, Z0, Z16; \
	VFMADD231PS Z4, Z1, Z20; \
	VFMADD231PS Z4, Z2, Z24; \
	VFMADD231PS Z4, Z3, Z28; \
	VMOVUPS (DI)(R10*1), Z5; \
	VFMADD231PS Z5, Z0, Z17; \
	VFMADD231PS Z5, Z1, Z21; \
	VFMADD231PS Z5, Z2, Z25; \
	VFMADD231PS Z5, Z3, Z29; \
	VMOVUPS (DI)(R10*2), Z6; \
	VFMADD231PS Z6, Z0, Z18; \
	VFMADD231PS Z6, Z1, Z22; \
	VFMADD231PS Z6, Z2, Z26; \
	VFMADD231PS Z6, Z3, Z30; \
	VMOVUPS (DI)(R11*1), Z7; \
	VFMADD231PS Z7, Z0, Z19; \
	VFMADD231PS Z7, Z1, Z23; \
	VFMADD231PS Z7, Z2, Z27; \
	VFMADD231PS Z7, Z3, Z31

// FMA4X4_TAIL is FMA4X4 for the K1 lanes of the columns, the tail of the other
// rows (whose loads are masked too).
#define FMA4X4_TAIL \
	VMOVUPS.Z (DI), K1, Z4; \
	VFMADD231PS Z4, Z0, Z16; \
	VFMADD231PS Z4, Z1, Z20; \
	VFMADD231PS Z4, Z2, Z24; \
	VFMADD231PS Z4, Z3, Z28; \
	VMOVUPS.Z (DI)(R10*1), K1, Z5; \
	VFMADD231PS Z5, Z0, Z17; \
	VFMADD231PS Z5, Z1, Z21; \
	VFMADD231PS Z5, Z2, Z25; \
	VFMADD231PS Z5, Z3, Z29; \
	VMOVUPS.Z (DI)(R10*2), K1, Z6; \
	VFMADD231PS Z6, Z0, Z18; \
	VFMADD231PS Z6, Z1, Z22; \
	VFMADD231PS Z6, Z2, Z26; \
	VFMADD231PS Z6, Z3, Z30; \
	VMOVUPS.Z (DI)(R11*1), K1, Z7; \
	VFMADD231PS Z7, Z0, Z19; \
	VFMADD231PS Z7, Z1, Z23; \
	VFMADD231PS Z7, Z2, Z27; \
	VFMADD231PS Z7, Z3, Z31

// ZERO4X4 clears the sums Z16–Z31.
#define ZERO4X4 \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; \
	VPXORD Z21, Z21, Z21; \
	VPXORD Z22, Z22, Z22; \
	VPXORD Z23, Z23, Z23; \
	VPXORD Z24, Z24, Z24; \
	VPXORD Z25, Z25, Z25; \
	VPXORD Z26, Z26, Z26; \
	VPXORD Z27, Z27, Z27; \
	VPXORD Z28, Z28, Z28; \
	VPXORD Z29, Z29, Z29; \
	VPXORD Z30, Z30, Z30; \
	VPXORD Z31, Z31, Z31

// STORE4X4 writes REDUCE4X4's Z16 to the four columns of c (c and ldc in
// the frame of dot4x4F32AVX512 and dot4x4F16AVX512), column j from lanes
// 4j..4j+3. It uses DX, R8, R9 and X8.
#define STORE4X4 \
	MOVQ c_base+72(FP), DX; \
	MOVQ ldc+96(FP), R8; \
	SHLQ $2, R8; \
	LEAQ (R8)(R8*2), R9; \
	VMOVUPS X16, (DX); \
	VEXTRACTF32X4 $1, Z16, X8; \
	VMOVUPS X8, (DX)(R8*1); \
	VEXTRACTF32X4 $2, Z16, X8; \
	VMOVUPS X8, (DX)(R8*2); \
	VEXTRACTF32X4 $3, Z16, X8; \
	VMOVUPS X8, (DX)(R9*1)

// REDUCE4X4 sums each accumulator's lanes: Z16 lane 4j+i = row i · column j.
// It uses Z8 and Z9.
#define REDUCE4X4 \
	VSHUFF32X4 $0x44, Z17, Z16, Z8; \
	VSHUFF32X4 $0xEE, Z17, Z16, Z9; \
	VADDPS Z9, Z8, Z16; \
	VSHUFF32X4 $0x44, Z19, Z18, Z8; \
	VSHUFF32X4 $0xEE, Z19, Z18, Z9; \
	VADDPS Z9, Z8, Z17; \
	VSHUFF32X4 $0x44, Z21, Z20, Z8; \
	VSHUFF32X4 $0xEE, Z21, Z20, Z9; \
	VADDPS Z9, Z8, Z18; \
	VSHUFF32X4 $0x44, Z23, Z22, Z8; \
	VSHUFF32X4 $0xEE, Z23, Z22, Z9; \
	VADDPS Z9, Z8, Z19; \
	VSHUFF32X4 $0x44, Z25, Z24, Z8; \
	VSHUFF32X4 $0xEE, Z25, Z24, Z9; \
	VADDPS Z9, Z8, Z20; \
	VSHUFF32X4 $0x44, Z27, Z26, Z8; \
	VSHUFF32X4 $0xEE, Z27, Z26, Z9; \
	VADDPS Z9, Z8, Z21; \
	VSHUFF32X4 $0x44, Z29, Z28, Z8; \
	VSHUFF32X4 $0xEE, Z29, Z28, Z9; \
	VADDPS Z9, Z8, Z22; \
	VSHUFF32X4 $0x44, Z31, Z30, Z8; \
	VSHUFF32X4 $0xEE, Z31, Z30, Z9; \
	VADDPS Z9, Z8, Z23; \
	VSHUFF32X4 $0x88, Z17, Z16, Z8; \
	VSHUFF32X4 $0xDD, Z17, Z16, Z9; \
	VADDPS Z9, Z8, Z16; \
	VSHUFF32X4 $0x88, Z19, Z18, Z8; \
	VSHUFF32X4 $0xDD, Z19, Z18, Z9; \
	VADDPS Z9, Z8, Z17; \
	VSHUFF32X4 $0x88, Z21, Z20, Z8; \
	VSHUFF32X4 $0xDD, Z21, Z20, Z9; \
	VADDPS Z9, Z8, Z18; \
	VSHUFF32X4 $0x88, Z23, Z22, Z8; \
	VSHUFF32X4 $0xDD, Z23, Z22, Z9; \
	VADDPS Z9, Z8, Z19; \
	VSHUFPS $0x88, Z17, Z16, Z8; \
	VSHUFPS $0xDD, Z17, Z16, Z9; \
	VADDPS Z9, Z8, Z16; \
	VSHUFPS $0x88, Z19, Z18, Z8; \
	VSHUFPS $0xDD, Z19, Z18, Z9; \
	VADDPS Z9, Z8, Z17; \
	VSHUFPS $0x88, Z17, Z16, Z8; \
	VSHUFPS $0xDD, Z17, Z16, Z9; \
	VADDPS Z9, Z8, Z16

// func dotF32AVX512(a []float32, x []float32) float32
TEXT ·dotF32AVX512(SB), NOSPLIT, $0-52
	MOVQ a_base+0(FP), SI    // SI = &a[0]
	MOVQ x_base+24(FP), DI   // DI = &x[0]
	MOVQ x_len+32(FP), CX    // CX = len(x)
	TAIL16
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ CX, BX
	SHRQ $2, BX              // BX = groups of 4 blocks
	ANDQ $3, CX              // CX = blocks left
	TESTQ BX, BX
	JZ dotF32AVX512_one
dotF32AVX512_four:
	VMOVUPS 0(SI), Z4
	VFMADD231PS 0(DI), Z4, Z0
	VMOVUPS 64(SI), Z5
	VFMADD231PS 64(DI), Z5, Z1
	VMOVUPS 128(SI), Z6
	VFMADD231PS 128(DI), Z6, Z2
	VMOVUPS 192(SI), Z7
	VFMADD231PS 192(DI), Z7, Z3
	ADDQ $256, SI
	ADDQ $256, DI
	DECQ BX
	JNZ dotF32AVX512_four
dotF32AVX512_one:
	TESTQ CX, CX
	JZ dotF32AVX512_tail
dotF32AVX512_oneloop:
	VMOVUPS (SI), Z4
	VFMADD231PS (DI), Z4, Z0
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ dotF32AVX512_oneloop
dotF32AVX512_tail:
	VMOVUPS.Z (SI), K1, Z4
	VMOVUPS.Z (DI), K1, Z5
	VFMADD231PS Z5, Z4, Z1
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	SUM_Z0
	MOVSS X0, ret+48(FP)
	VZEROUPPER
	RET

// func dotF16AVX512(a []uint16, x []float32) float32
TEXT ·dotF16AVX512(SB), NOSPLIT, $0-52
	MOVQ a_base+0(FP), SI    // SI = &a[0]
	MOVQ x_base+24(FP), DI   // DI = &x[0]
	MOVQ x_len+32(FP), CX    // CX = len(x)
	TAIL16
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ CX, BX
	SHRQ $2, BX              // BX = groups of 4 blocks
	ANDQ $3, CX              // CX = blocks left
	TESTQ BX, BX
	JZ dotF16AVX512_one
dotF16AVX512_four:
	VCVTPH2PS 0(SI), Z4
	VFMADD231PS 0(DI), Z4, Z0
	VCVTPH2PS 32(SI), Z5
	VFMADD231PS 64(DI), Z5, Z1
	VCVTPH2PS 64(SI), Z6
	VFMADD231PS 128(DI), Z6, Z2
	VCVTPH2PS 96(SI), Z7
	VFMADD231PS 192(DI), Z7, Z3
	ADDQ $128, SI
	ADDQ $256, DI
	DECQ BX
	JNZ dotF16AVX512_four
dotF16AVX512_one:
	TESTQ CX, CX
	JZ dotF16AVX512_tail
dotF16AVX512_oneloop:
	VCVTPH2PS (SI), Z4
	VFMADD231PS (DI), Z4, Z0
	ADDQ $32, SI
	ADDQ $64, DI
	DECQ CX
	JNZ dotF16AVX512_oneloop
dotF16AVX512_tail:
	VCVTPH2PS.Z (SI), K1, Z4
	VMOVUPS.Z (DI), K1, Z5
	VFMADD231PS Z5, Z4, Z1
	VADDPS Z1, Z0, Z0
	VADDPS Z3, Z2, Z2
	VADDPS Z2, Z0, Z0
	SUM_Z0
	MOVSS X0, ret+48(FP)
	VZEROUPPER
	RET

// func dot4x1F32AVX512(a []float32, lda int, x []float32, c *[4]float32)
//
// Z16–Z19: rows 0–3 on even blocks of 16, Z20–Z23 on odd blocks.
TEXT ·dot4x1F32AVX512(SB), NOSPLIT, $0-64
	MOVQ a_base+0(FP), SI
	MOVQ lda+24(FP), R8
	SHLQ $2, R8             // R8 = row stride in bytes
	LEAQ (R8)(R8*2), R11     // R11 = 3 rows
	LEAQ (SI)(R8*4), R9      // the next four rows, as dot4x1F16AVX512
	MOVQ x_base+32(FP), DI
	MOVQ x_len+40(FP), CX
	TAIL16
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	MOVQ CX, BX
	SHRQ $1, BX
	ANDQ $1, CX
	TESTQ BX, BX
	JZ dot4x1F32AVX512_one
dot4x1F32AVX512_two:
	NEXT_ROWS(0)
	NEXT_ROWS(64)
	ADDQ $128, R9
	VMOVUPS (DI), Z0
	VMOVUPS 64(DI), Z1
	VFMADD231PS (SI), Z0, Z16
	VFMADD231PS (SI)(R8*1), Z0, Z17
	VFMADD231PS (SI)(R8*2), Z0, Z18
	VFMADD231PS (SI)(R11*1), Z0, Z19
	VFMADD231PS 64(SI), Z1, Z20
	VFMADD231PS 64(SI)(R8*1), Z1, Z21
	VFMADD231PS 64(SI)(R8*2), Z1, Z22
	VFMADD231PS 64(SI)(R11*1), Z1, Z23
	ADDQ $128, SI
	ADDQ $128, DI
	DECQ BX
	JNZ dot4x1F32AVX512_two
dot4x1F32AVX512_one:
	TESTQ CX, CX
	JZ dot4x1F32AVX512_tail
	VMOVUPS (DI), Z0
	VFMADD231PS (SI), Z0, Z16
	VFMADD231PS (SI)(R8*1), Z0, Z17
	VFMADD231PS (SI)(R8*2), Z0, Z18
	VFMADD231PS (SI)(R11*1), Z0, Z19
	ADDQ $64, SI
	ADDQ $64, DI
dot4x1F32AVX512_tail:
	VMOVUPS.Z (DI), K1, Z0
	VMOVUPS.Z (SI), K1, Z2
	VFMADD231PS Z0, Z2, Z20
	VMOVUPS.Z (SI)(R8*1), K1, Z3
	VFMADD231PS Z0, Z3, Z21
	VMOVUPS.Z (SI)(R8*2), K1, Z4
	VFMADD231PS Z0, Z4, Z22
	VMOVUPS.Z (SI)(R11*1), K1, Z5
	VFMADD231PS Z0, Z5, Z23
	VADDPS Z20, Z16, Z16
	VADDPS Z21, Z17, Z17
	VADDPS Z22, Z18, Z18
	VADDPS Z23, Z19, Z19
	VSHUFF32X4 $0x44, Z17, Z16, Z0
	VSHUFF32X4 $0xEE, Z17, Z16, Z1
	VADDPS Z1, Z0, Z0          // lanes: row 0, row 0, row 1, row 1
	VSHUFF32X4 $0x44, Z19, Z18, Z2
	VSHUFF32X4 $0xEE, Z19, Z18, Z3
	VADDPS Z3, Z2, Z2          // lanes: row 2, row 2, row 3, row 3
	VSHUFF32X4 $0x88, Z2, Z0, Z4
	VSHUFF32X4 $0xDD, Z2, Z0, Z5
	VADDPS Z5, Z4, Z4          // lane i: 4 partial sums of row i
	VSHUFPS $0x4E, Z4, Z4, Z5
	VADDPS Z5, Z4, Z4
	VSHUFPS $0xB1, Z4, Z4, Z5
	VADDPS Z5, Z4, Z4          // every element of lane i: row i's sum
	MOVL $0x1111, AX
	KMOVW AX, K2
	MOVQ c+56(FP), DX
	VCOMPRESSPS Z4, K2, (DX)
	VZEROUPPER
	RET

// func dot4x1F16AVX512(a []uint16, lda int, x []float32, c *[4]float32)
//
// Z16–Z19: rows 0–3 on even blocks of 16, Z20–Z23 on odd blocks.
//
// The rows are usually a weight read in place from the file's mapping:
// 4 KiB pages, where the hardware prefetcher stops, and a row of a
// 2048-wide f16 matrix is one page. So each step asks for the same
// columns of the next four rows (R9), which the next call reads, into L2:
// a 2048×65536 f16 matrix-vector product went from 14.5 to 19.5 GB/s on
// one thread and from 25.5 to 29.4 on two (AMD Zen 4; into L1 instead,
// 12.9 and 25.0; eight rows ahead, 19.7 and 30.1; the AVX2 kernel from 17
// to 22 on one thread). The f32 kernels do the same (4096-wide rows, four
// pages each: 22 to 24.6 GB/s on one thread, 32 either way on two).
TEXT ·dot4x1F16AVX512(SB), NOSPLIT, $0-64
	MOVQ a_base+0(FP), SI
	MOVQ lda+24(FP), R8
	SHLQ $1, R8             // R8 = row stride in bytes
	LEAQ (R8)(R8*2), R11     // R11 = 3 rows
	LEAQ (SI)(R8*4), R9      // R9 = the next four rows
	MOVQ x_base+32(FP), DI
	MOVQ x_len+40(FP), CX
	TAIL16
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	MOVQ CX, BX
	SHRQ $1, BX
	ANDQ $1, CX
	TESTQ BX, BX
	JZ dot4x1F16AVX512_one
dot4x1F16AVX512_two:
	NEXT_ROWS(0)
	ADDQ $64, R9
	VMOVUPS (DI), Z0
	VMOVUPS 64(DI), Z1
	VCVTPH2PS (SI), Z2
	VFMADD231PS Z0, Z2, Z16
	VCVTPH2PS (SI)(R8*1), Z3
	VFMADD231PS Z0, Z3, Z17
	VCVTPH2PS (SI)(R8*2), Z4
	VFMADD231PS Z0, Z4, Z18
	VCVTPH2PS (SI)(R11*1), Z5
	VFMADD231PS Z0, Z5, Z19
	VCVTPH2PS 32(SI), Z6
	VFMADD231PS Z1, Z6, Z20
	VCVTPH2PS 32(SI)(R8*1), Z7
	VFMADD231PS Z1, Z7, Z21
	VCVTPH2PS 32(SI)(R8*2), Z8
	VFMADD231PS Z1, Z8, Z22
	VCVTPH2PS 32(SI)(R11*1), Z9
	VFMADD231PS Z1, Z9, Z23
	ADDQ $64, SI
	ADDQ $128, DI
	DECQ BX
	JNZ dot4x1F16AVX512_two
dot4x1F16AVX512_one:
	TESTQ CX, CX
	JZ dot4x1F16AVX512_tail
	VMOVUPS (DI), Z0
	VCVTPH2PS (SI), Z2
	VFMADD231PS Z0, Z2, Z16
	VCVTPH2PS (SI)(R8*1), Z3
	VFMADD231PS Z0, Z3, Z17
	VCVTPH2PS (SI)(R8*2), Z4
	VFMADD231PS Z0, Z4, Z18
	VCVTPH2PS (SI)(R11*1), Z5
	VFMADD231PS Z0, Z5, Z19
	ADDQ $32, SI
	ADDQ $64, DI
dot4x1F16AVX512_tail:
	VMOVUPS.Z (DI), K1, Z0
	VCVTPH2PS.Z (SI), K1, Z2
	VFMADD231PS Z0, Z2, Z20
	VCVTPH2PS.Z (SI)(R8*1), K1, Z3
	VFMADD231PS Z0, Z3, Z21
	VCVTPH2PS.Z (SI)(R8*2), K1, Z4
	VFMADD231PS Z0, Z4, Z22
	VCVTPH2PS.Z (SI)(R11*1), K1, Z5
	VFMADD231PS Z0, Z5, Z23
	VADDPS Z20, Z16, Z16
	VADDPS Z21, Z17, Z17
	VADDPS Z22, Z18, Z18
	VADDPS Z23, Z19, Z19
	VSHUFF32X4 $0x44, Z17, Z16, Z0
	VSHUFF32X4 $0xEE, Z17, Z16, Z1
	VADDPS Z1, Z0, Z0          // lanes: row 0, row 0, row 1, row 1
	VSHUFF32X4 $0x44, Z19, Z18, Z2
	VSHUFF32X4 $0xEE, Z19, Z18, Z3
	VADDPS Z3, Z2, Z2          // lanes: row 2, row 2, row 3, row 3
	VSHUFF32X4 $0x88, Z2, Z0, Z4
	VSHUFF32X4 $0xDD, Z2, Z0, Z5
	VADDPS Z5, Z4, Z4          // lane i: 4 partial sums of row i
	VSHUFPS $0x4E, Z4, Z4, Z5
	VADDPS Z5, Z4, Z4
	VSHUFPS $0xB1, Z4, Z4, Z5
	VADDPS Z5, Z4, Z4          // every element of lane i: row i's sum
	MOVL $0x1111, AX
	KMOVW AX, K2
	MOVQ c+56(FP), DX
	VCOMPRESSPS Z4, K2, (DX)
	VZEROUPPER
	RET

// func dot4x4F32AVX512(a []float32, lda int, x []float32, ldx, k int, c []float32, ldc int)
//
// Z0–Z3: rows of a; Z4–Z7: columns of x; Z(16+4i+j): row i · column j.
TEXT ·dot4x4F32AVX512(SB), NOSPLIT, $0-104
	MOVQ a_base+0(FP), SI
	MOVQ lda+24(FP), R8
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R9
	MOVQ x_base+32(FP), DI
	MOVQ ldx+56(FP), R10
	SHLQ $2, R10
	LEAQ (R10)(R10*2), R11
	MOVQ k+64(FP), CX
	TAIL16
	ZERO4X4
	TESTQ CX, CX
	JZ dot4x4F32AVX512_tail
dot4x4F32AVX512_loop:
	VMOVUPS (SI), Z0
	VMOVUPS (SI)(R8*1), Z1
	VMOVUPS (SI)(R8*2), Z2
	VMOVUPS (SI)(R9*1), Z3
	FMA4X4
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ dot4x4F32AVX512_loop
dot4x4F32AVX512_tail:
	KORTESTW K1, K1
	JZ dot4x4F32AVX512_reduce
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z (SI)(R8*1), K1, Z1
	VMOVUPS.Z (SI)(R8*2), K1, Z2
	VMOVUPS.Z (SI)(R9*1), K1, Z3
	FMA4X4_TAIL
dot4x4F32AVX512_reduce:
	REDUCE4X4
	STORE4X4
	VZEROUPPER
	RET

// func dot4x4F16AVX512(a []uint16, lda int, x []float32, ldx, k int, c []float32, ldc int)
//
// Z0–Z3: rows of a converted from f16; Z4–Z7: columns of x; Z(16+4i+j): row i · column j.
TEXT ·dot4x4F16AVX512(SB), NOSPLIT, $0-104
	MOVQ a_base+0(FP), SI
	MOVQ lda+24(FP), R8
	SHLQ $1, R8
	LEAQ (R8)(R8*2), R9
	MOVQ x_base+32(FP), DI
	MOVQ ldx+56(FP), R10
	SHLQ $2, R10
	LEAQ (R10)(R10*2), R11
	MOVQ k+64(FP), CX
	TAIL16
	ZERO4X4
	TESTQ CX, CX
	JZ dot4x4F16AVX512_tail
dot4x4F16AVX512_loop:
	VCVTPH2PS (SI), Z0
	VCVTPH2PS (SI)(R8*1), Z1
	VCVTPH2PS (SI)(R8*2), Z2
	VCVTPH2PS (SI)(R9*1), Z3
	FMA4X4
	ADDQ $32, SI
	ADDQ $64, DI
	DECQ CX
	JNZ dot4x4F16AVX512_loop
dot4x4F16AVX512_tail:
	KORTESTW K1, K1
	JZ dot4x4F16AVX512_reduce
	VCVTPH2PS.Z (SI), K1, Z0
	VCVTPH2PS.Z (SI)(R8*1), K1, Z1
	VCVTPH2PS.Z (SI)(R8*2), K1, Z2
	VCVTPH2PS.Z (SI)(R9*1), K1, Z3
	FMA4X4_TAIL
dot4x4F16AVX512_reduce:
	REDUCE4X4
	STORE4X4
	VZEROUPPER
	RET

// func dotF32AVX2(a []float32, x []float32) float32
//
// len(x) is a multiple of 8.
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-52
	MOVQ a_base+0(FP), SI
	MOVQ x_base+24(FP), DI
	MOVQ x_len+32(FP), CX
	SHRQ $3, CX              // CX = blocks of 8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ CX, BX
	SHRQ $2, BX
	ANDQ $3, CX
	TESTQ BX, BX
	JZ dotF32AVX2_one
dotF32AVX2_four:
	VMOVUPS 0(SI), Y4
	VFMADD231PS 0(DI), Y4, Y0
	VMOVUPS 32(SI), Y5
	VFMADD231PS 32(DI), Y5, Y1
	VMOVUPS 64(SI), Y6
	VFMADD231PS 64(DI), Y6, Y2
	VMOVUPS 96(SI), Y7
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	DECQ BX
	JNZ dotF32AVX2_four
dotF32AVX2_one:
	TESTQ CX, CX
	JZ dotF32AVX2_done
dotF32AVX2_oneloop:
	VMOVUPS (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ dotF32AVX2_oneloop
dotF32AVX2_done:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	SUM_Y0
	MOVSS X0, ret+48(FP)
	VZEROUPPER
	RET

// func dotF16AVX2(a []uint16, x []float32) float32
//
// len(x) is a multiple of 8.
TEXT ·dotF16AVX2(SB), NOSPLIT, $0-52
	MOVQ a_base+0(FP), SI
	MOVQ x_base+24(FP), DI
	MOVQ x_len+32(FP), CX
	SHRQ $3, CX              // CX = blocks of 8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ CX, BX
	SHRQ $2, BX
	ANDQ $3, CX
	TESTQ BX, BX
	JZ dotF16AVX2_one
dotF16AVX2_four:
	VCVTPH2PS 0(SI), Y4
	VFMADD231PS 0(DI), Y4, Y0
	VCVTPH2PS 16(SI), Y5
	VFMADD231PS 32(DI), Y5, Y1
	VCVTPH2PS 32(SI), Y6
	VFMADD231PS 64(DI), Y6, Y2
	VCVTPH2PS 48(SI), Y7
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ $64, SI
	ADDQ $128, DI
	DECQ BX
	JNZ dotF16AVX2_four
dotF16AVX2_one:
	TESTQ CX, CX
	JZ dotF16AVX2_done
dotF16AVX2_oneloop:
	VCVTPH2PS (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ $16, SI
	ADDQ $32, DI
	DECQ CX
	JNZ dotF16AVX2_oneloop
dotF16AVX2_done:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	SUM_Y0
	MOVSS X0, ret+48(FP)
	VZEROUPPER
	RET

// func dot4x1F32AVX2(a []float32, lda int, x []float32, c *[4]float32)
//
// len(x) is a multiple of 8. Y6–Y9: rows 0–3.
TEXT ·dot4x1F32AVX2(SB), NOSPLIT, $0-64
	MOVQ a_base+0(FP), SI
	MOVQ lda+24(FP), R8
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R11
	LEAQ (SI)(R8*4), R9      // the next four rows, as dot4x1F16AVX512
	MOVQ x_base+32(FP), DI
	MOVQ x_len+40(FP), CX
	SHRQ $3, CX
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	TESTQ CX, CX
	JZ dot4x1F32AVX2_done
dot4x1F32AVX2_loop:
	TESTQ $1, CX // one step in two: the next 64 bytes of each row
	JNZ dot4x1F32AVX2_fetched
	NEXT_ROWS(0)
	ADDQ $64, R9
dot4x1F32AVX2_fetched:
	VMOVUPS (DI), Y0
	VFMADD231PS (SI), Y0, Y6
	VFMADD231PS (SI)(R8*1), Y0, Y7
	VFMADD231PS (SI)(R8*2), Y0, Y8
	VFMADD231PS (SI)(R11*1), Y0, Y9
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ dot4x1F32AVX2_loop
dot4x1F32AVX2_done:
	VHADDPS Y7, Y6, Y0
	VHADDPS Y9, Y8, Y1
	VHADDPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	MOVQ c+56(FP), DX
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET

// func dot4x1F16AVX2(a []uint16, lda int, x []float32, c *[4]float32)
//
// len(x) is a multiple of 8. Y6–Y9: rows 0–3.
TEXT ·dot4x1F16AVX2(SB), NOSPLIT, $0-64
	MOVQ a_base+0(FP), SI
	MOVQ lda+24(FP), R8
	SHLQ $1, R8
	LEAQ (R8)(R8*2), R11
	LEAQ (SI)(R8*4), R9      // the next four rows, as dot4x1F16AVX512
	MOVQ x_base+32(FP), DI
	MOVQ x_len+40(FP), CX
	SHRQ $3, CX
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	TESTQ CX, CX
	JZ dot4x1F16AVX2_done
dot4x1F16AVX2_loop:
	TESTQ $3, CX // one step in four: the next 64 bytes of each row
	JNZ dot4x1F16AVX2_fetched
	NEXT_ROWS(0)
	ADDQ $64, R9
dot4x1F16AVX2_fetched:
	VMOVUPS (DI), Y0
	VCVTPH2PS (SI), Y1
	VFMADD231PS Y0, Y1, Y6
	VCVTPH2PS (SI)(R8*1), Y2
	VFMADD231PS Y0, Y2, Y7
	VCVTPH2PS (SI)(R8*2), Y3
	VFMADD231PS Y0, Y3, Y8
	VCVTPH2PS (SI)(R11*1), Y4
	VFMADD231PS Y0, Y4, Y9
	ADDQ $16, SI
	ADDQ $32, DI
	DECQ CX
	JNZ dot4x1F16AVX2_loop
dot4x1F16AVX2_done:
	VHADDPS Y7, Y6, Y0
	VHADDPS Y9, Y8, Y1
	VHADDPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	MOVQ c+56(FP), DX
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET

// func dot4x4F32AVX2(a []float32, lda int, x []float32, ldx, k int, c []float32, ldc int)
//
// k is a multiple of 8. Two passes of two columns: Y0–Y3 rows of a, Y4–Y5
// columns of x, Y(6+4j+i) row i · column j of the pass.
TEXT ·dot4x4F32AVX2(SB), NOSPLIT, $0-104
	MOVQ lda+24(FP), R8
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R9
	MOVQ ldx+56(FP), R10
	SHLQ $2, R10
	MOVQ c_base+72(FP), DX
	MOVQ ldc+96(FP), R13
	SHLQ $2, R13             // R13 = ldc in bytes
	MOVQ x_base+32(FP), DI
	MOVQ $2, BX              // BX = passes left
dot4x4F32AVX2_pass:
	MOVQ a_base+0(FP), SI
	MOVQ DI, R12             // R12 = this pass's first column
	MOVQ k+64(FP), CX
	SHRQ $3, CX
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	TESTQ CX, CX
	JZ dot4x4F32AVX2_reduce
dot4x4F32AVX2_loop:
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(R8*1), Y1
	VMOVUPS (SI)(R8*2), Y2
	VMOVUPS (SI)(R9*1), Y3
	VMOVUPS (R12), Y4
	VMOVUPS (R12)(R10*1), Y5
	VFMADD231PS Y4, Y0, Y6
	VFMADD231PS Y4, Y1, Y7
	VFMADD231PS Y4, Y2, Y8
	VFMADD231PS Y4, Y3, Y9
	VFMADD231PS Y5, Y0, Y10
	VFMADD231PS Y5, Y1, Y11
	VFMADD231PS Y5, Y2, Y12
	VFMADD231PS Y5, Y3, Y13
	ADDQ $32, SI
	ADDQ $32, R12
	DECQ CX
	JNZ dot4x4F32AVX2_loop
dot4x4F32AVX2_reduce:
	VHADDPS Y7, Y6, Y0
	VHADDPS Y9, Y8, Y1
	VHADDPS Y11, Y10, Y2
	VHADDPS Y13, Y12, Y3
	VHADDPS Y1, Y0, Y0
	VHADDPS Y3, Y2, Y2
	VPERM2F128 $0x20, Y2, Y0, Y1
	VPERM2F128 $0x31, Y2, Y0, Y3
	VADDPS Y3, Y1, Y1
	VMOVUPS X1, (DX)
	VEXTRACTF128 $1, Y1, X3
	VMOVUPS X3, (DX)(R13*1)
	LEAQ (DX)(R13*2), DX
	LEAQ (DI)(R10*2), DI
	DECQ BX
	JNZ dot4x4F32AVX2_pass
	VZEROUPPER
	RET

// func dotPanelF32AVX512(m int, a []float32, lda int, x []float32, ldx, k int, c []float32, ldc int)
//
// dot4x4F32AVX512 for m/4 blocks of rows, the rows and the columns of c
// advancing by 4. AX: the block's first row of a; R12: blocks left.
TEXT ·dotPanelF32AVX512(SB), NOSPLIT, $0-112
	MOVQ a_base+8(FP), AX
	MOVQ lda+32(FP), R8
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R9
	MOVQ ldx+64(FP), R10
	SHLQ $2, R10
	LEAQ (R10)(R10*2), R11
	MOVQ k+72(FP), CX
	MOVQ CX, R13
	ANDQ $15, CX
	MOVL $1, BX
	SHLL CX, BX
	DECL BX
	KMOVW BX, K1            // K1 = the tail's lanes
	MOVQ R13, BX
	SHRQ $4, BX             // BX = full blocks of 16
	MOVQ c_base+80(FP), DX
	MOVQ ldc+104(FP), R13
	SHLQ $2, R13            // R13 = ldc in bytes
	MOVQ m+0(FP), R12
	SHRQ $2, R12
	TESTQ R12, R12
	JZ panel_done
panel_rows:
	MOVQ AX, SI
	MOVQ x_base+40(FP), DI
	MOVQ BX, CX
	ZERO4X4
	TESTQ CX, CX
	JZ panel_tail
panel_loop:
	VMOVUPS (SI), Z0
	VMOVUPS (SI)(R8*1), Z1
	VMOVUPS (SI)(R8*2), Z2
	VMOVUPS (SI)(R9*1), Z3
	FMA4X4
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ panel_loop
panel_tail:
	KORTESTW K1, K1
	JZ panel_reduce
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z (SI)(R8*1), K1, Z1
	VMOVUPS.Z (SI)(R8*2), K1, Z2
	VMOVUPS.Z (SI)(R9*1), K1, Z3
	FMA4X4_TAIL
panel_reduce:
	REDUCE4X4
	LEAQ (R13)(R13*2), SI
	VMOVUPS X16, (DX)
	VEXTRACTF32X4 $1, Z16, X8
	VMOVUPS X8, (DX)(R13*1)
	VEXTRACTF32X4 $2, Z16, X8
	VMOVUPS X8, (DX)(R13*2)
	VEXTRACTF32X4 $3, Z16, X8
	VMOVUPS X8, (DX)(SI*1)
	LEAQ (AX)(R8*4), AX     // next 4 rows
	ADDQ $16, DX
	DECQ R12
	JNZ panel_rows
panel_done:
	VZEROUPPER
	RET

// func dotBF16AVX512(a, x []byte) float32
//
// len(a) is a multiple of 64 (32 values). A bf16 value is the top half of
// its float32, so unpacking a block's words with zeros below them gives
// float32s: the same lane order for a and x, which is all a dot needs.
TEXT ·dotBF16AVX512(SB), NOSPLIT, $0-52
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), CX
	MOVQ x_base+24(FP), DI
	SHRQ $6, CX
	VPXORD Z31, Z31, Z31
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	TESTQ CX, CX
	JZ dotBF16AVX512_done
dotBF16AVX512_loop:
	VMOVDQU64 (SI), Z8
	VMOVDQU64 (DI), Z9
	VPUNPCKLWD Z8, Z31, Z4
	VPUNPCKLWD Z9, Z31, Z5
	VFMADD231PS Z5, Z4, Z0
	VPUNPCKHWD Z8, Z31, Z6
	VPUNPCKHWD Z9, Z31, Z7
	VFMADD231PS Z7, Z6, Z1
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ dotBF16AVX512_loop
dotBF16AVX512_done:
	VADDPS Z1, Z0, Z0
	SUM_Z0
	MOVSS X0, ret+48(FP)
	VZEROUPPER
	RET

// func dotBF16AVX2(a, x []byte) float32
//
// dotBF16AVX512 with AVX2; len(a) is a multiple of 32 (16 values).
TEXT ·dotBF16AVX2(SB), NOSPLIT, $0-52
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), CX
	MOVQ x_base+24(FP), DI
	SHRQ $5, CX
	VPXOR Y15, Y15, Y15
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	TESTQ CX, CX
	JZ dotBF16AVX2_done
dotBF16AVX2_loop:
	VMOVDQU (SI), Y8
	VMOVDQU (DI), Y9
	VPUNPCKLWD Y8, Y15, Y4
	VPUNPCKLWD Y9, Y15, Y5
	VFMADD231PS Y5, Y4, Y0
	VPUNPCKHWD Y8, Y15, Y6
	VPUNPCKHWD Y9, Y15, Y7
	VFMADD231PS Y7, Y6, Y1
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ dotBF16AVX2_loop
dotBF16AVX2_done:
	VADDPS Y1, Y0, Y0
	SUM_Y0
	MOVSS X0, ret+48(FP)
	VZEROUPPER
	RET
