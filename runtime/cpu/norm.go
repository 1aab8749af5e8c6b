package cpu

import (
	"math"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// RMSNorm is ggml_rms_norm: each row scaled by 1/sqrt(mean(x²)+eps). The
// squares are float32 products summed in float64; mean and scale are
// float32, as in ggml. dst may be a.
func (b *Backend) RMSNorm(dst, a *tensor.Tensor, p ops.NormParams) { b.normalize(true, dst, a, p.Eps) }

// Norm is ggml_norm: each row centred on its mean and scaled by
// 1/sqrt(variance+eps). Sums run in float64, mean and variance are rounded
// to float32, as in ggml. dst may be a.
func (b *Backend) Norm(dst, a *tensor.Tensor, p ops.NormParams) { b.normalize(false, dst, a, p.Eps) }

type normTask struct {
	b    *Backend
	rms  bool
	eps  float32
	d, a tview
}

func (b *Backend) normalize(rms bool, dst, a *tensor.Tensor, eps float32) {
	name := "Norm"
	if rms {
		name = "RMSNorm"
	}
	t := &b.norm
	*t = normTask{b: b, rms: rms, eps: eps}
	t.d.set(name, "dst", dst)
	t.a.set(name, "a", a)
	if !sameShape(&t.d, &t.a) || !t.d.isF32() || !t.a.isF32() {
		bug("%s: dst %v%v, a %v%v", name, t.d.typ, t.d.ne, t.a.typ, t.a.ne)
	}
	if !t.d.dense() || !t.a.dense() {
		b.growScratch(b.pool.n, t.a.ne[0])
	}
	b.parallel(t, 2*t.a.nelem(), t.a.nrows())
	*t = normTask{}
}

func (t *normTask) run(chunk, nchunks, tid int) {
	d, a := &t.d, &t.a
	n := a.ne[0]
	fast := d.dense() && a.dense()
	lo, hi := split(a.nrows(), chunk, nchunks)
	for r := lo; r < hi; r++ {
		ao, do := a.rowOff(r), d.rowOff(r)
		var x, y []float32
		if fast {
			x, y = a.f32[ao:ao+n], d.f32[do:do+n]
		} else {
			x = a.loadRow(ao, t.b.scratch[tid])
			y = t.b.scratch[tid][:n]
		}
		if t.rms {
			rmsNormRow(y, x, t.eps)
		} else {
			normRow(y, x, t.eps)
		}
		if !fast {
			d.storeRow(do, y)
		}
	}
}

// rmsNormRow is ggml_compute_forward_rms_norm_f32 for one row; y may be x.
func rmsNormRow(y, x []float32, eps float32) {
	x = x[:len(y)]
	sum := sumSqF64(x)
	mean := float32(sum / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(mean+eps)))
	scaleF32(y, x, scale)
}

// normRow is ggml_compute_forward_norm_f32 for one row; y may be x.
func normRow(y, x []float32, eps float32) {
	x = x[:len(y)]
	var sum float64
	for _, v := range x {
		sum += float64(v)
	}
	mean := float32(sum) / float32(len(x))
	var sum2 float64
	for i, v := range x {
		c := v - mean
		y[i] = c
		sum2 += float64(c * c)
	}
	variance := float32(sum2 / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(variance+eps)))
	scaleF32(y, y, scale)
}
