package cpu_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// q32Agree reports whether got, the assembly's dot product of type dt
// over nb blocks, agrees with want, its Go loop's: within (2nb+16)·2⁻²⁴
// of cpu.QMagnitude (each order rounds every partial sum once, two per
// block and the lanes' reduction at most, by at most 2⁻²⁴ of the
// magnitude).
func q32Agree(dt tensor.DType, got, want float32, a, x []byte, nb int) bool {
	return math.Abs(float64(got)-float64(want)) <= float64(2*nb+16)*0x1p-24*cpu.QMagnitude(dt, a, x, nb)
}

// TestQDot32Asm checks the assembly of q5_0, iq4_nl, q4_1 and q5_1
// against their Go loops at the levels this machine has, on random
// blocks and on the extremes (every quant and fifth bit set, activations
// all ±127: no int16 saturation).
func TestQDot32Asm(t *testing.T) {
	avx2 := slices.Contains(cpu.ISAs(), "avx2")
	vnni := slices.Contains(cpu.ISAs(), "avx512") && cpu.HasVNNI()
	if !avx2 {
		t.Skip("no AVX2: the assembly does not run here (the Go loops are MulMat's)")
	}
	r := rand.New(rand.NewPCG(41, 42))
	for _, dt := range []tensor.DType{tensor.Q5_0, tensor.IQ4_NL, tensor.Q4_1, tensor.Q5_1} {
		kk := cpu.Q32Kernels[dt]
		for _, nb := range []int{0, 8, 16, 40} {
			for rep := 0; rep < 12; rep++ {
				ext := rep < 2
				a := kBlocks(r, dt, nb, ext)
				x := cpu.QuantizeActivations(nil, cpu.VecDotType(dt), kActivations(r, 32*nb, ext))
				want := kk.Go(a, x, nb)
				if got := kk.AVX2(a, x, nb); !q32Agree(dt, got, want, a, x, nb) {
					t.Fatalf("%v avx2, %d blocks (rep %d): got %g, want %g", dt, nb, rep, got, want)
				}
				if vnni {
					if got := kk.VNNI(a, x, nb); !q32Agree(dt, got, want, a, x, nb) {
						t.Fatalf("%v vnni, %d blocks (rep %d): got %g, want %g", dt, nb, rep, got, want)
					}
				}
			}
		}
	}
}

// TestQDot2Levels checks MulMat's dot products of the types with
// qdot2/kdot2 assembly at each level against the level "go" one, on
// rows whose block count is no multiple of the assembly's group (the Go
// loop finishes them): within kAgree for the K-quants, q32Agree for the
// others.
func TestQDot2Levels(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	type qcase struct {
		dt     tensor.DType
		k      int
		a, x   []byte
		xd     []float32
		xs     []int32
		want   float32
		blocks int
	}
	var cases []qcase
	func() {
		defer cpu.UseISA("go")()
		for _, dt := range []tensor.DType{tensor.Q5_0, tensor.IQ4_NL, tensor.Q4_1, tensor.Q5_1, tensor.Q2_K, tensor.Q3_K, tensor.IQ4_XS} {
			for _, k := range []int{256, 256 * 3, 256*5 + 32*3, 256 * 9} {
				if k%dt.BlockSize() != 0 {
					continue
				}
				nb := k / dt.BlockSize()
				a := kBlocks(r, dt, nb, k == 256)
				x := cpu.QuantizeActivations(nil, cpu.VecDotType(dt), kActivations(r, k, k == 256))
				c := qcase{dt: dt, k: k, a: a, x: x, blocks: nb}
				if cpu.VecDotType(dt) == tensor.Q8_0 {
					c.xd, c.xs = cpu.XScales(nil, x), cpu.XSums(nil, x)
				}
				c.want = cpu.KDot(dt)(a, x, c.xd, c.xs, k)
				cases = append(cases, c)
			}
		}
	}()
	forISAs(t, func(t *testing.T) {
		for _, c := range cases {
			got := cpu.KDot(c.dt)(c.a, c.x, c.xd, c.xs, c.k)
			ok := kAgree(c.dt, got, c.want, c.a, c.x, c.k/256)
			if c.dt.BlockSize() == 32 {
				ok = q32Agree(c.dt, got, c.want, c.a, c.x, c.blocks)
			}
			if !ok {
				t.Fatalf("%v, k %d: got %g, want %g", c.dt, c.k, got, c.want)
			}
		}
	})
}
