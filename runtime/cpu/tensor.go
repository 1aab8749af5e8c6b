package cpu

import (
	"fmt"
	"sync"

	"github.com/graphc/graphc/tensor"
)

// bug panics with an invariant violation; callers check the condition first so
// that the arguments are only built on failure.
func bug(format string, args ...any) {
	panic("BUG: runtime/cpu: " + fmt.Sprintf(format, args...))
}

// tview is a tensor seen in elements: its data as a typed slice and its
// strides in elements.
type tview struct {
	typ tensor.DType
	f32 []float32
	f16 []uint16
	i32 []int32
	raw []byte // a block-quantized or bf16 tensor's data; st is then in bytes
	ne  [4]int
	st  [4]int
}

// set makes v the view of t in elements, checking t's layout (strides are
// non-negative multiples of the element size, the data reaches the last
// element). Kernels fill their task's views in place: it runs for every
// tensor of every node.
func (v *tview) set(op, name string, t *tensor.Tensor) {
	if t == nil {
		bug("%s: %s is nil", op, name)
	}
	blocks := isBlockType(t.Type)
	if int(t.Type) > int(tensor.I32) && !blocks {
		bug("%s: %s has unknown type %v", op, name, t.Type)
	}
	// Element sizes are 2 or 4 bytes: shifts, not divisions; a block
	// type's strides stay in bytes.
	shift := uint(2)
	switch {
	case blocks:
		shift = 0
	case t.Type == tensor.F16:
		shift = 1
	}
	v.typ, v.ne = t.Type, t.Ne
	for i := 0; i < 4; i++ {
		if t.Ne[i] < 0 || t.Nb[i] < 0 || t.Nb[i]&(1<<shift-1) != 0 {
			bug("%s: %s has bad layout ne=%v nb=%v for %v", op, name, t.Ne, t.Nb, t.Type)
		}
		v.st[i] = t.Nb[i] >> shift
	}
	if span := t.Span(); len(t.Data) < span {
		bug("%s: %s ne=%v nb=%v spans %d bytes, data has %d", op, name, t.Ne, t.Nb, span, len(t.Data))
	}
	v.f32, v.f16, v.i32, v.raw = nil, nil, nil, nil
	if blocks {
		v.raw = t.Data
	}
	switch t.Type {
	case tensor.F32:
		v.f32 = t.F32s()
	case tensor.F16:
		v.f16 = t.F16s()
	case tensor.I32:
		v.i32 = t.I32s()
	}
}

func (v *tview) nrows() int { return v.ne[1] * v.ne[2] * v.ne[3] }

func (v *tview) nelem() int { return v.ne[0] * v.ne[1] * v.ne[2] * v.ne[3] }

// off is the element offset of row (i1, i2, i3).
func (v *tview) off(i1, i2, i3 int) int { return i1*v.st[1] + i2*v.st[2] + i3*v.st[3] }

// forRuns calls f for each run of the flat rows [lo, hi) of shape ne that
// share i2 and i3 (the heads of one token, the rows of one head): the
// run's first row (i1, i2, i3) and its length.
func forRuns(ne *[4]int, lo, hi int, f func(i1, i2, i3, n int)) {
	for r := lo; r < hi; {
		i1, i2, i3 := rowCoords(ne, r)
		n := min(ne[1]-i1, hi-r)
		f(i1, i2, i3, n)
		r += n
	}
}

// rowOff is the element offset of flat row r (i1 fastest).
func (v *tview) rowOff(r int) int {
	i1, i2, i3 := rowCoords(&v.ne, r)
	return v.off(i1, i2, i3)
}

// rowCoords is flat row r's (i1, i2, i3) in shape ne, i1 fastest.
func rowCoords(ne *[4]int, r int) (i1, i2, i3 int) {
	return r % ne[1], r / ne[1] % ne[2], r / ne[1] / ne[2]
}

// dense reports whether a row's elements are adjacent.
func (v *tview) dense() bool {
	if v.raw != nil {
		return v.st[0] == v.typ.Size() || v.ne[0] <= 1
	}
	return v.st[0] == 1 || v.ne[0] <= 1
}

func (v *tview) isF32() bool { return v.typ == tensor.F32 }

func sameShape(a, b *tview) bool { return a.ne == b.ne }

// canRepeat is ggml_can_repeat(x, a): every dimension of x divides a's; an
// empty x repeats only to an empty a.
func canRepeat(x, a *tview) bool {
	if x.nelem() == 0 {
		return a.nelem() == 0
	}
	for i := 0; i < 4; i++ {
		if x.ne[i] == 0 || a.ne[i]%x.ne[i] != 0 {
			return false
		}
	}
	return true
}

// load returns the n elements of v starting at off (stride st) as float32:
// v's own memory when it is dense f32, else a conversion into buf.
func (v *tview) load(off, n, st int, buf []float32) []float32 {
	if v.typ == tensor.F32 && (st == 1 || n <= 1) {
		return v.f32[off : off+n]
	}
	buf = buf[:n]
	switch v.typ {
	case tensor.F32:
		for i := range buf {
			buf[i] = v.f32[off+i*st]
		}
	case tensor.F16:
		tab := &f16Table
		if st == 1 {
			f16ToF32Row(buf, v.f16[off:off+n])
		} else {
			for i := range buf {
				buf[i] = tab[v.f16[off+i*st]]
			}
		}
	default:
		bug("load of a %v row as float", v.typ)
	}
	return buf
}

// loadRow is load for row elements 0..ne[0]-1 at off.
func (v *tview) loadRow(off int, buf []float32) []float32 {
	return v.load(off, v.ne[0], v.st[0], buf)
}

// store writes src to the len(src) elements of v starting at off (stride
// st), rounding to f16 for an f16 v. It is a no-op when src already is that
// memory.
func (v *tview) store(off, st int, src []float32) {
	n := len(src)
	switch v.typ {
	case tensor.F32:
		if st == 1 || n <= 1 {
			dst := v.f32[off : off+n]
			if n > 0 && &dst[0] == &src[0] {
				return
			}
			copy(dst, src)
			return
		}
		for i, x := range src {
			v.f32[off+i*st] = x
		}
	case tensor.F16:
		if st == 1 {
			f32ToF16Row(v.f16[off:off+n], src)
			return
		}
		for i, x := range src {
			v.f16[off+i*st] = tensor.F32ToF16(x)
		}
	default:
		bug("store of a float row into %v", v.typ)
	}
}

func (v *tview) storeRow(off int, src []float32) { v.store(off, v.st[0], src) }

// f16Table maps every binary16 bit pattern to its float32 value
// (ggml_table_f32_f16).
var f16Table [1 << 16]float32

var tablesOnce sync.Once

func initTables() {
	tablesOnce.Do(func() {
		for i := range f16Table {
			f16Table[i] = tensor.F16ToF32(uint16(i))
		}
	})
}
