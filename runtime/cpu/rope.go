package cpu

import (
	"math"
	"slices"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// Rope is ggml_rope_ext for mode 0 (rotate adjacent pairs) and
// ops.RopeNeox (rotate x[i], x[i+NDims/2]). Row (i1, i2, i3) of a (f32 or
// f16; dst the same type and shape) rotates by the angles of position
// pos[i2]; dimensions from NDims on are copied. θ follows ggml exactly in
// float32: θ₀ = pos, θ *= powf(FreqBase, -2/NDims) per pair, YaRN mixing per
// rope_yarn, cos and sin of the float32 angle scaled by AttnFactor (and the
// YaRN magnitude correction). freqs, when not nil, holds an f32 factor per
// pair that divides its θ (Llama 3's rope scaling). dst may be a.
func (b *Backend) Rope(dst, a, pos, freqs *tensor.Tensor, p ops.RopeParams) {
	t := &b.rope
	*t = ropeTask{b: b, p: p}
	t.d.set("Rope", "dst", dst)
	t.a.set("Rope", "a", a)
	t.pos.set("Rope", "pos", pos)
	if freqs != nil {
		var f tview
		f.set("Rope", "freqs", freqs)
		if f.typ != tensor.F32 || f.nelem() < p.NDims/2 || !f.dense() {
			bug("Rope: freqs %v%v for n_dims %d", f.typ, f.ne, p.NDims)
		}
		t.freqs = f.f32[:p.NDims/2]
	}
	if !sameShape(&t.d, &t.a) || t.d.typ != t.a.typ || !isFloat(t.a.typ) {
		bug("Rope: dst %v%v, a %v%v", t.d.typ, t.d.ne, t.a.typ, t.a.ne)
	}
	if t.pos.typ != tensor.I32 || t.pos.nelem() < t.a.ne[2] || !t.pos.dense() {
		bug("Rope: pos %v%v for a %v", t.pos.typ, t.pos.ne, t.a.ne)
	}
	if p.Mode != 0 && p.Mode != ops.RopeNeox {
		bug("Rope: mode %d not supported", p.Mode)
	}
	if p.NDims <= 0 || p.NDims%2 != 0 || p.NDims > t.a.ne[0] {
		bug("Rope: n_dims %d for a row of %d", p.NDims, t.a.ne[0])
	}
	t.tab = b.ropeTable(t)
	// per thread: a row of a and the rotated row
	b.growScratch(b.pool.n, 2*t.a.ne[0])
	b.parallel(t, 2*t.a.nelem(), t.a.nrows())
	*t = ropeTask{}
}

// ropeTable returns the cos/sin table of every position of t (NDims values
// per position, see ropeCache). Every rope of a model's evaluation rotates
// by the same positions with the same parameters (the queries and keys of
// each layer), so the last tables are kept and reused while their
// parameters and positions stay the same. There are a few: a lane of a
// parallel region rotates whichever part's tokens it claims.
func (b *Backend) ropeTable(t *ropeTask) []float32 {
	key := t.p
	key.Mode = 0 // the table does not depend on the mode
	npos := t.a.ne[2]
	for i := range b.ropeMemo {
		m := &b.ropeMemo[i]
		same := m.valid && m.key == key && len(m.pos) == npos && slices.Equal(m.freqs, t.freqs)
		for i := 0; same && i < npos; i++ {
			same = m.pos[i] == t.pos.i32[i*t.pos.st[0]]
		}
		if same {
			return m.tab
		}
	}
	m := &b.ropeMemo[b.ropeNext]
	b.ropeNext = (b.ropeNext + 1) % len(b.ropeMemo)
	m.valid, m.key = true, key
	m.freqs = append(m.freqs[:0], t.freqs...)
	p := &t.p
	t.thetaScale = powf(p.FreqBase, -2.0/float32(p.NDims))
	t.corr = ropeYarnCorrDims(p.NDims, p.NCtxOrig, p.FreqBase, p.BetaFast, p.BetaSlow)
	m.pos = m.pos[:0]
	for i := 0; i < npos; i++ {
		m.pos = append(m.pos, t.pos.i32[i*t.pos.st[0]])
	}
	if n := npos * key.NDims; cap(m.tab) < n {
		m.tab = make([]float32, n)
	}
	m.tab = m.tab[:npos*key.NDims]
	rt := &b.ropeT
	*rt = ropeTableTask{t: t, tab: m.tab, pos: m.pos}
	b.parallel(rt, 20*len(m.tab), npos)
	*rt = ropeTableTask{}
	return m.tab
}

// ropeMemo is a rope table: its parameters (Mode cleared), frequency
// factors and positions.
type ropeMemo struct {
	valid bool
	key   ops.RopeParams
	freqs []float32
	pos   []int32
	tab   []float32
}

type ropeTableTask struct {
	t   *ropeTask
	tab []float32
	pos []int32
}

func (rt *ropeTableTask) run(chunk, nchunks, _ int) {
	nd := rt.t.p.NDims
	lo, hi := split(len(rt.pos), chunk, nchunks)
	for i := lo; i < hi; i++ {
		rt.t.ropeCache(rt.tab[i*nd:(i+1)*nd], float32(rt.pos[i]))
	}
}

type ropeTask struct {
	b          *Backend
	tab        []float32 // cos/sin per position (ropeTable)
	p          ops.RopeParams
	thetaScale float32
	corr       [2]float32
	freqs      []float32 // per pair, nil for none
	d, a, pos  tview
}

// ropeYarnCorrDims is ggml_rope_yarn_corr_dims.
func ropeYarnCorrDims(nDims, nCtxOrig int, freqBase, betaFast, betaSlow float32) [2]float32 {
	corrDim := func(nRot float32) float32 {
		l := float32(math.Log(float64(float32(nCtxOrig) / (nRot * 2 * float32(math.Pi)))))
		return float32(nDims) * l / (2 * float32(math.Log(float64(freqBase))))
	}
	start := float32(math.Floor(float64(corrDim(betaFast))))
	end := float32(math.Ceil(float64(corrDim(betaSlow))))
	return [2]float32{max(0, start), min(float32(nDims-1), end)}
}

// ropeYarnRamp is rope_yarn_ramp.
func ropeYarnRamp(low, high float32, i0 int) float32 {
	y := (float32(i0/2) - low) / max(0.001, high-low)
	return 1 - min(1, max(0, y))
}

// ropeCache fills cache[i0/2] and cache[len/2 + i0/2] with cos and sin of
// pair i0/2 for position p (cosines, then sines: the vector kernels load
// them as they are) (ggml_rope_cache_init + rope_yarn).
func (t *ropeTask) ropeCache(cache []float32, p float32) {
	pr := &t.p
	theta := p
	for i0 := 0; i0+1 < len(cache); i0 += 2 {
		thetaExtrap := theta
		if t.freqs != nil {
			thetaExtrap = theta / t.freqs[i0/2]
		}
		thetaInterp := pr.FreqScale * thetaExtrap
		th := thetaInterp
		mscale := pr.AttnFactor
		if pr.ExtFactor != 0 {
			// gcc contracts both expressions of rope_yarn into FMAs:
			// fma(interp, 1-mix, extrap·mix) and fma(log(1/scale), 0.1, 1).
			rampMix := ropeYarnRamp(t.corr[0], t.corr[1], i0) * pr.ExtFactor
			th = fmaf(thetaInterp, 1-rampMix, thetaExtrap*rampMix)
			mscale *= fmaf(float32(math.Log(float64(1/pr.FreqScale))), 0.1, 1)
		}
		s, c := math.Sincos(float64(th))
		cache[i0/2] = float32(c) * mscale
		cache[len(cache)/2+i0/2] = float32(s) * mscale
		theta *= t.thetaScale
	}
}

func (t *ropeTask) run(chunk, nchunks, tid int) {
	d, a := &t.d, &t.a
	n, nd := a.ne[0], t.p.NDims
	scratch := t.b.scratch[tid]
	xbuf := scratch[:n]
	ybuf := scratch[n : 2*n]
	lo, hi := split(a.nrows(), chunk, nchunks)
	if t.p.Mode == 0 && n == nd && level == isaAVX512 && a.isF32() && a.st[0] == 1 && d.st[0] == 1 && a.st[1] == d.st[1] {
		t.runHeads(lo, hi)
		return
	}
	for r := lo; r < hi; r++ {
		i1, i2, i3 := rowCoords(&a.ne, r)
		cache := t.tab[i2*nd : (i2+1)*nd]
		ao, do := a.off(i1, i2, i3), d.off(i1, i2, i3)
		if a.isF32() && a.dense() && d.dense() {
			x, y := a.f32[ao:ao+n], d.f32[do:do+n]
			ropeRow(y, x, cache, t.p.Mode)
			if &x[0] != &y[0] {
				copy(y[nd:], x[nd:])
			}
			continue
		}
		x := a.loadRow(ao, xbuf)
		copy(ybuf[nd:], x[nd:])
		ropeRow(ybuf, x, cache, t.p.Mode)
		d.storeRow(do, ybuf)
	}
}

// runHeads rotates rows [lo, hi) whole, the rows of one position (the heads
// of a token) in one call: rows of a and dst are dense, the same distance
// apart, and rotated entirely.
func (t *ropeTask) runHeads(lo, hi int) {
	d, a := &t.d, &t.a
	n, ld := a.ne[0], a.st[1]
	forRuns(&a.ne, lo, hi, func(i1, i2, i3, rows int) {
		ao, do := a.off(i1, i2, i3), d.off(i1, i2, i3)
		span := (rows-1)*ld + n
		ropePairsRowsAVX512(d.f32[do:do+span], a.f32[ao:ao+span], t.tab[i2*n:(i2+1)*n], &ropePairIdx, rows, ld)
	})
}

// fmaf is C's fmaf for float32 operands: the float64 product of two float32
// values is exact, so one float64 add and the final rounding give the fused
// result (barring a double rounding at an exact float32 midpoint).
func fmaf(a, b, c float32) float32 { return float32(float64(a)*float64(b) + float64(c)) }

// ropeRow rotates the first len(cache) elements of x into y (y may be x):
// pairs (2i, 2i+1) for mode 0, (i, i+n/2) for NEOX, by the cosine cache[i]
// and the sine cache[n/2+i]. As gcc compiles ggml's rotate_pairs, x0's
// products are fused: y0 = fma(x0, cos, -(x1·sin)), y1 = fma(x0, sin, x1·cos).
func ropeRow(y, x, cache []float32, mode int) {
	nd := len(cache)
	x, y = x[:nd], y[:nd]
	if level == isaAVX512 {
		if mode == ops.RopeNeox {
			ropeNeoxAVX512(y, x, cache)
		} else {
			ropePairsRowsAVX512(y, x, cache, &ropePairIdx, 1, 0)
		}
		return
	}
	ropeRowGo(y, x, cache, mode)
}

// ropePairIdx spreads eight cosines (or sines) over sixteen lanes: c0 c0 c1 c1 …
var ropePairIdx = [16]uint32{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7}

// ropeRowGo is ropeRow's loop.
func ropeRowGo(y, x, cache []float32, mode int) {
	nd := len(cache)
	h := nd / 2
	cs, sn := cache[:h], cache[h:nd]
	if mode == ops.RopeNeox {
		x0, x1 := x[:h], x[h:nd]
		y0, y1 := y[:h], y[h:nd]
		for i := range x0 {
			c, s := cs[i], sn[i]
			u, v := x0[i], x1[i]
			y0[i] = fmaf(u, c, -(v * s))
			y1[i] = fmaf(u, s, v*c)
		}
		return
	}
	x, y = x[:nd], y[:nd]
	for i := 0; i < h; i++ {
		c, s := cs[i], sn[i]
		u, v := x[2*i], x[2*i+1]
		y[2*i] = fmaf(u, c, -(v * s))
		y[2*i+1] = fmaf(u, s, v*c)
	}
}
