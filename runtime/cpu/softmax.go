package cpu

import (
	"math"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// SoftMax is ggml_soft_max_ext: per row, softmax(a·p.Scale + slope·mask) with
// the float32 row, float32 exponentials and their sum in float64. mask may be
// nil; otherwise it is f32 or f16 with mask.Ne[0] == a.Ne[0], its row i1 %
// mask.Ne[1] and its planes i2 % mask.Ne[2], i3 % mask.Ne[3] apply (ggml
// requires mask.Ne[1] ≥ a.Ne[1], where that is just row i1). -Inf mask
// entries give 0. p.MaxBias > 0 turns on ALiBi: the slope of head i2
// (a.Ne[2] heads) follows ggml's m0/m1 schedule; with 0 the slope is 1.
// dst may be a.
func (b *Backend) SoftMax(dst, a, mask *tensor.Tensor, p ops.SoftMaxParams) {
	scale, maxBias := p.Scale, p.MaxBias
	t := &b.sm
	*t = softMaxTask{b: b, scale: scale, maxBias: maxBias}
	t.d.set("SoftMax", "dst", dst)
	t.a.set("SoftMax", "a", a)
	if !sameShape(&t.d, &t.a) || !t.d.isF32() || !t.a.isF32() {
		bug("SoftMax: dst %v%v, a %v%v", t.d.typ, t.d.ne, t.a.typ, t.a.ne)
	}
	if t.a.nelem() == 0 {
		*t = softMaxTask{} // no rows: nothing to mask (a batch of no tokens)
		return
	}
	if mask != nil {
		t.hasMask = true
		t.m.set("SoftMax", "mask", mask)
		if !isFloat(t.m.typ) || t.m.ne[0] != t.a.ne[0] || t.m.ne[1] == 0 || t.m.ne[2] == 0 || t.m.ne[3] == 0 ||
			t.a.ne[2]%t.m.ne[2] != 0 || t.a.ne[3]%t.m.ne[3] != 0 {
			bug("SoftMax: mask %v%v for a %v", t.m.typ, t.m.ne, t.a.ne)
		}
	}
	if maxBias > 0 {
		nHead := t.a.ne[2]
		t.nHeadLog2 = 1 << uint(math.Floor(math.Log2(float64(nHead))))
		t.m0 = powf(2, -maxBias/float32(t.nHeadLog2))
		t.m1 = powf(2, -(maxBias/2)/float32(t.nHeadLog2))
	}
	b.growScratch(b.pool.n, 2*t.a.ne[0])
	b.parallel(t, 6*t.a.nelem(), t.a.nrows())
	*t = softMaxTask{}
}

func powf(x, y float32) float32 { return float32(math.Pow(float64(x), float64(y))) }

type softMaxTask struct {
	b              *Backend
	scale, maxBias float32
	nHeadLog2      int
	m0, m1         float32
	hasMask        bool
	d, a, m        tview
}

func (t *softMaxTask) run(chunk, nchunks, tid int) {
	d, a, m := &t.d, &t.a, &t.m
	n := a.ne[0]
	w := t.b.scratch[tid][:n]
	mbuf := t.b.scratch[tid][n : 2*n]
	lo, hi := split(a.nrows(), chunk, nchunks)
	if t.shortRows() {
		t.runShortRows(lo, hi)
		return
	}
	for r := lo; r < hi; r++ {
		i1, i2, i3 := rowCoords(&a.ne, r)
		slope := float32(1)
		if t.maxBias > 0 {
			if h := i2; h < t.nHeadLog2 {
				slope = powf(t.m0, float32(h+1))
			} else {
				slope = powf(t.m1, float32(2*(h-t.nHeadLog2)+1))
			}
		}
		x := a.loadRow(a.off(i1, i2, i3), w)
		scaleF32(w, x, t.scale)
		if t.hasMask {
			mr := m.loadRow(m.off(i1%m.ne[1], i2%m.ne[2], i3%m.ne[3]), mbuf)
			addScaledF32(w, mr, slope)
		}
		do := d.off(i1, i2, i3)
		if d.dense() {
			softMaxRow(d.f32[do:do+n], w)
		} else {
			softMaxRow(w, w)
			d.storeRow(do, w)
		}
	}
}

// shortRows reports whether softMaxRowsAVX512 can take the rows: at most
// 16 elements each, f32 and dense, a mask without ALiBi slopes whose rows
// are the a rows' or one row for all.
func (t *softMaxTask) shortRows() bool {
	a, d, m := &t.a, &t.d, &t.m
	return level == isaAVX512 && a.ne[0] <= 16 && t.hasMask && t.maxBias == 0 && m.isF32() &&
		a.st[0] == 1 && d.st[0] == 1 && m.st[0] == 1 && (m.ne[1] == a.ne[1] || m.ne[1] == 1)
}

// runShortRows is run for short rows: one call per head (rows i1 of one
// i2, i3).
func (t *softMaxTask) runShortRows(lo, hi int) {
	d, a, m := &t.d, &t.a, &t.m
	n := a.ne[0]
	ldm := m.st[1]
	if m.ne[1] == 1 {
		ldm = 0
	}
	forRuns(&a.ne, lo, hi, func(i1, i2, i3, rows int) {
		do, ao := d.off(i1, i2, i3), a.off(i1, i2, i3)
		mi1 := i1
		if ldm == 0 {
			mi1 = 0
		}
		mo := m.off(mi1, i2%m.ne[2], i3%m.ne[3])
		last := rows - 1
		softMaxRowsAVX512(d.f32[do:do+last*d.st[1]+n], a.f32[ao:ao+last*a.st[1]+n], m.f32[mo:mo+last*ldm+n],
			rows, d.st[1], a.st[1], ldm, n, t.scale, &expC)
	})
}

// softMaxRow writes softmax(w) to y (y may be w): max, float32 exp(w-max),
// float64 sum, scaled by the float32 of 1/sum.
func softMaxRow(y, w []float32) {
	w = w[:len(y)]
	mx := maxF32(w)
	sum := expRow(y, w, 1, mx)
	scaleF32(y, y, float32(1/sum))
}
