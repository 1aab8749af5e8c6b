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
# vnni_q3 decodes the fourth quant dword of the triple at T into q (t
# scratch): the chunks' bits 6-7 shifted into place and selected by the
# masks m03 and m0f (vpternlogd $0xd8: "C ? B : A", C the mask), then and
# 0x3f (Z31).
def vnni_q3(T, q, t, m03, m0f):
    C0, C1, C2 = "%d(SI)" % T, "%d(SI)" % (T+64), "%d(SI)" % (T+128)
    return ["VPSRLD $6, %s, %s" % (C0, q), "VPSRLD $4, %s, %s" % (C1, t),
            "VPTERNLOGD $0xd8, %s, %s, %s" % (m03, q, t),
            "VPSRLD $2, %s, %s" % (C2, q), "VPTERNLOGD $0xd8, %s, %s, %s" % (m0f, t, q),
            "VPANDD Z31, %s, %s" % (q, q)]

# vnni_decode decodes output o of the triple at T into q (t scratch), for
# the panel of eight: Z31 bytes 0x3f, Z30 0x03, Z29 0x0f.
def vnni_decode(o, T, q, t):
    if o < 3:
        return ["VPANDD %d(SI), Z31, %s" % (T+64*o, q)]
    return vnni_q3(T, q, t, "Z30", "Z29")

# vnni_decode4 decodes all four quant dwords of the triple at T into
# Z4..Z7 for the one-column kernel (Z8 scratch; Z31 bytes 0x3f, Z30 0x03,
# Z29 0x0f).
def vnni_decode4(T):
    return ["VPANDD %d(SI), Z31, Z%d" % (T+64*o, 4+o) for o in range(3)] + vnni_q3(T, "Z7", "Z8", "Z30", "Z29")

def prefetch_head():
    return ["PREFETCHT1 %d(SI)(R10*1)" % c for c in (0, 64, 128, 192, 256)]
def prefetch_trip(T):
    return ["PREFETCHT1 %d(SI)(R10*1)" % (T+c) for c in (0, 64, 128)]

def setup(ahead):
    return ["MOVQ w+0(FP), SI", "MOVQ xq+8(FP), DI", "MOVQ xd+16(FP), R8", "MOVQ xc+24(FP), R9",
            "MOVQ nb+32(FP), CX", "MOVQ tile+40(FP), DX", "MOVQ %s, R10" % ahead,
            "MOVL $0x3f3f3f3f, AX", "VPBROADCASTD AX, Z31", "MOVL $0x03030303, AX", "VPBROADCASTD AX, Z30",
            "MOVL $0x0f0f0f0f, AX", "VPBROADCASTD AX, Z29"]

def tail(P, label):
    return ["ADDQ $%d, SI" % BLK, "ADDQ $%d, DI" % (256*P), "ADDQ $%d, R8" % (4*P), "ADDQ $%d, R9" % (4*XC*P),
            "DECQ CX", "JNZ %s" % label]

def vnni_x1():
    e("// func packedQ6Kx1VNNI(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)")

    e("TEXT ·packedQ6Kx1VNNI(SB), NOSPLIT, $0-48")
    L = []
    L += setup("·kColumnAhead(SB)")
    L += ["VPXORD Z16, Z16, Z16"]
    for l in L: e("\t" + l)
    e("q6k1loop:")
    L = prefetch_head() + ["VCVTPH2PS (SI), Z27", "VPXORD Z28, Z28, Z28"]
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
    L += ["VCVTDQ2PS Z28, Z28", "VMULPS Z27, Z28, Z28", "VFMADD231PS.BCST (R8), Z28, Z16"]
    L += tail(1, "q6k1loop")
    L += ["VMOVUPS Z16, (DX)", "VZEROUPPER", "RET"]
    for l in L: e("\t" + l)
    e()

# vnni_x4 is vnni_x1 for a panel of four columns: Z(4o+j) output o's
# sub-block sum for column j, Z16..Z19 the columns' block sums, Z20..Z23
# their tiles, Z24..Z27 a triple's quant dwords, Z28 scratch.
def vnni_x4():
    name = "packedQ6Kx4VNNI"
    e("// func %s(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)" % name)
    e("//")
    e("// packedQ6Kx1VNNI for a panel of four columns (two to four tokens):")
    e("// Z(4o+j) the sum of column j's sub-block of output o, Z16..Z19 the")
    e("// columns' block sums, Z20..Z23 their tiles, Z24..Z27 a triple's quant")
    e("// dwords, Z28 scratch.")
    e("TEXT ·%s(SB), NOSPLIT, $0-48" % name)
    L = setup("·kStreamAhead(SB)")
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
                L += prefetch_trip(T)
                L += ["VPANDD %d(SI), Z31, Z%d" % (T+64*o, 24+o) for o in range(3)]
                L += vnni_q3(T, "Z27", "Z28", "Z30", "Z29")
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
# avx2_decode4 decodes output o of the triple whose chunks are in Y8,
# Y9 and Y10 into Y11, Y13 scratch, Y15 bytes 0x3f.
def avx2_decode4(o):
    if o < 3:
        return ["VPAND Y15, Y%d, Y11" % (8+o)]
    return ["VPANDN Y8, Y15, Y11", "VPSRLW $6, Y11, Y11", "VPANDN Y9, Y15, Y13", "VPSRLW $4, Y13, Y13",
            "VPOR Y13, Y11, Y11", "VPANDN Y10, Y15, Y13", "VPSRLW $2, Y13, Y13", "VPOR Y13, Y11, Y11"]

# avx2_scales puts the 8 rows' scale bytes at src in both int16 words of
# their lanes of y (sign-extended), what vpmaddwd multiplies an int16
# sub-block sum by.
def avx2_scales(src, y):
    return ["VPBROADCASTQ %s, %s" % (src, y), "VPSHUFB q6kScales<>(SB), %s, %s" % (y, y), "VPSRAW $8, %s, %s" % (y, y)]

# avx2_x1 is the one-column kernel: each triple's chunks loaded once per
# half and decoded to all four of its quant dwords, as the VNNI kernels
# do, so that the loads (which bound the panels' pass per sub-block) are
# three per triple and half plus the column's four broadcasts. Each
# sub-block's sum stays in int16 as the panels' does (four vpmaddubsw,
# the offset pair, one vpmaddwd by the rows' scales).
def avx2_x1():
    name = "packedQ6Kx1AVX2"
    e("// func %s(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)" % name)
    e("//")
    e("// The panels' kernel for one column, a triple at a time: Y8..Y10 its")
    e("// chunks, Y11 a quant dword decoded from them, Y14 the column's")
    e("// broadcast quant dword, Y4..Y7 the int16 sums of the four sub-blocks")
    e("// the triples hold, Y12 the half's block sum, Y13 scratch.")
    e("TEXT ·%s(SB), NOSPLIT, $0-48" % name)
    L = ["MOVQ w+0(FP), SI", "MOVQ xq+8(FP), DI", "MOVQ xd+16(FP), R8", "MOVQ xc+24(FP), R9",
         "MOVQ nb+32(FP), CX", "MOVQ tile+40(FP), DX", "MOVQ ·kColumnAheadAVX2(SB), R10",
         "MOVL $0x3f3f3f3f, AX", "VMOVD AX, X15", "VPBROADCASTD X15, Y15",
         "VPXOR Y0, Y0, Y0", "VMOVDQU Y0, 0(DX)", "VMOVDQU Y0, 32(DX)"]
    for l in L: e("\t" + l)
    e("q6k1avx2loop:")
    L = prefetch_head()
    for hr in (0, 1):
        L += ["VPXOR Y12, Y12, Y12"]
        for h in (0, 1):
            for k in (0, 1):
                for n in range(4):
                    i = 4*k + n
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
                    sb = sub(h, k, o)
                    L += ["VPBROADCASTD %d(R9), Y13" % (4*(16+sb)), "VPADDW Y13, Y%d, Y%d" % (4+o, 4+o)]
                    L += avx2_scales("%d(SI)" % (32+16*sb+8*hr), "Y13")
                    L += ["VPMADDWD Y13, Y%d, Y%d" % (4+o, 4+o), "VPADDD Y%d, Y12, Y12" % (4+o)]
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
        q, t = "Y%d" % n, "Y15"
        L = ["PREFETCHT1 %d(R11)(R10*1)" % (T+c) for c in (0, 64, 128)] if pf and hr == 0 and o == 0 else []
        if o < 3:
            return L + ["VMOVDQU %d(R11), %s" % (T+64*o, q), "VPAND q6kMask<>(SB), %s, %s" % (q, q)]
        for c in range(3):
            r = q if c == 0 else t
            L += ["VMOVDQU %d(R11), %s" % (T+64*c, r), "VPAND q6kTop<>(SB), %s, %s" % (r, r),
                  "VPSRLW $%d, %s, %s" % (6-2*c, r, r)]
            if c > 0:
                L += ["VPOR %s, %s, %s" % (t, q, q)]
        return L
    def body(hr):
        L = []
        for k in (0, 1):
            for o in range(4):
                sb = sub(0, k, o)  # R12 and AX step 8 sub-blocks a pass
                for n in range(4):
                    L += dec(k, o, n, hr)
                L += avx2_scales("%d(R12)" % (32+16*sb), "Y12")
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
// distance; Z31 bytes 0x3f, Z30 bytes 0x03, Z29 bytes 0x0f.
//
// A triple's chunks C0, C1, C2 give four dwords of 6-bit quants per row:
// the chunks' bits 0–5 (and 0x3f) and the fourth from their bits 6–7,
// shifted into bits 0–1, 2–3 and 4–5 and selected by masks (vpternlogd).
// Each sub-block's sum starts from the column's offset, adds the quants
// times the column's quant dwords (vpdpbusd, exact int32), is multiplied
// by the rows' scales (vpmulld) and added to the block's sum: ggml's
// integer sum. Then in float32 tile += (d·isum)·dx.
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
// over the block after the other's (the second from L1). A triple's four
// quant dwords are decoded as packedq6k_amd64.s does: three chunks and
// 0x3f, the fourth from their bits 6–7 (and 0xc0, shift, or). Every
// kernel sums a sub-block per column in int16: the four vpmaddubsw of
// its quant dwords against the column's broadcast quant dwords (at most
// 2·63·127 each: no saturation) and the column's offset as two int16
// halves (xc's second 16 int32s), wrapping on the way to Σ(q−32)·x,
// which fits (|·| ≤ 8·32·127 per half of a lane), then one vpmaddwd by
// the rows' scales (each lane's two words the row's scale) into the
// int32 sums: ggml's integer sum. The panels (of four and eight columns)
// take a sub-block at a time, the one-column kernel a triple at a time
// (its four sub-blocks' sums at once). The tile in float32 as the VNNI
// kernels, read and written once per half and block. Registers of the
// panels: Y0..Y3 the sub-block's quants, Y4.. the columns' block sums,
// Y12 the scales, Y13 and Y14 a column's sums, Y15 scratch.
"""

# data writes a read-only constant of n bytes, each b.
def data(name, b, n):
    for off in range(0, n, 8):
        e("DATA %s<>+%d(SB)/%d, $0x%s" % (name, off, min(8, n-off), ("%02x" % b) * min(8, n-off)))
    e("GLOBL %s<>(SB), RODATA|NOPTR, $%d" % (name, n))
    e()

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
    data("q6kMask", 0x3f, 32)
    data("q6kTop", 0xc0, 32)
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
