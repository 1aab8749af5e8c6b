//go:build !noasm

#include "textflag.h"
#include "asm_amd64.h"

// func f16ToF32AVX512(d []float32, s []uint16)
TEXT ·f16ToF32AVX512(SB), NOSPLIT, $0-48
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ s_base+24(FP), SI
	TAIL16
	TESTQ CX, CX
	JZ f16ToF32AVX512_tail
f16ToF32AVX512_loop:
	VCVTPH2PS (SI), Z0
	VMOVUPS Z0, (DI)
	ADDQ $32, SI
	ADDQ $64, DI
	DECQ CX
	JNZ f16ToF32AVX512_loop
f16ToF32AVX512_tail:
	KORTESTW K1, K1
	JZ f16ToF32AVX512_done
	VCVTPH2PS.Z (SI), K1, Z0
	VMOVUPS Z0, K1, (DI)
f16ToF32AVX512_done:
	VZEROUPPER
	RET

// func f32ToF16AVX512(d []uint16, s []float32)
TEXT ·f32ToF16AVX512(SB), NOSPLIT, $0-48
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ s_base+24(FP), SI
	TAIL16
	TESTQ CX, CX
	JZ f32ToF16AVX512_tail
f32ToF16AVX512_loop:
	VMOVUPS (SI), Z0
	VCVTPS2PH $0, Z0, Y1       // to a register: the memory form is slow on Zen 4
	VMOVDQU Y1, (DI)
	ADDQ $64, SI
	ADDQ $32, DI
	DECQ CX
	JNZ f32ToF16AVX512_loop
f32ToF16AVX512_tail:
	KORTESTW K1, K1
	JZ f32ToF16AVX512_done
	VMOVUPS.Z (SI), K1, Z0
	VCVTPS2PH $0, Z0, Y1
	VMOVDQU16 Y1, K1, (DI)
f32ToF16AVX512_done:
	VZEROUPPER
	RET

// func roundF16AVX512(d, s []float32)
TEXT ·roundF16AVX512(SB), NOSPLIT, $0-48
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ s_base+24(FP), SI
	TAIL16
	TESTQ CX, CX
	JZ roundF16AVX512_tail
roundF16AVX512_loop:
	VMOVUPS (SI), Z0
	VCVTPS2PH $0, Z0, Y1
	VCVTPH2PS Y1, Z0
	VMOVUPS Z0, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ roundF16AVX512_loop
roundF16AVX512_tail:
	KORTESTW K1, K1
	JZ roundF16AVX512_done
	VMOVUPS.Z (SI), K1, Z0
	VCVTPS2PH $0, Z0, Y1
	VCVTPH2PS Y1, Z0
	VMOVUPS Z0, K1, (DI)
roundF16AVX512_done:
	VZEROUPPER
	RET

// func f16ToF32AVX2(d []float32, s []uint16)
//
// len(d) is a multiple of 8.
TEXT ·f16ToF32AVX2(SB), NOSPLIT, $0-48
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ s_base+24(FP), SI
	SHRQ $3, CX
	TESTQ CX, CX
	JZ f16ToF32AVX2_done
f16ToF32AVX2_loop:
	VCVTPH2PS (SI), Y0
	VMOVUPS Y0, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	DECQ CX
	JNZ f16ToF32AVX2_loop
f16ToF32AVX2_done:
	VZEROUPPER
	RET

// func f32ToF16AVX2(d []uint16, s []float32)
//
// len(d) is a multiple of 8.
TEXT ·f32ToF16AVX2(SB), NOSPLIT, $0-48
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ s_base+24(FP), SI
	SHRQ $3, CX
	TESTQ CX, CX
	JZ f32ToF16AVX2_done
f32ToF16AVX2_loop:
	VMOVUPS (SI), Y0
	VCVTPS2PH $0, Y0, X1
	VMOVDQU X1, (DI)
	ADDQ $32, SI
	ADDQ $16, DI
	DECQ CX
	JNZ f32ToF16AVX2_loop
f32ToF16AVX2_done:
	VZEROUPPER
	RET

// func roundF16AVX2(d, s []float32)
//
// len(d) is a multiple of 8.
TEXT ·roundF16AVX2(SB), NOSPLIT, $0-48
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ s_base+24(FP), SI
	SHRQ $3, CX
	TESTQ CX, CX
	JZ roundF16AVX2_done
roundF16AVX2_loop:
	VMOVUPS (SI), Y0
	VCVTPS2PH $0, Y0, X1
	VCVTPH2PS X1, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ roundF16AVX2_loop
roundF16AVX2_done:
	VZEROUPPER
	RET

