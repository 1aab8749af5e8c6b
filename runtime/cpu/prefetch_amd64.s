//go:build !noasm

#include "textflag.h"

// func prefetchRows(p unsafe.Pointer, rows, stride, bytes int)
TEXT ·prefetchRows(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), SI
	MOVQ rows+8(FP), CX
	MOVQ stride+16(FP), DX
	MOVQ bytes+24(FP), BX
	TESTQ CX, CX
	JLE done
	TESTQ BX, BX
	JLE done

row:
	// the row's lines: from its first byte's line through its last's
	LEAQ -1(SI)(BX*1), R8
	ANDQ $~63, R8
	MOVQ SI, DI
	ANDQ $~63, DI

line:
	PREFETCHT0 (DI)
	ADDQ $64, DI
	CMPQ DI, R8
	JLE line
	ADDQ DX, SI
	DECQ CX
	JNZ row

done:
	RET

// func cpuid(leaf uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	XORL CX, CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET
