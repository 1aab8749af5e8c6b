package cpu_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// kScaleFields are the byte offsets of each weight type's f16 scales in
// its block: the builder makes them sane, the other bytes are random.
var kScaleFields = map[tensor.DType][]int{
	tensor.Q4_1: {0, 2}, tensor.Q5_0: {0}, tensor.Q5_1: {0, 2}, tensor.IQ4_NL: {0},
	tensor.Q2_K: {80, 82}, tensor.Q3_K: {108}, tensor.Q4_K: {0, 2}, tensor.Q5_K: {0, 2},
	tensor.Q6_K: {208}, tensor.IQ4_XS: {0},
}

// kBlocks returns nb random blocks of type t: random quant and sub-scale
// bytes (all 0xff, the largest magnitudes, when ext; q6_K's scales then
// -128) and random f16 scales.
func kBlocks(r *rand.Rand, t tensor.DType, nb int, ext bool) []byte {
	size := t.Size()
	b := make([]byte, nb*size)
	for i := range b {
		b[i] = byte(r.Uint32())
		if ext {
			b[i] = 0xff
		}
	}
	for blk := 0; blk < nb; blk++ {
		o := blk * size
		if ext && t == tensor.Q6_K {
			for j := 192; j < 208; j++ {
				b[o+j] = 0x80
			}
		}
		for _, f := range kScaleFields[t] {
			binary.LittleEndian.PutUint16(b[o+f:], tensor.F32ToF16(float32(r.NormFloat64()*0.01)))
		}
	}
	return b
}

// kActivations returns k random floats (some blocks all zero, some with a
// value much larger than the rest) and, when ext, rows whose quants are
// all ±127.
func kActivations(r *rand.Rand, k int, ext bool) []float32 {
	x := make([]float32, k)
	for i := range x {
		x[i] = float32(r.NormFloat64())
		if ext {
			x[i] = float32(1 - 2*(i%2))
			if r.IntN(2) == 0 {
				x[i] = -1
			}
		}
	}
	if !ext && k >= 512 {
		clear(x[256:512])
		x[r.IntN(k)] = 1e4
	}
	return x
}

// TestKQuantAsm checks the K-quants' assembly against their Go loops at
// the levels this machine has, on random blocks and on the extremes (the
// largest quants, scales and activations: no int16 saturation): bit for
// bit where the assembly adds the blocks as the Go loop does (each block's
// integer sums exact, its float32 value and the running sum rounded as
// in the loop), else to kAgree's float32 rounding bound.
func TestKQuantAsm(t *testing.T) {
	avx2 := slices.Contains(cpu.ISAs(), "avx2")
	vnni := slices.Contains(cpu.ISAs(), "avx512") && cpu.HasVNNI()
	if !avx2 {
		t.Skip("no AVX2: the assembly does not run here (the Go loops are MulMat's)")
	}
	r := rand.New(rand.NewPCG(21, 22))
	for _, dt := range []tensor.DType{tensor.Q4_K, tensor.Q5_K, tensor.Q6_K, tensor.Q2_K, tensor.Q3_K, tensor.IQ4_XS} {
		kk := cpu.KQuantKernels[dt]
		for _, nb := range []int{0, 1, 2, 3, 8, 17} {
			for rep := 0; rep < 12; rep++ {
				ext := rep < 2
				a := kBlocks(r, dt, nb, ext)
				x := cpu.QuantizeActivations(nil, tensor.Q8_K, kActivations(r, 256*nb, ext))
				want := kk.Go(a, x, nb)
				if got := kk.AVX2(a, x, nb); !kAgree(dt, got, want, a, x, nb) {
					t.Fatalf("%v avx2, %d blocks (rep %d): got %g, want %g", dt, nb, rep, got, want)
				}
				if vnni {
					if got := kk.VNNI(a, x, nb); !kAgree(dt, got, want, a, x, nb) {
						t.Fatalf("%v vnni, %d blocks (rep %d): got %g, want %g", dt, nb, rep, got, want)
					}
				}
			}
		}
	}
}

// TestKQuantDotLevels checks every weight type's MulMat dot product at
// each level against the level "go" one, bit for bit (kAgree where the
// assembly sums in lanes).
func TestKQuantDotLevels(t *testing.T) {
	types := []tensor.DType{tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.IQ4_NL, tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K, tensor.IQ4_XS}
	r := rand.New(rand.NewPCG(23, 24))
	type kcase struct {
		dt   tensor.DType
		k    int
		a, x []byte
		want float32
	}
	var cases []kcase
	func() {
		defer cpu.UseISA("go")()
		for _, dt := range types {
			for _, nb := range []int{1, 4, 9} {
				k := nb * 256
				a := kBlocks(r, dt, k/dt.BlockSize(), nb == 1)
				x := cpu.QuantizeActivations(nil, cpu.VecDotType(dt), kActivations(r, k, nb == 1))
				xd, xs := q8_0Sides(dt, x)
				cases = append(cases, kcase{dt, k, a, x, cpu.KDot(dt)(a, x, xd, xs, k)})
			}
		}
	}()
	forISAs(t, func(t *testing.T) {
		for _, c := range cases {
			xd, xs := q8_0Sides(c.dt, c.x)
			if got := cpu.KDot(c.dt)(c.a, c.x, xd, xs, c.k); !kAgree(c.dt, got, c.want, c.a, c.x, c.k/256) {
				t.Fatalf("%v, k %d: got %g, want %g", c.dt, c.k, got, c.want)
			}
		}
	})
}

// q8_0Sides is x's block scales and quant sums (cpu.XScales, cpu.XSums)
// where dt's activations are q8_0, as MulMat passes them.
func q8_0Sides(dt tensor.DType, x []byte) ([]float32, []int32) {
	if cpu.VecDotType(dt) != tensor.Q8_0 {
		return nil, nil
	}
	return cpu.XScales(nil, x), cpu.XSums(nil, x)
}

// kAgree reports whether got, type dt's assembly over nb blocks of 256
// elements, agrees with want, its Go loop's: the same bits, or for the
// types summed in lanes within (2n+16)·2⁻²⁴ of cpu.KMagnitude, n the
// number of dt's blocks (each of the two orders rounds every partial sum
// once, 2n+8 of them at most, by at most 2⁻²⁴ of the magnitude).
func kAgree(dt tensor.DType, got, want float32, a, x []byte, nb int) bool {
	if !cpu.KSummedInLanes[dt] {
		return math.Float32bits(got) == math.Float32bits(want)
	}
	n := nb * 256 / dt.BlockSize()
	return math.Abs(float64(got)-float64(want)) <= float64(2*n+16)*0x1p-24*cpu.KMagnitude(dt, a, x, nb)
}

// TestKQuantRows checks the rows kernels at each level against the Go
// loop row by row, on rows apart by more than their size and results
// stored apart, within kAgree: every row computed, and nothing written
// between the results.
func TestKQuantRows(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	const nb, rows, ldd = 3, 7, 3
	for _, dt := range []tensor.DType{tensor.Q4_K, tensor.Q6_K, tensor.Q2_K, tensor.Q3_K, tensor.IQ4_XS} {
		size := dt.RowSize(nb * 256)
		lda := size + 40
		a := make([]byte, (rows-1)*lda+size)
		for i := 0; i < rows; i++ {
			copy(a[i*lda:], kBlocks(r, dt, nb, false))
		}
		x := cpu.QuantizeActivations(nil, tensor.Q8_K, kActivations(r, 256*nb, false))
		forISAs(t, func(t *testing.T) {
			dst := make([]float32, (rows-1)*ldd+1)
			for i := range dst {
				dst[i] = -1
			}
			cpu.KRows(dt)(a, lda, x, nb, dst, ldd, rows)
			for i, v := range dst {
				row := a[i/ldd*lda : i/ldd*lda+size]
				if i%ldd != 0 {
					if v != -1 {
						t.Fatalf("%v: dst[%d] written: %g", dt, i, v)
					}
				} else if want := cpu.KQuantKernels[dt].Go(row, x, nb); !kAgree(dt, v, want, row, x, nb) {
					t.Fatalf("%v row %d: got %g, want %g", dt, i/ldd, v, want)
				}
			}
		})
	}
}
