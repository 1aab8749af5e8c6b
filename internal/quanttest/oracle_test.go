//go:build darwin || freebsd || linux || netbsd || windows

package quanttest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
	"unsafe"

	"github.com/graphc/graphc/backend/libs"
	"github.com/graphc/graphc/internal/ggmlapi"
	"github.com/graphc/graphc/tensor"
)

// typeTraits is struct ggml_type_traits of include/ggml.h (ggml 0.9 to
// 0.25), read from ggml's memory; the fields not read only keep the
// layout. The test checks its name, block and size fields against the
// type table before calling toFloat, so that a layout that moved fails
// rather than calls a wrong pointer.
type typeTraits struct {
	name         *byte
	blckSize     int64
	interleave   int64
	typeSize     uintptr
	isQuantized  bool
	toFloat      uintptr // ggml_to_float_t: (const void *, float *, int64_t)
	fromFloatRef uintptr // ggml_from_float_t: (const float *, void *, int64_t)
}

// ggml_type_traits has no functions for q8_K, an operand only ggml's CPU
// backend makes; ggml-base exports its reference functions by name.
const (
	q8KRef     = "quantize_row_q8_K_ref"
	q8KToFloat = "dequantize_row_q8_K"
)

// oracle is ggml's quantization API.
type oracle struct {
	getTraits     func(int32) *typeTraits                                                      `sym:"ggml_get_type_traits"`
	quantizeChunk func(int32, *float32, unsafe.Pointer, int64, int64, int64, *float32) uintptr `sym:"ggml_quantize_chunk"`
	sym           func(string) uintptr
}

func load(t *testing.T) *oracle {
	t.Helper()
	a, _, err := ggmlapi.Load()
	if err != nil {
		if os.Getenv("GRAPHC_REQUIRE_GGML") != "" {
			t.Fatal(err)
		}
		t.Skipf("%v\n(for this machine: cd /tmp && npm pack @node-llama-cpp/linux-x64@3.22.1 && tar xzf node-llama-cpp-linux-x64-3.22.1.tgz; "+
			"export %s=/tmp/package/bins/linux-x64)", err, libs.GGMLPathEnv)
	}
	o := &oracle{sym: a.Sym}
	if err := ggmlapi.BindFields(o, a.Sym); err != nil {
		t.Fatalf("ggml %s: %v", a.Version(), err)
	}
	t.Logf("ggml %s (commit %s)", a.Version(), a.Commit())
	return o
}

// The types whose codecs are checked (q4_0 and q8_0 too), with where
// their blocks keep a scale (f16, or f32 for q8_K), which the random
// blocks of TestDequantizeMatchesGGML make finite.
var checked = []struct {
	dt     tensor.DType
	f16At  []int
	f32At  []int
	viaRef bool // ggml_quantize_chunk has no case for it: quantize_row_*_ref
}{
	{dt: tensor.Q4_0, f16At: []int{0}},
	{dt: tensor.Q8_0, f16At: []int{0}},
	{dt: tensor.Q4_1, f16At: []int{0, 2}},
	{dt: tensor.Q5_0, f16At: []int{0}},
	{dt: tensor.Q5_1, f16At: []int{0, 2}},
	{dt: tensor.Q2_K, f16At: []int{80, 82}},
	{dt: tensor.Q3_K, f16At: []int{108}},
	{dt: tensor.Q4_K, f16At: []int{0, 2}},
	{dt: tensor.Q5_K, f16At: []int{0, 2}},
	{dt: tensor.Q6_K, f16At: []int{208}},
	{dt: tensor.Q8_K, f32At: []int{0}, viaRef: true},
	{dt: tensor.IQ4_NL, f16At: []int{0}},
	{dt: tensor.IQ4_XS, f16At: []int{0}},
}

func (o *oracle) traits(t *testing.T, dt tensor.DType) *typeTraits {
	t.Helper()
	tr := o.getTraits(int32(dt))
	name := ""
	if tr.name != nil {
		name = unsafe.String(tr.name, 16)
		for i := range len(name) {
			if name[i] == 0 {
				name = name[:i]
				break
			}
		}
	}
	if name != dt.String() || tr.blckSize != int64(dt.BlockSize()) || tr.typeSize != uintptr(dt.Size()) {
		t.Fatalf("ggml_get_type_traits(%d): %q, block %d, size %d; want %s, %d, %d (has struct ggml_type_traits changed?)",
			dt, name, tr.blckSize, tr.typeSize, dt, dt.BlockSize(), dt.Size())
	}
	return tr
}

// fn is the address of a function of ggml's, failing the test without it.
func fn(t *testing.T, p uintptr, what string) uintptr {
	t.Helper()
	if p == 0 {
		t.Fatalf("ggml has no %s", what)
	}
	return p
}

// quantize is ggml's bytes for rows of n values: ggml_quantize_chunk
// without an importance matrix, or for viaRef (q8_K) its ref. dst starts
// zeroed (q8_K's ref leaves an all-zero block's bsums unwritten).
func (o *oracle) quantize(t *testing.T, dt tensor.DType, viaRef bool, src []float32, n int) []byte {
	t.Helper()
	dst := make([]byte, dt.RowSize(len(src)))
	if viaRef {
		var ref func(*float32, unsafe.Pointer, int64)
		ggmlapi.BindFunc(&ref, fn(t, o.sym(q8KRef), q8KRef))
		ref(&src[0], unsafe.Pointer(&dst[0]), int64(len(src)))
	} else if got := o.quantizeChunk(int32(dt), &src[0], unsafe.Pointer(&dst[0]), 0, int64(len(src)/n), int64(n), nil); got != uintptr(len(dst)) {
		t.Fatalf("%s: ggml_quantize_chunk wrote %d bytes, want %d", dt, got, len(dst))
	}
	runtime.KeepAlive(src)
	return dst
}

// dequantize is ggml's to_float of the blocks in q.
func (o *oracle) dequantize(t *testing.T, dt tensor.DType, q []byte) []float32 {
	t.Helper()
	var toFloat func(unsafe.Pointer, *float32, int64)
	if dt == tensor.Q8_K {
		o.traits(t, dt)
		ggmlapi.BindFunc(&toFloat, fn(t, o.sym(q8KToFloat), q8KToFloat))
	} else {
		ggmlapi.BindFunc(&toFloat, fn(t, o.traits(t, dt).toFloat, dt.String()+"'s to_float"))
	}
	n := len(q) / dt.Size() * dt.BlockSize()
	out := make([]float32, n)
	toFloat(unsafe.Pointer(&q[0]), &out[0], int64(n))
	runtime.KeepAlive(q)
	return out
}

// rows are the inputs: several distributions, rows of 256 and 4096
// values (one ggml_quantize_chunk call takes all rows of a case).
func rows() []struct {
	name string
	n    int
	x    []float32
} {
	r := rand.New(rand.NewPCG(7, 11))
	gen := func(n, nrows int, f func(i int) float64) []float32 {
		x := make([]float32, n*nrows)
		for i := range x {
			x[i] = float32(f(i))
		}
		return x
	}
	type row = struct {
		name string
		n    int
		x    []float32
	}
	var out []row
	for _, n := range []int{256, 4096} {
		out = append(out,
			row{"gaussian", n, gen(n, 16, func(int) float64 { return r.NormFloat64() })},
			row{"uniform", n, gen(n, 2, func(int) float64 { return 2*r.Float64() - 1 })},
			row{"positive", n, gen(n, 1, func(int) float64 { return r.Float64() })},
			row{"negative", n, gen(n, 1, func(int) float64 { return -r.Float64() * 3 })},
			row{"outliers", n, gen(n, 2, func(int) float64 {
				if r.IntN(50) == 0 {
					return r.NormFloat64() * 300
				}
				return r.NormFloat64() * 0.02
			})},
			row{"tiny", n, gen(n, 1, func(int) float64 { return r.NormFloat64() * 1e-7 })},
			row{"large", n, gen(n, 1, func(int) float64 { return r.NormFloat64() * 3e4 })},
			row{"integers", n, gen(n, 1, func(int) float64 { return float64(r.IntN(9) - 4) })}, // ties in every rounding
			row{"halves", n, gen(n, 1, func(i int) float64 { // q8_K's -127/254: ties to even in nearest_int
				if i%32 == 0 {
					return 254
				}
				return float64(r.IntN(507) - 253)
			})},
			row{"sparse", n, gen(n, 1, func(int) float64 {
				if r.IntN(8) == 0 {
					return r.NormFloat64()
				}
				return 0
			})},
			row{"blocks", n, gen(n, 1, func(i int) float64 { // all-zero, constant, one huge, eps-small blocks in turn
				switch i / 32 % 6 {
				case 0:
					return 0
				case 1:
					return 0.75
				case 2:
					if i%32 == 5 {
						return 1e5
					}
					return r.NormFloat64() * 0.1
				case 3:
					return r.NormFloat64() * 1e-16
				case 4:
					return math.Sin(float64(i))
				}
				return float64(i%32) - 15.5
			})},
		)
	}
	return out
}

// TestQuantizeMatchesGGML compares tensor.Quantize's bytes with ggml's
// for every checked type and input, then both sides' dequantization of
// ggml's bytes, bit for bit.
func TestQuantizeMatchesGGML(t *testing.T) {
	o := load(t)
	for _, c := range checked {
		for _, in := range rows() {
			t.Run(fmt.Sprintf("%s/%s/%d", c.dt, in.name, in.n), func(t *testing.T) {
				want := o.quantize(t, c.dt, c.viaRef, in.x, in.n)
				got := tensor.Quantize(nil, c.dt, in.x)
				if err := sameBlocks(c.dt, got, want); err != nil {
					t.Errorf("tensor.Quantize vs ggml: %v", err)
				}
				wantF := o.dequantize(t, c.dt, want)
				gotF := tensor.Dequantize(nil, c.dt, want, len(in.x))
				if err := sameBits(gotF, wantF); err != nil {
					t.Errorf("tensor.Dequantize vs ggml's to_float: %v", err)
				}
			})
		}
	}
}

// TestDequantizeMatchesGGML compares tensor.Dequantize with ggml's
// to_float on random blocks (every bit pattern of the quants and
// sub-block scales, finite super-block scales), which reach layouts the
// encoders seldom write.
func TestDequantizeMatchesGGML(t *testing.T) {
	o := load(t)
	r := rand.New(rand.NewPCG(3, 5))
	for _, c := range checked {
		const blocks = 64
		q := make([]byte, blocks*c.dt.Size())
		for i := range q {
			q[i] = byte(r.Uint32())
		}
		for b := range blocks {
			blk := q[b*c.dt.Size():]
			for _, at := range c.f16At {
				binary.LittleEndian.PutUint16(blk[at:], tensor.F32ToF16(float32(r.NormFloat64())))
			}
			for _, at := range c.f32At {
				binary.LittleEndian.PutUint32(blk[at:], math.Float32bits(float32(r.NormFloat64())))
			}
		}
		n := blocks * c.dt.BlockSize()
		if err := sameBits(tensor.Dequantize(nil, c.dt, q, n), o.dequantize(t, c.dt, q)); err != nil {
			t.Errorf("%s: tensor.Dequantize vs ggml's to_float: %v", c.dt, err)
		}
	}
}

// sameBlocks reports the first block and byte where got and want differ.
func sameBlocks(dt tensor.DType, got, want []byte) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d bytes, want %d", len(got), len(want))
	}
	size := dt.Size()
	for i := range got {
		if got[i] != want[i] {
			b := i / size
			return fmt.Errorf("block %d (values %d…), byte %d of %d: %#02x, want %#02x\n got % x\nwant % x",
				b, b*dt.BlockSize(), i%size, size, got[i], want[i], got[b*size:(b+1)*size], want[b*size:(b+1)*size])
		}
	}
	return nil
}

// sameBits reports the first value whose bits differ.
func sameBits(got, want []float32) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d values, want %d", len(got), len(want))
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return fmt.Errorf("value %d: %g (%#08x), want %g (%#08x)", i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
	return nil
}
