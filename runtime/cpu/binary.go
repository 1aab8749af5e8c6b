package cpu

import (
	"github.com/graphc/graphc/tensor"
)

type binOp uint8

const (
	opAdd binOp = iota
	opSub
	opMul
	opDiv
)

var binOpNames = [...]string{opAdd: "Add", opSub: "Sub", opMul: "Mul", opDiv: "Div"}

// Add is ggml_add: dst = a + x, x repeated to a's shape (every x.Ne[i]
// divides a.Ne[i]). dst may be a itself. Types f32 or f16, computed in float32.
func (b *Backend) Add(dst, a, x *tensor.Tensor) { b.binary(opAdd, dst, a, x) }

// Sub is ggml_sub: dst = a - x, x repeated to a's shape.
func (b *Backend) Sub(dst, a, x *tensor.Tensor) { b.binary(opSub, dst, a, x) }

// Mul is ggml_mul: dst = a · x, x repeated to a's shape.
func (b *Backend) Mul(dst, a, x *tensor.Tensor) { b.binary(opMul, dst, a, x) }

// Div is ggml_div: dst = a / x, x repeated to a's shape.
func (b *Backend) Div(dst, a, x *tensor.Tensor) { b.binary(opDiv, dst, a, x) }

type binaryTask struct {
	b       *Backend
	op      binOp
	d, a, x tview
}

func (b *Backend) binary(op binOp, dst, a, x *tensor.Tensor) {
	name := binOpNames[op]
	t := &b.bin
	*t = binaryTask{b: b, op: op}
	t.d.set(name, "dst", dst)
	t.a.set(name, "a", a)
	t.x.set(name, "x", x)
	if !sameShape(&t.d, &t.a) || !canRepeat(&t.x, &t.a) {
		bug("%s: shapes dst %v, a %v, x %v", name, t.d.ne, t.a.ne, t.x.ne)
	}
	if !isFloat(t.d.typ) || !isFloat(t.a.typ) || !isFloat(t.x.typ) {
		bug("%s: types dst %v, a %v, x %v", name, t.d.typ, t.a.typ, t.x.typ)
	}
	n := t.a.ne[0]
	if !t.d.isF32() || !t.a.isF32() || !t.x.isF32() || !t.d.dense() || !t.a.dense() || !t.x.dense() {
		b.growScratch(b.pool.n, 2*n)
	}
	b.parallel(t, t.a.nelem()/2, t.a.nrows())
	*t = binaryTask{}
}

func isFloat(t tensor.DType) bool { return t == tensor.F32 || t == tensor.F16 }

func (t *binaryTask) run(chunk, nchunks, tid int) {
	d, a, x := &t.d, &t.a, &t.x
	n, m := a.ne[0], x.ne[0]
	fast := d.isF32() && a.isF32() && x.isF32() && d.dense() && a.dense() && x.dense()
	var bufA, bufX []float32
	if !fast {
		bufA, bufX = t.b.scratch[tid][:n], t.b.scratch[tid][n:2*n]
	}
	lo, hi := split(a.nrows(), chunk, nchunks)
	for r := lo; r < hi; r++ {
		i1, i2, i3 := rowCoords(&a.ne, r)
		ao := a.off(i1, i2, i3)
		do := d.off(i1, i2, i3)
		xo := x.off(i1%x.ne[1], i2%x.ne[2], i3%x.ne[3])
		if fast {
			dr, ar, xr := d.f32[do:do+n], a.f32[ao:ao+n], x.f32[xo:xo+m]
			for j := 0; j < n; j += m {
				binF32(t.op, dr[j:j+m], ar[j:j+m], xr)
			}
			continue
		}
		ar := a.loadRow(ao, bufA)
		xr := x.load(xo, m, x.st[0], bufX)
		out := bufA[:n]
		for j := 0; j < n; j += m {
			binF32(t.op, out[j:j+m], ar[j:j+m], xr)
		}
		d.storeRow(do, out)
	}
}

// binF32 computes d[i] = a[i] op x[i]; d may be a.
func binF32(op binOp, d, a, x []float32) {
	switch op {
	case opAdd:
		addF32(d, a, x)
	case opSub:
		subF32(d, a, x)
	case opMul:
		mulF32(d, a, x)
	case opDiv:
		divF32(d, a, x)
	}
}
