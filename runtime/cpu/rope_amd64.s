//go:build !noasm

#include "textflag.h"
#include "asm_amd64.h"

// ROTATE_PAIRS rotates the eight pairs of x in Z0 by the cosines in Z1 and
// the sines in Z2 (eight each, low halves) into Z5: cc = c0 c0 c1 c1 …
// (Z31 holds ropePairIdx), ss alike, xs = x with each pair swapped; even
// lanes x·cc - xs·ss, odd lanes xs·ss + x·cc, each with the first product
// fused. K2 must hold the even lanes; it uses Z3 and Z4.
#define ROTATE_PAIRS \
	VPERMPS Z1, Z31, Z1; \
	VPERMPS Z2, Z31, Z2; \
	VPERMILPS $0xB1, Z0, Z3; \
	VMULPS Z2, Z3, Z4; \
	VFMSUB231PS Z1, Z0, Z4; \
	VMULPS Z1, Z0, Z5; \
	VFMADD231PS Z2, Z3, Z5; \
	VMOVAPS Z4, K2, Z5

// The rotations of rope.go: cs holds n/2 cosines then n/2 sines.

// func ropeNeoxAVX512(y, x, cs []float32)
TEXT ·ropeNeoxAVX512(SB), NOSPLIT, $0-72
	MOVQ y_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ cs_base+48(FP), DX
	MOVQ cs_len+56(FP), CX
	SHRQ $1, CX              // CX = n/2
	MOVQ CX, R8
	SHLQ $2, R8              // R8 = n/2 in bytes: the second halves, the sines
	TAIL16
	TESTQ CX, CX
	JZ neox_tail
neox_loop:
	VMOVUPS (SI), Z0       // x0
	VMOVUPS (SI)(R8*1), Z1 // x1
	VMOVUPS (DX), Z2       // cos
	VMOVUPS (DX)(R8*1), Z3 // sin
	VMULPS Z3, Z1, Z4
	VFMSUB231PS Z2, Z0, Z4     // x0·cos - x1·sin
	VMULPS Z2, Z1, Z5
	VFMADD231PS Z3, Z0, Z5     // x0·sin + x1·cos
	VMOVUPS Z4, (DI)
	VMOVUPS Z5, (DI)(R8*1)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $64, DX
	DECQ CX
	JNZ neox_loop
neox_tail:
	KORTESTW K1, K1
	JZ neox_done
	VMOVUPS.Z (SI), K1, Z0       // x0
	VMOVUPS.Z (SI)(R8*1), K1, Z1 // x1
	VMOVUPS.Z (DX), K1, Z2       // cos
	VMOVUPS.Z (DX)(R8*1), K1, Z3 // sin
	VMULPS Z3, Z1, Z4
	VFMSUB231PS Z2, Z0, Z4     // x0·cos - x1·sin
	VMULPS Z2, Z1, Z5
	VFMADD231PS Z3, Z0, Z5     // x0·sin + x1·cos
	VMOVUPS Z4, K1, (DI)
	VMOVUPS Z5, K1, (DI)(R8*1)
neox_done:
	VZEROUPPER
	RET

// func ropePairsRowsAVX512(y, x, cs []float32, idx *[16]uint32, rows, ld int)
//
// Mode-0 rope of rows rows of y and x, ld elements apart, all rotated by
// the same cs (the heads of one token), sixteen elements (eight pairs) per
// step (ROTATE_PAIRS).
TEXT ·ropePairsRowsAVX512(SB), NOSPLIT, $0-96
	MOVQ y_base+0(FP), R12
	MOVQ x_base+24(FP), BX
	MOVQ cs_base+48(FP), R9
	MOVQ cs_len+56(FP), CX   // CX = n
	MOVQ idx+72(FP), AX
	VMOVDQU32 (AX), Z31
	MOVQ rows+80(FP), R10
	MOVQ ld+88(FP), R11
	SHLQ $2, R11             // R11 = row stride in bytes
	MOVQ CX, R8
	SHLQ $1, R8              // R8 = n/2 in bytes: the sines
	MOVL $0x5555, AX
	KMOVW AX, K2             // even lanes
	MOVQ CX, R13
	ANDQ $15, CX
	MOVQ CX, DX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1             // the tail's elements
	SHRQ $1, DX
	MOVQ DX, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K3             // the tail's pairs
	SHRQ $4, R13             // R13 = full blocks of 16
	TESTQ R10, R10
	JZ rows_done
rows_loop:
	MOVQ BX, SI
	MOVQ R12, DI
	MOVQ R9, DX
	MOVQ R13, CX
	TESTQ CX, CX
	JZ rows_tail
rows_pairs:
	VMOVUPS (SI), Z0
	VMOVUPS (DX), Y1
	VMOVUPS (DX)(R8*1), Y2
	ROTATE_PAIRS
	VMOVUPS Z5, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $32, DX
	DECQ CX
	JNZ rows_pairs
rows_tail:
	KORTESTW K1, K1
	JZ rows_next
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z (DX), K3, Y1
	VMOVUPS.Z (DX)(R8*1), K3, Y2
	ROTATE_PAIRS
	VMOVUPS Z5, K1, (DI)
rows_next:
	ADDQ R11, BX
	ADDQ R11, R12
	DECQ R10
	JNZ rows_loop
rows_done:
	VZEROUPPER
	RET
