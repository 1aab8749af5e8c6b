package cpu_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// layout is how a test tensor sits in its buffer.
type layout int

const (
	dense    layout = iota // contiguous
	padded                 // every stride larger than dense
	permuted               // dimensions stored in a random other order (transposes)
	nLayouts
)

func (l layout) String() string { return [...]string{"dense", "padded", "permuted"}[l] }

// tt is a test tensor with the whole allocation around it, to check that
// kernels write nothing outside their dst's elements.
type tt struct {
	*tensor.Tensor
	buf []byte
	off int
}

const guard = 64

// mk returns a tensor of type typ and shape ne laid out as l, at a random
// element-aligned offset in a buffer with guard bytes on both sides, filled
// with random values in [-1, 1) (f16 exactly representable; i32 0).
func mk(r *rand.Rand, typ tensor.DType, ne [4]int, l layout) *tt {
	sz := typ.Size()
	perm := [4]int{0, 1, 2, 3}
	pad := [4]int{}
	switch l {
	case padded:
		for i := range pad {
			pad[i] = 1 + r.IntN(3)
		}
	case permuted:
		for perm == [4]int{0, 1, 2, 3} {
			r.Shuffle(4, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		}
	}
	// physical dimension i holds logical dimension perm[i]
	var nb [4]int
	stride := sz
	for i := 0; i < 4; i++ {
		nb[perm[i]] = stride
		stride *= ne[perm[i]] + pad[i]
	}
	x := &tt{Tensor: &tensor.Tensor{Type: typ, Ne: ne, Nb: nb}}
	span := x.Span()
	x.off = guard + sz*r.IntN(4)
	x.buf = tensor.NewBuffer(x.off + span + guard)
	for i := range x.buf {
		x.buf[i] = byte(r.Uint32())
	}
	x.Data = x.buf[x.off : x.off+span]
	for k := 0; k < x.NElem(); k++ {
		switch typ {
		case tensor.F32, tensor.F16:
			x.set(k, 2*r.Float64()-1)
		case tensor.I32:
			x.set(k, 0)
		}
	}
	return x
}

// mkOut is mk for a destination: every element starts as NaN (0xff bytes).
func mkOut(r *rand.Rand, typ tensor.DType, ne [4]int, l layout) *tt {
	x := mk(r, typ, ne, l)
	for k := 0; k < x.NElem(); k++ {
		o := x.byteOff(k)
		for i := 0; i < typ.Size(); i++ {
			x.Data[o+i] = 0xff
		}
	}
	return x
}

func (x *tt) byteOff(k int) int {
	o := 0
	for i := 0; i < 4; i++ {
		o += k % x.Ne[i] * x.Nb[i]
		k /= x.Ne[i]
	}
	return o
}

func (x *tt) at(k int) float64 { return x.atByte(x.byteOff(k)) }

// at4 is at for a 4-D index.
func (x *tt) at4(i0, i1, i2, i3 int) float64 {
	return x.atByte(i0*x.Nb[0] + i1*x.Nb[1] + i2*x.Nb[2] + i3*x.Nb[3])
}

// atByte is the element at byte offset o, read from the bytes rather than
// a typed view of them, which the references call per element (under
// -race each view is a checked conversion).
func (x *tt) atByte(o int) float64 {
	switch x.Type {
	case tensor.F32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(x.Data[o:])))
	case tensor.F16:
		return float64(tensor.F16ToF32(binary.LittleEndian.Uint16(x.Data[o:])))
	default:
		return float64(int32(binary.LittleEndian.Uint32(x.Data[o:])))
	}
}

func (x *tt) set(k int, v float64) {
	o := x.byteOff(k)
	switch x.Type {
	case tensor.F32:
		x.F32s()[o/4] = float32(v)
	case tensor.F16:
		x.F16s()[o/2] = tensor.F32ToF16(float32(v))
	default:
		x.I32s()[o/4] = int32(v)
	}
}

func (x *tt) values() []float64 {
	v := make([]float64, x.NElem())
	for k := range v {
		v[k] = x.at(k)
	}
	return v
}

func (x *tt) snapshot() []byte { return bytes.Clone(x.buf) }

// checkUntouched fails if any byte of x's buffer that is not part of one of
// its elements differs from before.
func checkUntouched(t *testing.T, x *tt, before []byte) {
	t.Helper()
	mine := make([]bool, len(x.buf))
	for k := 0; k < x.NElem(); k++ {
		o := x.off + x.byteOff(k)
		for i := 0; i < x.Type.Size(); i++ {
			mine[o+i] = true
		}
	}
	for i := range x.buf {
		if !mine[i] && x.buf[i] != before[i] {
			t.Fatalf("byte %d of the buffer (tensor at %d, span %d) changed: %#x -> %#x", i, x.off, x.Span(), before[i], x.buf[i])
		}
	}
}

// readOnly snapshots inputs; the returned func fails if any byte of their
// buffers changed.
func readOnly(t *testing.T, xs ...*tt) func() {
	snaps := make([][]byte, len(xs))
	for i, x := range xs {
		snaps[i] = x.snapshot()
	}
	return func() {
		t.Helper()
		for i, x := range xs {
			if !bytes.Equal(x.buf, snaps[i]) {
				t.Fatalf("input %d (%v %v) was modified", i, x.Type, x.Ne)
			}
		}
	}
}

// expectClose compares got's elements with want within tol(k).
func expectClose(t *testing.T, got *tt, want []float64, tol func(k int) float64) {
	t.Helper()
	bad := 0
	for k, w := range want {
		g := got.at(k)
		if math.IsNaN(w) && math.IsNaN(g) {
			continue
		}
		if d := math.Abs(g - w); !(d <= tol(k)) && !(math.IsInf(w, 0) && g == w) {
			if bad < 5 {
				t.Errorf("element %d (of %v): got %.9g, want %.9g (|diff| %.3g > tol %.3g)", k, got.Ne, g, w, d, tol(k))
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d elements out of tolerance", bad, len(want))
	}
}

func exact(int) float64 { return 0 }

// roundTo rounds v to what a tensor of type typ stores.
func roundTo(typ tensor.DType, v float64) float64 {
	if typ == tensor.F16 {
		return float64(tensor.F16ToF32(tensor.F32ToF16(float32(v))))
	}
	return float64(float32(v))
}

// forBackends runs f on backends with 1, 2 and 3 threads that split every
// op as finely as they can, and on a default-configured 2-thread backend.
func forBackends(t *testing.T, f func(t *testing.T, b *cpu.Backend, r *rand.Rand)) {
	for _, c := range []struct {
		threads int
		split   bool
	}{{1, true}, {2, true}, {3, true}, {2, false}} {
		name := fmt.Sprintf("threads=%d", c.threads)
		if !c.split {
			name += "/default"
		}
		t.Run(name, func(t *testing.T) {
			if c.split {
				defer cpu.SetMinWork(1)()
			}
			b := cpu.New(c.threads)
			defer b.Close()
			f(t, b, rand.New(rand.NewPCG(uint64(c.threads), 7)))
		})
	}
}

// randShape returns a shape with dims in [1, max[i]].
func randShape(r *rand.Rand, max [4]int) [4]int {
	var ne [4]int
	for i := range ne {
		ne[i] = 1 + r.IntN(max[i])
	}
	return ne
}

// repeatShape returns a shape that ggml_can_repeat to ne: each dim either
// ne[i], 1 or another divisor.
func repeatShape(r *rand.Rand, ne [4]int) [4]int {
	var x [4]int
	for i := range x {
		var divs []int
		for d := 1; d <= ne[i]; d++ {
			if ne[i]%d == 0 {
				divs = append(divs, d)
			}
		}
		x[i] = divs[r.IntN(len(divs))]
		if r.IntN(2) == 0 {
			x[i] = ne[i]
		}
	}
	return x
}

func expectPanic(t *testing.T, prefix string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		v := recover()
		s, _ := v.(string)
		if len(s) < len(prefix) || s[:len(prefix)] != prefix {
			t.Errorf("panic %v, want one starting %q", v, prefix)
		}
	}()
	f()
}
