package cpu_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// refRope is ggml_rope_ext in float64, except for θ: ggml defines it by a
// float32 recurrence (θ₀ = pos, θ *= powf(base, -2/n_dims)), which the
// reference follows, because at large positions the float32 θ is the
// semantics (its rounding is far above 1e-4 radians); so is θ divided by
// its pair's factor of freqs (when not nil).
func refRope(a, pos, freqs *tt, p ops.RopeParams) []float64 {
	ne := a.Ne
	nd := p.NDims
	thetaScale := float32(math.Pow(float64(p.FreqBase), float64(float32(-2)/float32(nd))))
	corrDim := func(nRot float64) float64 {
		return float64(nd) * math.Log(float64(p.NCtxOrig)/(nRot*2*math.Pi)) / (2 * math.Log(float64(p.FreqBase)))
	}
	lowC := math.Max(0, math.Floor(corrDim(float64(p.BetaFast))))
	highC := math.Min(float64(nd-1), math.Ceil(corrDim(float64(p.BetaSlow))))
	want := a.values()
	rowsOf(ne, func(_, i2, _, k0 int) {
		theta := float32(pos.at(i2))
		for i0 := 0; i0 < nd; i0 += 2 {
			ext := float64(theta)
			if freqs != nil {
				ext = float64(theta / float32(freqs.at(i0/2)))
			}
			th := float64(p.FreqScale) * ext
			mscale := float64(p.AttnFactor)
			if p.ExtFactor != 0 {
				y := (float64(i0/2) - lowC) / math.Max(0.001, highC-lowC)
				mix := (1 - math.Min(1, math.Max(0, y))) * float64(p.ExtFactor)
				th = th*(1-mix) + ext*mix
				mscale *= 1 + 0.1*math.Log(1/float64(p.FreqScale))
			}
			c, s := math.Cos(th)*mscale, math.Sin(th)*mscale
			j0, j1 := i0, i0+1
			if p.Mode == ops.RopeNeox {
				j0, j1 = i0/2, i0/2+nd/2
			}
			x0, x1 := a.at(k0+j0), a.at(k0+j1)
			want[k0+j0] = x0*c - x1*s
			want[k0+j1] = x0*s + x1*c
			theta *= thetaScale
		}
	})
	return want
}

// Tolerance: 2e-6 absolute (values in [-1, 1], float32 cos/sin and
// rotation) without YaRN, 2e-5 with it (positions < 64: the float32 mix of θ
// differs from float64 by an ulp of θ); f16 adds its rounding.
func TestRope(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		forBackends(t, func(t *testing.T, b *cpu.Backend, r *rand.Rand) {
			for i := 0; i < 16; i++ {
				ne := randShape(r, [4]int{5, 5, 7, 2})
				ne[0] = 2 * (2 + r.IntN(40))
				p := ops.RopeParams{
					NDims: ne[0], Mode: 0, NCtxOrig: 4096,
					FreqBase: 10000, FreqScale: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1,
				}
				if i%2 == 1 {
					p.Mode = ops.RopeNeox
				}
				if i%3 == 1 {
					p.NDims = 2 * (1 + r.IntN(ne[0]/2))
				}
				maxPos := 60000
				tol := 2e-6
				if i%4 == 2 {
					p.FreqScale, p.ExtFactor, p.AttnFactor, p.FreqBase = 0.25, 1, 0.9, 500000
					maxPos, tol = 64, 2e-5
				}
				typ := tensor.F32
				if i%5 == 4 {
					typ = tensor.F16
				}
				a := mk(r, typ, ne, layout(r.IntN(int(nLayouts))))
				pos := mk(r, tensor.I32, [4]int{ne[2], 1, 1, 1}, dense)
				for k := 0; k < ne[2]; k++ {
					pos.set(k, float64(r.IntN(maxPos)))
				}
				var freqs *tt
				var ft *tensor.Tensor
				if i%4 == 3 {
					freqs = mk(r, tensor.F32, [4]int{p.NDims / 2, 1, 1, 1}, dense)
					for k := 0; k < p.NDims/2; k++ {
						freqs.set(k, 1+7*r.Float64())
					}
					ft = freqs.Tensor
				}
				want := refRope(a, pos, freqs, p)
				d := a
				if i%3 != 0 {
					d = mkOut(r, typ, ne, layout(r.IntN(int(nLayouts))))
				}
				for k := range want {
					want[k] = roundTo(typ, want[k])
				}
				before, inputs := d.snapshot(), readOnly(t, pos)
				b.Rope(d.Tensor, a.Tensor, pos.Tensor, ft, p)
				checkUntouched(t, d, before)
				inputs()
				expectClose(t, d, want, func(k int) float64 {
					if typ == tensor.F16 {
						return tol + math.Abs(want[k])/1024
					}
					return tol
				})
			}
		})
	})
}

// TestRopeTableReuse: the backend keeps the last cos/sin table, and a call
// with the same parameters but other positions (in the same tensor, changed
// in place), more positions, other parameters or frequency factors (changed
// in place too) must not reuse it.
func TestRopeTableReuse(t *testing.T) {
	b := cpu.New(2)
	defer b.Close()
	r := rand.New(rand.NewPCG(4, 4))
	p := ops.RopeParams{NDims: 8, NCtxOrig: 4096, FreqBase: 10000, FreqScale: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}
	pos := mk(r, tensor.I32, [4]int{3, 1, 1, 1}, dense)
	first := pos
	freqs := mk(r, tensor.F32, [4]int{4, 1, 1, 1}, dense)
	var f *tt
	for step := 0; step < 11; step++ {
		switch step {
		case 2:
			pos.set(1, 77) // same tensor, new position
		case 3:
			p.FreqBase = 500000
		case 4:
			p.Mode = ops.RopeNeox // same table
		case 5:
			pos = mk(r, tensor.I32, [4]int{4, 1, 1, 1}, dense)
			pos.set(3, 5)
		case 6, 8: // back to earlier positions and parameters: kept tables
			pos, p.FreqBase = first, 10000
		case 7:
			pos.set(0, 9) // a kept table's positions changed
		case 9:
			f = freqs
		case 10:
			freqs.set(2, 4)
		}
		a := mk(r, tensor.F32, [4]int{8, 2, pos.Ne[0], 1}, dense)
		d := mkOut(r, tensor.F32, a.Ne, dense)
		var ft *tensor.Tensor
		if f != nil {
			ft = f.Tensor
		}
		b.Rope(d.Tensor, a.Tensor, pos.Tensor, ft, p)
		expectClose(t, d, refRope(a, pos, f, p), func(int) float64 { return 2e-6 })
	}
}
