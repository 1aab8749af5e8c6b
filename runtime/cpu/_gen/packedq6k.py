#!/usr/bin/env python3
# packedq6k.py writes runtime/cpu's q6_K packed kernels: `packedq6k.py vnni`
# packedq6k_amd64.s, `packedq6k.py avx2` packedq6k_avx2_amd64.s, on standard
# output (go generate in runtime/cpu runs it; TestPackedQ6_KGenerated checks
# the committed files are its output). The kernels are unrolled over the
# 16 sub-blocks of a super-block, so they are written by loops here rather
# than by hand.
import sys
out = []
def e(s=""): out.append(s)

BLK = 3360
XC = 32 # int32s of xc per column block (q6PanelInts)
def sub(h, k, o): return 8*h + k + 2*o
def trip(h, i): return 288 + 192*(8*h + i)
def xoff(h, o, i): return 128*h + 32*o + 4*i

HEAD = """//go:build !noasm

#include "textflag.h"
"""

# ---------------- AVX-512 VNNI ----------------
def vnni_decode(o, T, q, t):
    A, B, H = "%d(SI)" % T, "%d(SI)" % (T+64), "%d(SI)" % (T+128)
    if o == 0:
        return ["VPANDD %s, Z31, %s" % (A, q), "VPSLLD $4, %s, %s" % (H, t), "VPTERNLOGD $0xf8, Z30, %s, %s" % (t, q)]
    if o == 1:
        return ["VPANDD %s, Z31, %s" % (B, q), "VPSLLD $2, %s, %s" % (H, t), "VPTERNLOGD $0xf8, Z30, %s, %s" % (t, q)]
    if o == 2:
        return ["VPANDND %s, Z31, %s" % (A, q), "VPSRLD $4, %s, %s" % (q, q), "VPTERNLOGD $0xf8, %s, Z30, %s" % (H, q)]
    return ["VPANDND %s, Z31, %s" % (B, q), "VPSRLD $4, %s, %s" % (q, q), "VPSRLD $2, %s, %s" % (H, t), "VPTERNLOGD $0xf8, Z30, %s, %s" % (t, q)]

# vnni_decode4 decodes all four quant dwords of the triple at T into
# Z4..Z7 for the one-column kernel: H masked two ways (Z8 = H & 0x33: the
# fields of outputs 0 and 2 at bits 0-1 and 4-5; Z9 = H & 0xcc: those of 1
# and 3 at 2-3 and 6-7), so that one shift puts a field at bits 4-5 with
# zeros above it and vpternlogd selects (bitwise, by Z31) the low nibble
# from the ql chunk and bits 4-7 from the shifted H.
def vnni_decode4(T):
    A, B, H = "%d(SI)" % T, "%d(SI)" % (T+64), "%d(SI)" % (T+128)
    return ["VPANDD %s, Z30, Z8" % H, "VPANDND %s, Z30, Z9" % H,
            "VPSLLD $4, Z8, Z4", "VPTERNLOGD $0xb8, %s, Z31, Z4" % A,
            "VPSLLD $2, Z9, Z5", "VPTERNLOGD $0xb8, %s, Z31, Z5" % B,
            "VPSRLD $4, %s, Z6" % A, "VPTERNLOGD $0xe4, Z31, Z8, Z6",
            "VPSRLD $4, %s, Z7" % B, "VPSRLD $2, Z9, Z10", "VPTERNLOGD $0xe4, Z31, Z10, Z7"]

def prefetch_head():
    return ["PREFETCHT1 %d(SI)(R10*1)" % c for c in (0, 64, 128, 192, 256)]
def prefetch_trip(T):
    return ["PREFETCHT1 %d(SI)(R10*1)" % (T+c) for c in (0, 64, 128)]

def setup(ahead):
    return ["MOVQ w+0(FP), SI", "MOVQ xq+8(FP), DI", "MOVQ xd+16(FP), R8", "MOVQ xc+24(FP), R9",
            "MOVQ nb+32(FP), CX", "MOVQ tile+40(FP), DX", "MOVQ %s, R10" % ahead,
            "MOVL $0x0f0f0f0f, AX", "VPBROADCASTD AX, Z31", "MOVL $0x30303030, AX", "VPBROADCASTD AX, Z30"]

def tail(P, label):
    return ["ADDQ $%d, SI" % BLK, "ADDQ $%d, DI" % (256*P), "ADDQ $%d, R8" % (4*P), "ADDQ $%d, R9" % (4*XC*P),
            "DECQ CX", "JNZ %s" % label]

def vnni_x1():
    e("// func packedQ6Kx1VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)")

    e("TEXT ·packedQ6Kx1VNNI(SB), NOSPLIT, $0-48")
    L = []
    L += setup("·kColumnAhead(SB)")
    L += ["MOVL $0x33333333, AX", "VPBROADCASTD AX, Z30"]
    L += ["VPXORD Z16, Z16, Z16"]
    for l in L: e("\t" + l)
    e("q6k1loop:")
    L = prefetch_head() + ["VCVTPH2PS (SI), Z29", "VPXORD Z28, Z28, Z28"]
    for h in (0, 1):
        for k in (0, 1):
            L += ["VPBROADCASTD %d(R9), Z%d" % (4*sub(h, k, o), o) for o in range(4)]
            for i in range(4*k, 4*k+4):
                T = trip(h, i)
                L += prefetch_trip(T)
                L += vnni_decode4(T)
                for o in range(4):
                    L += ["VPDPBUSD.BCST %d(DI), Z%d, Z%d" % (xoff(h, o, i), 4+o, o)]
            for o in range(4):
                L += ["VPMOVSXBD %d(SI), Z%d" % (32+16*sub(h, k, o), 12+o), "VPMULLD Z%d, Z%d, Z%d" % (12+o, o, o)]
            for o in range(4):
                L += ["VPADDD Z%d, Z28, Z28" % o]
    L += ["VCVTDQ2PS Z28, Z28", "VMULPS Z29, Z28, Z28", "VFMADD231PS.BCST (R8), Z28, Z16"]
    L += tail(1, "q6k1loop")
    L += ["VMOVUPS Z16, (DX)", "VZEROUPPER", "RET"]
    for l in L: e("\t" + l)
    e()

# vnni_x4 is vnni_x1 for a panel of four columns: Z(4o+j) output o's
# sub-block sum for column j, Z16..Z19 the columns' block sums, Z20..Z23
# their tiles, Z24..Z27 a triple's quant dwords, Z28/Z29 its H masked.
def vnni_x4():
    name = "packedQ6Kx4VNNI"
    e("// func %s(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)" % name)
    e("//")
    e("// packedQ6Kx1VNNI for a panel of four columns (two to four tokens):")
    e("// Z(4o+j) the sum of column j's sub-block of output o, Z16..Z19 the")
    e("// columns' block sums, Z20..Z23 their tiles, Z24..Z27 a triple's quant")
    e("// dwords, Z28 and Z29 its H masked.")
    e("TEXT ·%s(SB), NOSPLIT, $0-48" % name)
    L = setup("·kStreamAhead(SB)") + ["MOVL $0x33333333, AX", "VPBROADCASTD AX, Z30"]
    L += ["VPXORD Z%d, Z%d, Z%d" % (20+j, 20+j, 20+j) for j in range(4)]
    for l in L: e("\t" + l)
    e("q6k4loop:")
    L = prefetch_head()
    L += ["VPXORD Z%d, Z%d, Z%d" % (16+j, 16+j, 16+j) for j in range(4)]
    for h in (0, 1):
        for k in (0, 1):
            for o in range(4):
                L += ["VPBROADCASTD %d(R9), Z%d" % (4*(XC*j+sub(h, k, o)), 4*o+j) for j in range(4)]
            for i in range(4*k, 4*k+4):
                T = trip(h, i)
                A, B, H = "%d(SI)" % T, "%d(SI)" % (T+64), "%d(SI)" % (T+128)
                L += prefetch_trip(T)
                L += ["VPANDD %s, Z30, Z28" % H, "VPANDND %s, Z30, Z29" % H,
                      "VPSLLD $4, Z28, Z24", "VPTERNLOGD $0xb8, %s, Z31, Z24" % A,
                      "VPSLLD $2, Z29, Z25", "VPTERNLOGD $0xb8, %s, Z31, Z25" % B,
                      "VPSRLD $4, %s, Z26" % A, "VPTERNLOGD $0xe4, Z31, Z28, Z26",
                      "VPSRLD $4, %s, Z27" % B, "VPSRLD $2, Z29, Z29", "VPTERNLOGD $0xe4, Z31, Z29, Z27"]
                for o in range(4):
                    L += ["VPDPBUSD.BCST %d(DI), Z%d, Z%d" % (256*j+xoff(h, o, i), 24+o, 4*o+j) for j in range(4)]
            for o in range(4):
                L += ["VPMOVSXBD %d(SI), Z24" % (32+16*sub(h, k, o))]
                for j in range(4):
                    L += ["VPMULLD Z24, Z%d, Z%d" % (4*o+j, 4*o+j), "VPADDD Z%d, Z%d, Z%d" % (4*o+j, 16+j, 16+j)]
    L += ["VCVTPH2PS (SI), Z24"]
    for j in range(4):
        L += ["VCVTDQ2PS Z%d, Z%d" % (16+j, 16+j), "VMULPS Z24, Z%d, Z%d" % (16+j, 16+j),
              "VFMADD231PS.BCST %d(R8), Z%d, Z%d" % (4*j, 16+j, 20+j)]
    L += tail(4, "q6k4loop")
    L += ["VMOVUPS Z%d, %d(DX)" % (20+j, 64*j) for j in range(4)]
    L += ["VZEROUPPER", "RET"]
    for l in L: e("\t" + l)
    e()

def vnni_xp(P, pf):
    name = "packedQ6Kx%dVNNI" % P
    e("// func %s(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)" % name)
    e("TEXT ·%s(SB), NOSPLIT, $0-48" % name)
    L = setup("·kStreamAhead(SB)")
    L += ["VPXORD Z%d, Z%d, Z%d" % (16+j, 16+j, 16+j) for j in range(P)]
    for l in L: e("\t" + l)
    lab = "q6k%dloop" % P
    e(lab + ":")
    L = (prefetch_head() if pf else []) + ["VCVTPH2PS (SI), Z27"]
    L += ["VPXORD Z%d, Z%d, Z%d" % (8+j, 8+j, 8+j) for j in range(P)]
    for h in (0, 1):
        for k in (0, 1):
            for o in range(4):
                s = sub(h, k, o)
                L += ["VPBROADCASTD %d(R9), Z%d" % (4*(XC*j+s), j) for j in range(P)]
                for i in range(4*k, 4*k+4):
                    T = trip(h, i)
                    if pf and o == 0:
                        L += prefetch_trip(T)
                    L += vnni_decode(o, T, "Z24", "Z25")
                    L += ["VPDPBUSD.BCST %d(DI), Z24, Z%d" % (256*j+xoff(h, o, i), j) for j in range(P)]
                L += ["VPMOVSXBD %d(SI), Z26" % (32+16*s)]
                for j in range(P):
                    L += ["VPMULLD Z26, Z%d, Z%d" % (j, j), "VPADDD Z%d, Z%d, Z%d" % (j, 8+j, 8+j)]
    for j in range(P):
        L += ["VCVTDQ2PS Z%d, Z%d" % (8+j, 8+j), "VMULPS Z27, Z%d, Z%d" % (8+j, 8+j),
              "VFMADD231PS.BCST %d(R8), Z%d, Z%d" % (4*j, 8+j, 16+j)]
    L += tail(P, lab)
    L += ["VMOVUPS Z%d, %d(DX)" % (16+j, 64*j) for j in range(P)]
    L += ["VZEROUPPER", "RET"]
    for l in L: e("\t" + l)
    e()

# ---------------- AVX2 ----------------
# avx2_decode4 decodes output o of the triple whose chunks are in Y8 (A),
# Y9 (B) and Y10 (H) into Y11, Y13 scratch, Y15 bytes 0x0f.
def avx2_decode4(o):
    m30 = "q6kHigh<>(SB)"
    if o == 0:
        return ["VPSLLW $4, Y10, Y13", "VPAND %s, Y13, Y13" % m30, "VPAND Y15, Y8, Y11", "VPOR Y13, Y11, Y11"]
    if o == 1:
        return ["VPSLLW $2, Y10, Y13", "VPAND %s, Y13, Y13" % m30, "VPAND Y15, Y9, Y11", "VPOR Y13, Y11, Y11"]
    if o == 2:
        return ["VPSRLW $4, Y8, Y11", "VPAND Y15, Y11, Y11", "VPAND %s, Y10, Y13" % m30, "VPOR Y13, Y11, Y11"]
    return ["VPSRLW $4, Y9, Y11", "VPAND Y15, Y11, Y11", "VPSRLW $2, Y10, Y13", "VPAND %s, Y13, Y13" % m30,
            "VPOR Y13, Y11, Y11"]

# avx2_x1 is the one-column kernel: each triple's chunks loaded once per
# half and decoded to all four of its quant dwords, as the VNNI kernels
# do, so that the loads (which bound the panels' pass per sub-block) are
# three per triple and half plus the column's four broadcasts.
def avx2_x1():
    name = "packedQ6Kx1AVX2"
    e("// func %s(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)" % name)
    e("//")
    e("// The panels' kernel for one column, a triple at a time: Y8..Y10 its")
    e("// chunks (A, B, H), Y11 a quant dword decoded from them, Y14 the")
    e("// column's broadcast quant dword, Y4..Y7 the int16 sums of two")
    e("// triples' products, Y0..Y3 the four sub-blocks' sums (from the")
    e("// column's offsets), Y12 the half's block sum, Y13 scratch.")
    e("TEXT ·%s(SB), NOSPLIT, $0-48" % name)
    L = ["MOVQ w+0(FP), SI", "MOVQ xq+8(FP), DI", "MOVQ xd+16(FP), R8", "MOVQ xc+24(FP), R9",
         "MOVQ nb+32(FP), CX", "MOVQ tile+40(FP), DX", "MOVQ ·kColumnAheadAVX2(SB), R10",
         "MOVL $0x0f0f0f0f, AX", "VMOVD AX, X15", "VPBROADCASTD X15, Y15",
         "VPXOR Y0, Y0, Y0", "VMOVDQU Y0, 0(DX)", "VMOVDQU Y0, 32(DX)"]
    for l in L: e("\t" + l)
    e("q6k1avx2loop:")
    L = prefetch_head()
    for hr in (0, 1):
        L += ["VPXOR Y12, Y12, Y12"]
        for h in (0, 1):
            for k in (0, 1):
                L += ["VPBROADCASTD %d(R9), Y%d" % (4*sub(h, k, o), o) for o in range(4)]
                for pair in (0, 1):
                    for n in (0, 1):
                        i = 4*k + 2*pair + n
                        T = trip(h, i)
                        if hr == 0:
                            L += prefetch_trip(T)
                        L += ["VMOVDQU %d(SI), Y8" % (T+32*hr), "VMOVDQU %d(SI), Y9" % (T+64+32*hr),
                              "VMOVDQU %d(SI), Y10" % (T+128+32*hr)]
                        for o in range(4):
                            L += avx2_decode4(o)
                            L += ["VPBROADCASTD %d(DI), Y14" % xoff(h, o, i)]
                            if n == 0:
                                L += ["VPMADDUBSW Y14, Y11, Y%d" % (4+o)]
                            else:
                                L += ["VPMADDUBSW Y14, Y11, Y11", "VPADDW Y11, Y%d, Y%d" % (4+o, 4+o)]
                    for o in range(4):
                        L += ["VPMADDWD q6kOnes<>(SB), Y%d, Y%d" % (4+o, 4+o), "VPADDD Y%d, Y%d, Y%d" % (4+o, o, o)]
                for o in range(4):
                    L += ["VPMOVSXBD %d(SI), Y13" % (32+16*sub(h, k, o)+8*hr), "VPMULLD Y13, Y%d, Y%d" % (o, o),
                          "VPADDD Y%d, Y12, Y12" % o]
        L += ["VCVTPH2PS %d(SI), Y13" % (16*hr), "VCVTDQ2PS Y12, Y12", "VMULPS Y13, Y12, Y12",
              "VBROADCASTSS (R8), Y13", "VMOVUPS %d(DX), Y14" % (32*hr), "VFMADD231PS Y13, Y12, Y14",
              "VMOVUPS Y14, %d(DX)" % (32*hr)]
    L += tail(1, "q6k1avx2loop")
    L += ["VZEROUPPER", "RET"]
    for l in L: e("\t" + l)
    e()

# avx2_xn is the panels of P (four or eight) columns. Each sub-block's
# sum per column stays in int16: the four vpmaddubsw of the quants
# (0..63) by x, plus x's offset as two int16 halves (xc's second 16,
# q6OffsetPair), wrap on the way to Σ(q−32)·x, which fits; one vpmaddwd
# by the rows' scales widens and scales it (each lane's two words the
# row's scale, sign-extended by vpsraw from the high byte vpshufb puts it
# in; vpblendw there was far slower, docs/performance.md). That is 5
# multiplies a column and sub-block where widening first (vpmaddwd by
# ones, vpmulld by the scales) took 7. The kernel loops over the block's
# halves of 128 elements, eight sub-blocks a pass, R11, R12, R13 and AX
# its pointers into the triples, the scales, x's quants and x's offsets,
# rather than unrolling the whole block (35 KB of code for the panel of
# eight). With pf (the panel of four, whose products stream the weights)
# it prefetches a line per line of the block into L2, R10 bytes ahead.
def avx2_xn(P, pf):
    name = "packedQ6Kx%dAVX2" % P
    e("// func %s(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)" % name)
    e("TEXT ·%s(SB), NOSPLIT, $0-48" % name)
    L = ["MOVQ w+0(FP), SI", "MOVQ xq+8(FP), DI", "MOVQ xd+16(FP), R8", "MOVQ xc+24(FP), R9",
         "MOVQ nb+32(FP), CX", "MOVQ tile+40(FP), DX", "VPXOR Y0, Y0, Y0"]
    if pf:
        L += ["MOVQ ·kStreamAhead(SB), R10"]
    L += ["VMOVDQU Y0, %d(DX)" % (32*c) for c in range(2*P)]
    for l in L: e("\t" + l)
    lab = "q6k%davx2loop" % P
    e(lab + ":")
    T_ = lambda j: "Y%d" % (4+j)
    def dec(k, o, n, hr):
        T = trip(0, 4*k+n)
        A, B, H = "%d(R11)" % T, "%d(R11)" % (T+64), "%d(R11)" % (T+128)
        q, t = "Y%d" % n, "Y15"
        L = ["PREFETCHT1 %d(R11)(R10*1)" % (T+c) for c in (0, 64, 128)] if pf and hr == 0 and o == 0 else []
        if o in (0, 1):
            return L + ["VMOVDQU %s, %s" % (A if o == 0 else B, q), "VPAND q6kLow<>(SB), %s, %s" % (q, q),
                        "VMOVDQU %s, %s" % (H, t), "VPSLLD $%d, %s, %s" % (4 if o == 0 else 2, t, t),
                        "VPAND q6kHigh<>(SB), %s, %s" % (t, t), "VPOR %s, %s, %s" % (t, q, q)]
        L += ["VMOVDQU %s, %s" % (A if o == 2 else B, q), "VPSRLD $4, %s, %s" % (q, q),
              "VPAND q6kLow<>(SB), %s, %s" % (q, q), "VMOVDQU %s, %s" % (H, t)]
        if o == 3:
            L += ["VPSRLD $2, %s, %s" % (t, t)]
        return L + ["VPAND q6kHigh<>(SB), %s, %s" % (t, t), "VPOR %s, %s, %s" % (t, q, q)]
    def body(hr):
        L = []
        for k in (0, 1):
            for o in range(4):
                sb = sub(0, k, o)  # R12 and AX step 8 sub-blocks a pass
                for n in range(4):
                    L += dec(k, o, n, hr)
                L += ["VPBROADCASTQ %d(R12), Y12" % (32+16*sb), "VPSHUFB q6kScales<>(SB), Y12, Y12", "VPSRAW $8, Y12, Y12"]
                for j in range(P):
                    x = lambda n: "%d(R13)" % (256*j + xoff(0, o, 4*k+n))
                    L += ["VPBROADCASTD %s, Y13" % x(0), "VPMADDUBSW Y13, Y0, Y13"]
                    for n in (1, 2, 3):
                        L += ["VPBROADCASTD %s, Y14" % x(n), "VPMADDUBSW Y14, Y%d, Y14" % n, "VPADDW Y14, Y13, Y13"]
                    L += ["VPBROADCASTD %d(AX), Y14" % (4*(XC*j+16+sb)), "VPADDW Y14, Y13, Y13",
                          "VPMADDWD Y12, Y13, Y13", "VPADDD Y13, %s, %s" % (T_(j), T_(j))]
        return L
    for hr in (0, 1):
        L = prefetch_head() if pf and hr == 0 else []
        L += ["VPXOR %s, %s, %s" % (T_(j), T_(j), T_(j)) for j in range(P)]
        L += ["LEAQ %d(SI), R11" % (32*hr), "LEAQ %d(SI), R12" % (8*hr), "MOVQ DI, R13", "MOVQ R9, AX", "MOVQ $2, BX"]
        for l in L: e("\t" + l)
        e("%s%d:" % (lab, hr))
        L = body(hr)
        L += ["ADDQ $1536, R11", "ADDQ $128, R12", "ADDQ $128, R13", "ADDQ $32, AX", "DECQ BX", "JNZ %s%d" % (lab, hr)]
        # the half's rows' d, times each column's dx, into the tile
        L += ["VCVTPH2PS %d(SI), Y12" % (16*hr)]
        for j in range(P):
            a = "%d(DX)" % (4*(16*j+8*hr))
            L += ["VCVTDQ2PS %s, %s" % (T_(j), T_(j)), "VMULPS Y12, %s, %s" % (T_(j), T_(j)),
                  "VBROADCASTSS %d(R8), Y13" % (4*j), "VMOVUPS %s, Y14" % a,
                  "VFMADD231PS Y13, %s, Y14" % T_(j), "VMOVUPS Y14, %s" % a]
        for l in L: e("\t" + l)
    L = tail(P, lab)
    L += ["VZEROUPPER", "RET"]
    for l in L: e("\t" + l)
    e()

VNNI_DOC = """// The q6_K packed kernels (packedq6k_amd64.go; layout in pack.go, panels
// in packed.go), AVX-512 VNNI, one zmm lane per row of the group.
// Registers: SI the group's block, DI the panel's quants, R8 its d
// (float32), R9 its sub-block offsets (−32·Σx: the first 16 of a column
// block's 32 int32s), CX blocks left, DX the tile, R10 the prefetch
// distance; Z31 bytes 0x0f, Z30 bytes 0x33 (one
// and four columns) or 0x30 (eight).
//
// A triple's chunks A, B (ql) and H (qh) give four dwords of 6-bit quants
// per row: A's low nibbles with H's bits 0–1 as bits 4–5, B's with bits
// 2–3, A's high nibbles with bits 4–5, B's with bits 6–7. The kernels of
// one and four columns mask H twice (H & 0x33, H & 0xcc), so that one
// shift puts each field at bits 4–5 with zeros above, and vpternlogd
// selects bits 0–3 from the nibbles and 4–7 from the shifted H; the
// panel of eight, which decodes one dword at a time, masks the shifted H
// by 0x30 and ors it in. Each sub-block's sum starts from the
// column's offset, adds the quants times the column's quant dwords
// (vpdpbusd, exact int32), is multiplied by the rows' scales (vpmulld)
// and added to the block's sum: ggml's integer sum. Then in float32
// tile += (d·isum)·dx.
//
// The kernels of one and four columns read the block in address order,
// its head then the triples, decoding all four quant dwords of a triple
// (four sub-block sums per column at a time), and prefetch into L2 a line
// per line of the group block, R10 bytes ahead (·kColumnAhead for one
// column, ·kStreamAhead for four). The panel of eight takes one sub-block
// at a time over its four triples (re-read from L1), so that the columns'
// sums fit the registers.
"""

AVX2_DOC = """// The q6_K packed kernels at the avx2 level (packedq6k_amd64.go): a group
// block as two halves of 8 rows, one ymm lane per row, each half's pass
// over the block after the other's (the second from L1). The panels' (of
// four and eight columns) take a sub-block at a time: its four quant
// dwords decoded as packedq6k_amd64.s does (vpand, vpor for vpternlogd),
// then per column vpmaddubsw against the column's broadcast quant dwords
// and the column's offset as two int16 halves (xc's second 16 int32s),
// all added in int16, wrapping on the way to Σ(q−32)·x, which fits
// (|·| ≤ 8·32·127 per half of a lane), and one vpmaddwd by the rows'
// scales (each lane's two words the row's scale) into the columns' int32
// sums: ggml's integer sum. The one-column kernel adds its four
// vpmaddubsw two by two (at most 2·2·63·127: no saturation), widens them
// by vpmaddwd by ones onto the column's offset (−32·Σx) and multiplies by
// the scales (vpmulld). The tile in float32 as the VNNI kernels, read and
// written once per half and block. Registers of the panels: Y0..Y3 the
// sub-block's quants, Y4.. the columns' block sums, Y12 the scales, Y13
// and Y14 a column's sums, Y15 scratch.
"""

which = sys.argv[1]
if which == "vnni":
    e(HEAD)
    e(VNNI_DOC)
    vnni_x1()
    vnni_x4()
    vnni_xp(8, False)
else:
    e(HEAD)
    e(AVX2_DOC)
    e("DATA q6kLow<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f")
    e("DATA q6kLow<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f")
    e("DATA q6kLow<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f")
    e("DATA q6kLow<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f")
    e("GLOBL q6kLow<>(SB), RODATA|NOPTR, $32")
    e()
    e("DATA q6kHigh<>+0(SB)/8, $0x3030303030303030")
    e("DATA q6kHigh<>+8(SB)/8, $0x3030303030303030")
    e("DATA q6kHigh<>+16(SB)/8, $0x3030303030303030")
    e("DATA q6kHigh<>+24(SB)/8, $0x3030303030303030")
    e("GLOBL q6kHigh<>(SB), RODATA|NOPTR, $32")
    e()
    e("DATA q6kOnes<>+0(SB)/8, $0x0001000100010001")
    e("DATA q6kOnes<>+8(SB)/8, $0x0001000100010001")
    e("DATA q6kOnes<>+16(SB)/8, $0x0001000100010001")
    e("DATA q6kOnes<>+24(SB)/8, $0x0001000100010001")
    e("GLOBL q6kOnes<>(SB), RODATA|NOPTR, $32")
    e()
    # row r's scale byte to the high byte of both words of lane r
    for q in range(4):
        r0, r1 = 2*q % 4 + 4*(q//2), 2*q % 4 + 1 + 4*(q//2)
        e("DATA q6kScales<>+%d(SB)/8, $0x%02x80%02x80%02x80%02x80" % (8*q, r1, r1, r0, r0))
    e("GLOBL q6kScales<>(SB), RODATA|NOPTR, $32")
    e()
    avx2_x1()
    avx2_xn(4, True)
    avx2_xn(8, False)
sys.stdout.write("\n".join(out).rstrip() + "\n")
