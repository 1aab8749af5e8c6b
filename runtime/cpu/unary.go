package cpu

import (
	"math"
	"sync"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

type unOp uint8

const (
	opScale unOp = iota
	opRelu
	opGelu
	opSilu
	opTanh
	opSigmoid
)

var unOpNames = [...]string{opScale: "Scale", opRelu: "Relu", opGelu: "Gelu", opSilu: "Silu", opTanh: "Tanh", opSigmoid: "Sigmoid"}

// per-element cost of each op in the units of Backend.chunksFor
var unOpCost = [...]int{opScale: 1, opRelu: 1, opGelu: 3, opSilu: 8, opTanh: 8, opSigmoid: 8}

// Scale is ggml_scale: dst = a·p.S. dst may be a.
func (b *Backend) Scale(dst, a *tensor.Tensor, p ops.ScaleParams) { b.unary(opScale, dst, a, p.S) }

// Relu is ggml_relu: dst = x > 0 ? x : 0.
func (b *Backend) Relu(dst, a *tensor.Tensor) { b.unary(opRelu, dst, a, 0) }

// Gelu is ggml_gelu as ggml's CPU backend computes it for f32 (GGML_GELU_FP16):
// 0 for x ≤ -10, x for x ≥ 10, and otherwise the f16 table value
// f16(gelu(f16(x))), gelu being the tanh approximation evaluated in float32.
func (b *Backend) Gelu(dst, a *tensor.Tensor) {
	geluOnce.Do(initGelu)
	b.unary(opGelu, dst, a, 0)
}

// Silu is ggml_silu: dst = x/(1+e^-x).
func (b *Backend) Silu(dst, a *tensor.Tensor) { b.unary(opSilu, dst, a, 0) }

// Tanh is ggml_tanh: dst = tanh(x), which ggml computes with tanhf; the
// float64 tanh rounded to float32 is within an ulp of it.
func (b *Backend) Tanh(dst, a *tensor.Tensor) { b.unary(opTanh, dst, a, 0) }

// Sigmoid is ggml_sigmoid: dst = 1/(1+e^-x), silu's exponential and a
// division.
func (b *Backend) Sigmoid(dst, a *tensor.Tensor) { b.unary(opSigmoid, dst, a, 0) }

type unaryTask struct {
	b      *Backend
	op     unOp
	s      float32
	d, a   tview
	dense  bool // dst and a are dense f32: rows in place, in pieces
	pieces int  // units per row: pieces of unaryPiece elements if dense, else 1
}

func (b *Backend) unary(op unOp, dst, a *tensor.Tensor, s float32) {
	name := unOpNames[op]
	t := &b.un
	*t = unaryTask{b: b, op: op, s: s}
	t.d.set(name, "dst", dst)
	t.a.set(name, "a", a)
	if !sameShape(&t.d, &t.a) {
		bug("%s: shapes dst %v, a %v", name, t.d.ne, t.a.ne)
	}
	if !isFloat(t.d.typ) || !isFloat(t.a.typ) {
		bug("%s: types dst %v, a %v", name, t.d.typ, t.a.typ)
	}
	// Dense f32 rows are used in place and split into pieces: a token's
	// one long row (the feed-forward's silu while generating) is shared by
	// the threads too. Other rows go through the scratch whole.
	t.dense = t.d.isF32() && t.a.isF32() && t.d.dense() && t.a.dense()
	t.pieces = 1
	if t.dense {
		t.pieces = max(1, ceilDiv(t.a.ne[0], unaryPiece))
	} else {
		b.growScratch(b.pool.n, t.a.ne[0])
	}
	cost := unOpCost[op]
	if (op == opSilu || op == opSigmoid) && level == isaAVX512 {
		cost = 2 // the vector exponential
	}
	b.parallel(t, t.a.nelem()*cost, t.a.nrows()*t.pieces)
	*t = unaryTask{}
}

// unaryPiece is the elements of a unit of a dense row.
const unaryPiece = 2048

func (t *unaryTask) run(chunk, nchunks, tid int) {
	d, a := &t.d, &t.a
	n := a.ne[0]
	if t.dense {
		lo, hi := split(a.nrows()*t.pieces, chunk, nchunks)
		for u := lo; u < hi; u++ {
			r, j0 := u/t.pieces, u%t.pieces*unaryPiece
			j1 := min(n, j0+unaryPiece)
			ao, do := a.rowOff(r), d.rowOff(r)
			t.apply(d.f32[do+j0:do+j1], a.f32[ao+j0:ao+j1])
		}
		return
	}
	lo, hi := split(a.nrows(), chunk, nchunks)
	for r := lo; r < hi; r++ {
		ao, do := a.rowOff(r), d.rowOff(r)
		buf := t.b.scratch[tid][:n]
		t.apply(buf, a.loadRow(ao, buf))
		d.storeRow(do, buf)
	}
}

func (t *unaryTask) apply(d, a []float32) {
	switch t.op {
	case opScale:
		scaleF32(d, a, t.s)
	case opRelu:
		reluF32(d, a)
	case opGelu:
		geluF32(d, a)
	case opSilu:
		siluF32(d, a)
	case opTanh:
		tanhF32(d, a)
	case opSigmoid:
		sigmoidF32(d, a)
	}
}

func tanhF32(d, a []float32) {
	a = a[:len(d)]
	for i := range d {
		d[i] = float32(math.Tanh(float64(a[i])))
	}
}

func reluF32(d, a []float32) {
	a = a[:len(d)]
	for i := range d {
		if x := a[i]; x > 0 {
			d[i] = x
		} else {
			d[i] = 0
		}
	}
}

// ggml's gelu constants (vec.h)
const (
	geluCoefA   = float32(0.044715)
	sqrt2OverPi = float32(0.79788456080286535587989211986876)
)

// geluTable is ggml_table_gelu_f16: for every f16 bit pattern h, the f16 bits
// of gelu(h).
var (
	geluTable [1 << 16]uint16
	geluOnce  sync.Once
)

func initGelu() {
	for i := range geluTable {
		geluTable[i] = tensor.F32ToF16(geluScalar(tensor.F16ToF32(uint16(i))))
	}
}

// geluScalar is ggml_gelu_f32 in float32:
// 0.5·x·(1 + tanh(√(2/π)·x·(1 + 0.044715·x²))). gcc (-ffp-contract=fast, the
// default for ggml's -march=native builds) fuses 1 + (0.044715·x)·x into one
// FMA; so does this, through a float64 FMA of the float32 operands.
func geluScalar(x float32) float32 {
	inner := float32(math.FMA(float64(geluCoefA*x), float64(x), 1))
	th := float32(math.Tanh(float64(sqrt2OverPi * x * inner)))
	return 0.5 * x * (1 + th)
}

func geluF32(d, a []float32) {
	a = a[:len(d)]
	tab := &geluTable
	for i := range d {
		x := a[i]
		switch {
		case x <= -10:
			d[i] = 0
		case x >= 10:
			d[i] = x
		default:
			d[i] = f16Table[tab[tensor.F32ToF16(x)]]
		}
	}
}
