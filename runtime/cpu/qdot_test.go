package cpu_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// qdotBlockCounts are row lengths in blocks: below, at and around the
// assembly's groups of 8, odd ones, and a 4096-wide row (128).
var qdotBlockCounts = []int{0, 1, 2, 7, 8, 9, 13, 15, 16, 17, 24, 37, 64, 128, 131}

// randQuant is a random int8 quant; a quarter of them are the extremes lo
// and 127.
func randQuant(r *rand.Rand, lo int) byte {
	switch r.IntN(8) {
	case 0:
		return byte(int8(lo))
	case 1:
		return 127
	}
	return byte(int8(lo + r.IntN(128-lo)))
}

// randScale is a random f16 scale: mostly normal-sized, sometimes 0, tiny
// (subnormal) or large.
func randScale(r *rand.Rand) uint16 {
	switch r.IntN(16) {
	case 0:
		return 0
	case 1:
		return uint16(r.IntN(1024)) | uint16(r.IntN(2))<<15 // subnormal
	case 2:
		return tensor.F32ToF16(float32(r.NormFloat64() * 1000))
	}
	return tensor.F32ToF16(float32(r.NormFloat64() * 0.01))
}

// qBlocks returns nb random blocks of the given size (34: q8_0, 18: q4_0)
// at byte offset off of a buffer whose other bytes are random too (a read
// past the blocks changes the result), and the buffer. lo is the least
// quant (-128 for weights, -127 for activations); scale, when nonzero,
// is every block's scale.
func qBlocks(r *rand.Rand, size, nb, off, lo int, scale uint16) (s, buf []byte) {
	buf = make([]byte, off+nb*size+2*gd)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	s = buf[gd+off : gd+off+nb*size]
	for b := 0; b < nb; b++ {
		blk := s[b*size : (b+1)*size]
		sc := scale
		if sc == 0 {
			sc = randScale(r)
		}
		binary.LittleEndian.PutUint16(blk, sc)
		for j := 2; j < size; j++ {
			if size == 18 { // two nibbles: any byte, biased to 0x00, 0xff, 0x0f, 0xf0
				blk[j] = [...]byte{0, 0xff, 0x0f, 0xf0, byte(r.Uint32()), byte(r.Uint32()), byte(r.Uint32()), byte(r.Uint32())}[r.IntN(8)]
			} else {
				blk[j] = randQuant(r, lo)
			}
		}
	}
	return s, buf
}

type qdotKind struct {
	name   string
	size   int // bytes per weight block
	dot    func(a, x []byte, xd []float32, xs []int32, k int) float32
	goLoop func(a, x []byte, nb int) float32
	sum    func(a, x []byte) int32
}

var qdotKinds = []qdotKind{
	{"q8_0", 34, cpu.DotQ8_0, cpu.DotQ8_0Go, cpu.BlockSumQ8_0},
	{"q4_0", 18, cpu.DotQ4_0, cpu.DotQ4_0Go, cpu.BlockSumQ4_0},
}

// TestQDot checks the quantized dot products at every level against the
// Go loops: within 1e-6 of the row's Σ|float32(s)·d| (each block's product
// is exact; only the float32 summation order differs), on unaligned
// operands, without writing them.
func TestQDot(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(11, 12))
		for _, kd := range qdotKinds {
			for _, nb := range qdotBlockCounts {
				for _, off := range []int{0, 1, 3, 6} {
					for rep := 0; rep < 4; rep++ {
						a, abuf := qBlocks(r, kd.size, nb, off, -128, 0)
						x, xbuf := qBlocks(r, 34, nb, (off*7)%5, -127, 0)
						a0, x0 := bytes.Clone(abuf), bytes.Clone(xbuf)
						got := kd.dot(a, x, cpu.XScales(nil, x), cpu.XSums(nil, x), 32*nb)
						want := kd.goLoop(a, x, nb)
						var mag float64
						for b := 0; b < nb; b++ {
							ab, xb := a[b*kd.size:], x[b*34:]
							mag += math.Abs(float64(float32(kd.sum(ab, xb)) * cpu.BlockScale(ab, xb)))
						}
						if math.Abs(float64(got)-float64(want)) > 1e-6*mag || math.IsNaN(float64(got)) {
							t.Fatalf("%s, %d blocks, offset %d: got %g, want %g (Σ|terms| %g)", kd.name, nb, off, got, want, mag)
						}
						if !bytes.Equal(abuf, a0) || !bytes.Equal(xbuf, x0) {
							t.Fatalf("%s, %d blocks: operands written", kd.name, nb)
						}
					}
				}
			}
		}
	})
}

// TestQDotBlockSums checks that the integer block sums are exact, extremes
// included: with every scale 1 and at most 32 blocks, every partial sum is
// an integer below 2^24, so the float32 result is exact in any order.
func TestQDotBlockSums(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(13, 14))
		one := tensor.F32ToF16(1)
		for _, kd := range qdotKinds {
			for _, nb := range []int{8, 9, 16, 24, 31, 32} {
				for rep := 0; rep < 20; rep++ {
					a, _ := qBlocks(r, kd.size, nb, rep%4, -128, one)
					x, _ := qBlocks(r, 34, nb, 0, -127, one)
					if rep == 0 { // the largest block sums: -128·-127 and 127·127
						for b := 0; b < nb; b++ {
							for j := 2; j < kd.size; j++ {
								if kd.size == 18 {
									a[b*18+j] = 0x00 // -8 in both nibbles
								} else {
									a[b*34+j] = 0x80 // -128
								}
							}
							for j := 2; j < 34; j++ {
								x[b*34+j] = 0x81 // -127
							}
						}
					}
					var want int64
					for b := 0; b < nb; b++ {
						want += int64(kd.sum(a[b*kd.size:], x[b*34:]))
					}
					if got := kd.dot(a, x, cpu.XScales(nil, x), cpu.XSums(nil, x), 32*nb); float64(got) != float64(want) {
						t.Fatalf("%s, %d blocks: got %v, want %d", kd.name, nb, got, want)
					}
				}
			}
		}
	})
}

// TestQuantizeActivations checks the q8_0 activations at every level
// against the Go loop, byte for byte: ties, extremes, zero blocks,
// unaligned rows; and that no quant is -128 (the dot products' premise).
func TestQuantizeActivations(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(15, 16))
		for _, n := range []int{32, 64, 96, 256, 4096, 4128} {
			for _, off := range []int{0, 1, 5} {
				row, _ := guardedF32(r, n, off)
				for i := range row {
					switch r.IntN(16) {
					case 0:
						row[i] = 0
					case 1: // ties: an amax of 127 makes v·id = v
						row[i] = float32(r.IntN(255)-127) + 0.5
					case 2:
						row[i] = float32(r.NormFloat64() * 1e30)
					case 3:
						row[i] = float32(r.NormFloat64() * 1e-30)
					}
				}
				if n >= 64 {
					clear(row[32:64]) // a zero block
					row[64%n] = 127   // with ±127.5 ties around
				}
				got := cpu.QuantizeActivationsQ8_0([]byte{0xaa}, row)
				want := cpu.QuantizeActivationsQ8_0Go([]byte{0xaa}, row)
				if !bytes.Equal(got, want) {
					i := 0
					for got[i] == want[i] {
						i++
					}
					t.Fatalf("%d values, offset %d: byte %d = %#x, want %#x", n, off, i, got[i], want[i])
				}
				for b := 1; b < len(got); b += 34 {
					for _, q := range got[b+2 : b+34] {
						if q == 0x80 {
							t.Fatalf("%d values: a -128 quant", n)
						}
					}
				}
			}
		}
	})
}
