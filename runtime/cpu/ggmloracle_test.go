//go:build linux && amd64

package cpu_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/graphc/graphc/backend/libs"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// ggml's own CPU library as the oracle of the quantized products: the
// weights made by ggml_quantize_chunk (libggml-base), the activations by
// each CPU variant's type_traits_cpu from_float and the dot products by
// its vec_dot (libggml-cpu-<variant>.so, loaded directly: its
// ggml_get_type_traits_cpu is not a registry proc address). runtime/cpu
// imports no ggml binding; this test binds the few functions itself.

// oracleVariants are the CPU variants compared with: AVX2 (haswell) and
// AVX-512 ones (skylakex: F/BW/VL; icelake and zen4: + VNNI), those this
// machine runs (ggml_backend_score > 0).
var oracleVariants = []string{"haswell", "skylakex", "icelake", "zen4"}

// ggmlTraits is struct ggml_type_traits_cpu (ggml-cpu.h).
type ggmlTraits struct {
	fromFloat  uintptr // void (*)(const float *x, void *y, int64_t k)
	vecDot     uintptr // void (*)(int n, float *s, size_t bs, const void *x, size_t bx, const void *y, size_t by, int nrc)
	vecDotType int32
	_          int32
	nrows      int64
}

type ggmlOracle struct {
	quantizeChunk uintptr // size_t ggml_quantize_chunk(type, const float *src, void *dst, int64_t start, int64_t nrows, int64_t n_per_row, const float *imatrix)
	variants      []ggmlVariant
}

type ggmlVariant struct {
	name   string
	traits func(t tensor.DType) *ggmlTraits
}

var (
	oracleOnce sync.Once
	oracle     *ggmlOracle
	oracleErr  error
)

// ggmlDir is where ggml's libraries are: libs.FindGGML's directory
// ($GRAPHC_GGML_PATH), else .ci/run's cache of node-llama-cpp.
func ggmlDir() (string, error) {
	if l, err := libs.FindGGML(); err == nil {
		return l.Dir, nil
	} else {
		home, _ := os.UserHomeDir()
		d := filepath.Join(home, ".cache", "graphc", "node-llama-cpp", "package", "bins", "linux-x64")
		if xdg := os.Getenv("XDG_CACHE_HOME"); xdg != "" {
			d = filepath.Join(xdg, "graphc", "node-llama-cpp", "package", "bins", "linux-x64")
		}
		if _, e := os.Stat(filepath.Join(d, "libggml-base.so")); e == nil {
			return d, nil
		}
		return "", err
	}
}

func loadOracle() (*ggmlOracle, error) {
	dir, err := ggmlDir()
	if err != nil {
		return nil, err
	}
	base, err := purego.Dlopen(filepath.Join(dir, "libggml-base.so"), purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, err
	}
	o := &ggmlOracle{}
	if o.quantizeChunk, err = purego.Dlsym(base, "ggml_quantize_chunk"); err != nil {
		return nil, err
	}
	for _, v := range oracleVariants {
		lib, err := purego.Dlopen(filepath.Join(dir, "libggml-cpu-"+v+".so"), purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			continue
		}
		if score, err := purego.Dlsym(lib, "ggml_backend_score"); err == nil {
			if r, _, _ := purego.SyscallN(score); int32(r) <= 0 {
				continue // not for this processor
			}
		}
		get, err1 := purego.Dlsym(lib, "ggml_get_type_traits_cpu")
		init, err2 := purego.Dlsym(lib, "ggml_cpu_init")
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("libggml-cpu-%s.so: %v %v", v, err1, err2)
		}
		purego.SyscallN(init)
		var traits func(t tensor.DType) *ggmlTraits // ggml's static table
		purego.RegisterFunc(&traits, get)
		o.variants = append(o.variants, ggmlVariant{v, traits})
	}
	if len(o.variants) == 0 {
		return nil, fmt.Errorf("none of libggml-cpu-%v.so in %s runs here", oracleVariants, dir)
	}
	return o, nil
}

// needOracle returns ggml's CPU library or skips the test saying how to
// get it (fails with $GRAPHC_REQUIRE_GGML set).
func needOracle(t *testing.T) *ggmlOracle {
	t.Helper()
	oracleOnce.Do(func() { oracle, oracleErr = loadOracle() })
	if oracleErr != nil {
		if os.Getenv("GRAPHC_REQUIRE_GGML") != "" {
			t.Fatal(oracleErr)
		}
		t.Skipf("ggml's CPU library: %v\n(for this machine: mkdir -p ~/.cache/graphc/node-llama-cpp && cd ~/.cache/graphc/node-llama-cpp && "+
			"npm pack @node-llama-cpp/linux-x64@3.22.1 && tar xzf node-llama-cpp-linux-x64-3.22.1.tgz, as .ci/run does; or set $%s)", oracleErr, libs.GGMLPathEnv)
	}
	return oracle
}

// quantize is ggml_quantize_chunk of rows rows of len(src)/rows values.
func (o *ggmlOracle) quantize(t tensor.DType, src []float32, rows int) []byte {
	dst := make([]byte, t.RowSize(len(src)/rows)*rows)
	purego.SyscallN(o.quantizeChunk, uintptr(t), uintptr(unsafe.Pointer(&src[0])), uintptr(unsafe.Pointer(&dst[0])), 0, uintptr(rows), uintptr(len(src)/rows), 0)
	return dst
}

func (v ggmlVariant) fromFloat(t tensor.DType, x []float32) []byte {
	dst := make([]byte, t.RowSize(len(x))) // zeros: ggml leaves a zero q8_K block's bsums as they are
	purego.SyscallN(v.traits(t).fromFloat, uintptr(unsafe.Pointer(&x[0])), uintptr(unsafe.Pointer(&dst[0])), uintptr(len(x)))
	return dst
}

func (v ggmlVariant) vecDot(t tensor.DType, a, x []byte, k int) float32 {
	var s float32
	purego.SyscallN(v.traits(t).vecDot, uintptr(k), uintptr(unsafe.Pointer(&s)), 0, uintptr(unsafe.Pointer(&a[0])), 0, uintptr(unsafe.Pointer(&x[0])), 0, 1)
	return s
}

// oracleRow is k random activations: normal values, a zero block, one
// value much larger than the rest, ties at the q8 rounding.
func oracleRow(r *rand.Rand, k int) []float32 {
	x := make([]float32, k)
	for i := range x {
		x[i] = float32(r.NormFloat64())
		if r.IntN(64) == 0 {
			x[i] = float32(r.IntN(255)-127) / 2 // halves: ties when amax is 127
		}
	}
	clear(x[256:512])
	x[r.IntN(k)] *= 100
	x[600] = 127
	return x
}

// TestGGMLActivations checks MulMat's activation quantizers (q8_0, q8_1,
// q8_K) byte for byte against each ggml CPU variant's from_float.
func TestGGMLActivations(t *testing.T) {
	o := needOracle(t)
	r := rand.New(rand.NewPCG(31, 32))
	forISAs(t, func(t *testing.T) {
		for _, v := range o.variants {
			for _, vt := range []tensor.DType{tensor.Q8_0, tensor.Q8_1, tensor.Q8_K} {
				for rep := 0; rep < 8; rep++ {
					x := oracleRow(r, 4096)
					want := v.fromFloat(vt, x)
					got := cpu.QuantizeActivations(nil, vt, x)
					if !bytes.Equal(got, want) {
						i := 0
						for got[i] == want[i] {
							i++
						}
						t.Fatalf("%s %v: byte %d (block %d) = %#x, ggml's %#x", v.name, vt, i, i/vt.Size(), got[i], want[i])
					}
				}
			}
		}
	})
}

// oracleTypes are the weight types compared with ggml's vec_dot.
var oracleTypes = []tensor.DType{tensor.Q8_0, tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.IQ4_NL,
	tensor.Q2_K, tensor.Q3_K, tensor.Q4_K, tensor.Q5_K, tensor.Q6_K, tensor.IQ4_XS}

// TestGGMLVecDot checks MulMat's dot product of each weight type, at each
// level, against each ggml CPU variant's vec_dot: weights made by
// ggml_quantize_chunk, activations by its from_float (the bytes
// TestGGMLActivations compares). The sums differ in float32 rounding only
// (ggml keeps partial sums in SIMD lanes, uses FMA): the bound is 1e-6
// (8 float32 ulps) of rowMagnitude, what the rounding is relative to.
func TestGGMLVecDot(t *testing.T) {
	o := needOracle(t)
	const k, rows = 4096, 16
	r := rand.New(rand.NewPCG(33, 34))
	w := make([]float32, k*rows)
	for i := range w {
		w[i] = float32(r.NormFloat64())
	}
	xs := [][]float32{oracleRow(r, k), oracleRow(r, k)}
	weights := map[tensor.DType][]byte{}
	for _, dt := range oracleTypes {
		weights[dt] = o.quantize(dt, w, rows)
	}
	forISAs(t, func(t *testing.T) {
		for _, v := range o.variants {
			for _, dt := range oracleTypes {
				vt := cpu.VecDotType(dt)
				if vt != tensor.DType(v.traits(dt).vecDotType) {
					t.Fatalf("%v: vec_dot_type %v, ggml's %v", dt, vt, tensor.DType(v.traits(dt).vecDotType))
				}
				rowSize := dt.RowSize(k)
				var worst float64
				for _, xf := range xs {
					x := v.fromFloat(vt, xf)
					for i := 0; i < rows; i++ {
						a := weights[dt][i*rowSize : (i+1)*rowSize]
						got := cpu.KDot(dt)(a, x, cpu.XScales(nil, x), cpu.XSums(nil, x), k)
						want := v.vecDot(dt, a, x, k)
						mag := rowMagnitude(w[i*k:(i+1)*k], xf)
						if d := math.Abs(float64(got) - float64(want)); d > 1e-6*mag || math.IsNaN(float64(got)) {
							t.Errorf("%s %v row %d: got %g, ggml %g (magnitude %g, diff %.3g of it)", v.name, dt, i, got, want, mag, d/mag)
						} else {
							worst = max(worst, d/mag)
						}
					}
				}
				t.Logf("%s %v: worst |got−ggml| %.2g of the magnitude, %d rows", v.name, dt, worst, rows*len(xs))
			}
		}
	})
}

// rowMagnitude is what the float32 rounding of a weight row's product
// with x is relative to: Σ (|w_i| + max|w|)·|x_i| over the unquantized
// values, a bound on the magnitude of every partial sum and of each
// block's scaled parts (the products and, for the types with mins or
// offsets, the min terms, as large as max|w|·|x|).
func rowMagnitude(w, x []float32) float64 {
	var m, mag float64
	for _, v := range w {
		m = max(m, math.Abs(float64(v)))
	}
	for i, v := range w {
		mag += (math.Abs(float64(v)) + m) * math.Abs(float64(x[i]))
	}
	return mag
}

// BenchmarkGGMLVecDot is a matrix-vector product row by row with ggml's
// vec_dot (each variant; each row one call through purego, whose cost
// alone ggml-calls measures: subtract it) and with MulMat's dot product at the current level, on one
// thread, at Llama-3.2-1B's K×M shapes: GB/s of weight read.
func BenchmarkGGMLVecDot(b *testing.B) {
	oracleOnce.Do(func() { oracle, oracleErr = loadOracle() })
	if oracleErr != nil {
		b.Skip(oracleErr)
	}
	for _, dt := range []tensor.DType{tensor.Q4_K, tensor.Q6_K, tensor.Q5_K, tensor.Q2_K, tensor.Q3_K, tensor.IQ4_XS,
		tensor.Q5_0, tensor.Q4_1, tensor.Q5_1, tensor.IQ4_NL} {
		for _, s := range []struct{ K, M int }{{2048, 8192}, {8192, 2048}} {
			r := rand.New(rand.NewPCG(1, 2))
			w := make([]float32, s.K*s.M)
			for i := range w {
				w[i] = float32(r.NormFloat64())
			}
			a := oracle.quantize(dt, w, s.M)
			xf := oracleRow(r, s.K)
			rowSize := dt.RowSize(s.K)
			x := cpu.QuantizeActivations(nil, cpu.VecDotType(dt), xf)
			run := func(name string, dot func(a []byte) float32) {
				b.Run(fmt.Sprintf("%v/K=%d,M=%d/%s", dt, s.K, s.M, name), func(b *testing.B) {
					b.SetBytes(int64(len(a)))
					for b.Loop() {
						for i := 0; i < s.M; i++ {
							dot(a[i*rowSize : (i+1)*rowSize])
						}
					}
				})
			}
			xd, xs := q8_0Sides(dt, x)
			run("graphc-"+cpu.ISA(), func(a []byte) float32 { return cpu.KDot(dt)(a, x, xd, xs, s.K) })
			for _, v := range oracle.variants {
				run("ggml-"+v.name, func(a []byte) float32 { return v.vecDot(dt, a, x, s.K) })
			}
			// The calls alone: vec_dot of no blocks, to subtract.
			run("ggml-calls", func(a []byte) float32 { return oracle.variants[0].vecDot(dt, a, x, 0) })
		}
	}
}

// TestGGMLMulMat checks Backend.MulMat with each weight type (its
// quantKernels row: x's conversion and side arrays, the dot product, on
// two threads) against ggml's vec_dot of each weight row with each row
// of x converted by from_float, to TestGGMLVecDot's bound.
func TestGGMLMulMat(t *testing.T) {
	o := needOracle(t)
	const k, m, n = 1024, 12, 3
	r := rand.New(rand.NewPCG(35, 36))
	w := make([]float32, k*m)
	for i := range w {
		w[i] = float32(r.NormFloat64())
	}
	x := tensor.NewTensor(tensor.F32, [4]int{k, n, 1, 1})
	for j := 0; j < n; j++ {
		copy(x.F32s()[j*k:], oracleRow(r, k))
	}
	be := cpu.New(2)
	defer be.Close()
	v := o.variants[len(o.variants)-1]
	forISAs(t, func(t *testing.T) {
		for _, dt := range oracleTypes {
			ne := [4]int{k, m, 1, 1}
			a := tensor.Tensor{Type: dt, Ne: ne, Nb: tensor.ContiguousStrides(dt, ne), Data: o.quantize(dt, w, m)}
			dst := tensor.NewTensor(tensor.F32, [4]int{m, n, 1, 1})
			be.MulMat(&dst, &a, &x, ops.MulMatParams{})
			for j := 0; j < n; j++ {
				xf := x.F32s()[j*k : (j+1)*k]
				xq := v.fromFloat(cpu.VecDotType(dt), xf)
				for i := 0; i < m; i++ {
					want := v.vecDot(dt, a.Data[i*dt.RowSize(k):(i+1)*dt.RowSize(k)], xq, k)
					got := dst.F32s()[j*m+i]
					if mag := rowMagnitude(w[i*k:(i+1)*k], xf); math.Abs(float64(got)-float64(want)) > 1e-6*mag || math.IsNaN(float64(got)) {
						t.Errorf("%v: dst[%d,%d] = %g, ggml %s %g", dt, i, j, got, v.name, want)
					}
				}
			}
		}
	})
}
