#!/usr/bin/env python3
# packedk8.py writes runtime/cpu's AVX2 q4_K panel-of-eight kernel,
# packedk8_avx2_amd64.s, on standard output (go generate in runtime/cpu
# runs it; TestPackedGenerated checks the committed file is its output).
# The kernel is unrolled over a block's sub-blocks and chunks, so it is
# written by loops here rather than by hand.
import sys
out = []
def e(s=""): out.append(s)

BLK = 2368   # a group block: one super-block of 256 for 16 rows
COLS = 8     # the panel's columns
NAME = "packedQ4Kx8AVX2"

e("""//go:build !noasm

#include "textflag.h"

// The q4_K packed kernel of a panel of eight columns at the avx2 level
// (packedk_amd64.go; layout in pack.go). It makes four passes over the
// blocks, each taking four (half, column) lanes, a half being 8 rows of
// the group, one ymm lane per row: the lanes of half h and columns 4g..
// 4g+3 in pass 2g+h. Per block and sub-block: vpmaddubsw of the nibbles
// against the column's broadcast quant dwords, added in int16 over the
// sub-block's eight chunks (at most 8·2·15·127 = 30480: no saturation),
// then one vpmaddwd by the rows' scales (each lane's two words the row's
// scale) for the int32 sum; the mins by vpmaddwd with the column's
// sub-block sums; the tile in float32 as the VNNI kernels. Registers:
// Y0..Y3 the lanes' int16 sums (then their mins' sums), Y4..Y7 their
// scaled sums, Y8 the half's chunk, Y9 the broadcast, Y15 bytes 0x0f.
""")

def args():
    return ["MOVQ w+0(FP), SI", "MOVQ xq+8(FP), DI", "MOVQ xd+16(FP), R8", "MOVQ xc+24(FP), R9",
            "MOVQ nb+32(FP), CX"]

def pass_body(hh, cols):
    L = []
    for s in range(8):
        q, high = s // 2, s % 2
        for c in range(8):
            L.append("VMOVDQU %d(SI), Y8" % (320 + 512*q + 64*c + 32*hh))
            if high:
                L.append("VPSRLW $4, Y8, Y8")
            L.append("VPAND Y15, Y8, Y8")
            for j, col in enumerate(cols):
                L.append("VPBROADCASTD %d(DI), Y9" % (256*col + 32*s + 4*c))
                if c == 0:
                    L.append("VPMADDUBSW Y9, Y8, Y%d" % j)
                else:
                    L += ["VPMADDUBSW Y9, Y8, Y10", "VPADDW Y10, Y%d, Y%d" % (j, j)]
        L += ["VPMOVZXBD %d(SI), Y10" % (64 + 16*s + 8*hh), "VPSLLD $16, Y10, Y11", "VPOR Y11, Y10, Y10"]
        for j in range(len(cols)):
            if s == 0:
                L.append("VPMADDWD Y10, Y%d, Y%d" % (j, 4+j))
            else:
                L += ["VPMADDWD Y10, Y%d, Y%d" % (j, j), "VPADDD Y%d, Y%d, Y%d" % (j, 4+j, 4+j)]
    for p in range(4):
        L.append("VPMOVZXBW %d(SI), Y8" % (192 + 32*p + 16*hh))
        for j, col in enumerate(cols):
            L.append("VPBROADCASTD %d(R9), Y9" % (16*col + 4*p))
            if p == 0:
                L.append("VPMADDWD Y9, Y8, Y%d" % j)
            else:
                L += ["VPMADDWD Y9, Y8, Y9", "VPADDD Y9, Y%d, Y%d" % (j, j)]
    for j, col in enumerate(cols):
        t = "%d(DX)" % (64*col + 32*hh)
        L += ["VCVTPH2PS %d(SI), Y10" % (16*hh), "VCVTPH2PS %d(SI), Y11" % (32 + 16*hh),
              "VCVTDQ2PS Y%d, Y%d" % (4+j, 4+j), "VCVTDQ2PS Y%d, Y%d" % (j, j),
              "VMULPS Y10, Y%d, Y%d" % (4+j, 4+j), "VFNMADD231PS Y11, Y%d, Y%d" % (j, 4+j),
              "VBROADCASTSS %d(R8), Y9" % (4*col), "VMOVUPS %s, Y13" % t,
              "VFMADD231PS Y9, Y%d, Y13" % (4+j), "VMOVUPS Y13, %s" % t]
    return L

e("// func %s(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32)" % NAME)
e("TEXT ·%s(SB), NOSPLIT, $0-48" % NAME)
L = ["MOVL $0x0f0f0f0f, AX", "VMOVD AX, X15", "VPBROADCASTD X15, Y15", "MOVQ tile+40(FP), DX", "VPXOR Y0, Y0, Y0"]
L += ["VMOVDQU Y0, %d(DX)" % (32*i) for i in range(2*COLS)]
L += args()
for l in L: e("\t" + l)
for p in range(4):
    g, hh = p // 2, p % 2
    e()
    e("%s%d:" % (NAME, p))
    L = pass_body(hh, list(range(4*g, 4*g+4)))
    L += ["ADDQ $%d, SI" % BLK, "ADDQ $%d, DI" % (256*COLS), "ADDQ $%d, R8" % (4*COLS), "ADDQ $%d, R9" % (16*COLS),
          "DECQ CX", "JNZ %s%d" % (NAME, p)]
    if p < 3:
        L += args()
    else:
        L += ["VZEROUPPER", "RET"]
    for l in L: e("\t" + l)
sys.stdout.write("\n".join(out) + "\n")
