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

// func cpuVendor() (ebx, edx, ecx uint32)
TEXT ·cpuVendor(SB), NOSPLIT, $0-12
	XORL AX, AX
	XORL CX, CX
	CPUID
	MOVL BX, ebx+0(FP)
	MOVL DX, edx+4(FP)
	MOVL CX, ecx+8(FP)
	RET
