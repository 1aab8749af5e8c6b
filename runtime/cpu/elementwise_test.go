package cpu_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

var binOps = []struct {
	name string
	f    func(b *cpu.Backend, dst, a, x *tensor.Tensor)
	ref  func(a, x float64) float64
}{
	{"Add", (*cpu.Backend).Add, func(a, x float64) float64 { return a + x }},
	{"Sub", (*cpu.Backend).Sub, func(a, x float64) float64 { return a - x }},
	{"Mul", (*cpu.Backend).Mul, func(a, x float64) float64 { return a * x }},
	{"Div", (*cpu.Backend).Div, func(a, x float64) float64 { return a / x }},
}

// refBinary is a op x with x repeated, each result rounded to float32 (the
// op is one float32 operation, so float64-then-round is its exact result)
// and then to dst's type.
func refBinary(a, x *tt, dt tensor.DType, op func(a, x float64) float64) []float64 {
	want := make([]float64, a.NElem())
	for k := range want {
		i0 := k % a.Ne[0]
		i1 := k / a.Ne[0] % a.Ne[1]
		i2 := k / a.Ne[0] / a.Ne[1] % a.Ne[2]
		i3 := k / a.Ne[0] / a.Ne[1] / a.Ne[2]
		xv := x.at4(i0%x.Ne[0], i1%x.Ne[1], i2%x.Ne[2], i3%x.Ne[3])
		want[k] = roundTo(dt, float64(float32(op(a.at(k), xv))))
	}
	return want
}

// Tolerance: exact. Each element is one float32 operation on the (f16 or
// f32) inputs, rounded once more for an f16 dst.
func TestBinary(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		types := []tensor.DType{tensor.F32, tensor.F16}
		forBackends(t, func(t *testing.T, b *cpu.Backend, r *rand.Rand) {
			for _, op := range binOps {
				for i := 0; i < 12; i++ {
					ne := randShape(r, [4]int{40, 6, 4, 3})
					if i%3 == 0 {
						ne = randShape(r, [4]int{3000, 3, 2, 1}) // big rows
					}
					at, xt, dt := tensor.F32, tensor.F32, tensor.F32
					if i%4 == 3 {
						at, xt, dt = types[r.IntN(2)], types[r.IntN(2)], types[r.IntN(2)]
					}
					a := mk(r, at, ne, layout(r.IntN(int(nLayouts))))
					x := mk(r, xt, repeatShape(r, ne), layout(r.IntN(int(nLayouts))))
					if op.name == "Div" {
						for k := 0; k < x.NElem(); k++ {
							x.set(k, 0.5+x.at(k)) // keep away from 0 … mostly
						}
					}
					inPlace := i%5 == 1 && at == dt
					var d *tt
					if inPlace {
						d = a
					} else {
						d = mkOut(r, dt, ne, layout(r.IntN(int(nLayouts))))
					}
					want := refBinary(a, x, dt, op.ref)
					before, inputs := d.snapshot(), readOnly(t, x)
					op.f(b, d.Tensor, a.Tensor, x.Tensor)
					checkUntouched(t, d, before)
					inputs()
					expectClose(t, d, want, exact)
				}
			}
		})
	})
}

var unOps = []struct {
	name string
	f    func(b *cpu.Backend, dst, a *tensor.Tensor)
	ref  func(x float64) float64 // float64 reference
	tol  func(x, y float64) float64
}{
	{"Scale", func(b *cpu.Backend, d, a *tensor.Tensor) { b.Scale(d, a, ops.ScaleParams{S: 0.375}) },
		func(x float64) float64 { return float64(float32(x * 0.375)) },
		func(x, y float64) float64 { return 0 }},
	{"Relu", (*cpu.Backend).Relu, func(x float64) float64 { return math.Max(x, 0) },
		func(x, y float64) float64 { return 0 }},
	// gelu goes through f16 in and out: 2⁻¹¹ relative on x (gelu' ≤ 1.13)
	// and on the result.
	{"Gelu", (*cpu.Backend).Gelu, geluRef,
		func(x, y float64) float64 { return 6e-4*math.Abs(x) + 5e-4*math.Abs(y) + 1e-7 }},
	{"Silu", (*cpu.Backend).Silu, func(x float64) float64 { return x / (1 + math.Exp(-x)) },
		func(x, y float64) float64 { return 3e-7*math.Abs(y) + 1e-9 }},
	// One rounding of the float64 tanh.
	{"Tanh", (*cpu.Backend).Tanh, math.Tanh, func(x, y float64) float64 { return 6e-8 * math.Abs(y) }},
	{"Sigmoid", (*cpu.Backend).Sigmoid, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) },
		func(x, y float64) float64 { return 3e-7*math.Abs(y) + 1e-9 }},
}

func geluRef(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*x*(1+0.044715*x*x)))
}

// Tolerances: Scale and Relu exact; Gelu within its f16 rounding of input and
// output; Silu and Sigmoid 3e-7 relative (float32 exp and division).
func TestUnary(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		forBackends(t, func(t *testing.T, b *cpu.Backend, r *rand.Rand) {
			for _, op := range unOps {
				for i := 0; i < 10; i++ {
					ne := randShape(r, [4]int{50, 5, 4, 3})
					if i%3 == 0 {
						ne = randShape(r, [4]int{3000, 4, 1, 1})
					}
					typ := tensor.F32
					if i%4 == 3 {
						typ = tensor.F16
					}
					a := mk(r, typ, ne, layout(r.IntN(int(nLayouts))))
					for k := 0; k < a.NElem(); k++ {
						a.set(k, 12*a.at(k)) // reach gelu's ±10 cut-offs
					}
					d := a
					if i%3 != 1 {
						d = mkOut(r, typ, ne, layout(r.IntN(int(nLayouts))))
					}
					in := a.values()
					want := make([]float64, len(in))
					for k, x := range in {
						want[k] = roundTo(typ, op.ref(x))
					}
					before := d.snapshot()
					op.f(b, d.Tensor, a.Tensor)
					checkUntouched(t, d, before)
					expectClose(t, d, want, func(k int) float64 {
						tol := op.tol(in[k], want[k])
						if typ == tensor.F16 {
							tol += math.Abs(want[k]) / 1024
						}
						return tol
					})
				}
			}
		})
	})
}

// geluGGML is ggml's f32 gelu built independently of the package: the ±10
// cut-offs, then f16(gelu32(f16(x))) with gelu32 evaluated in float32 as gcc
// compiles ggml_gelu_f32 (one FMA for 1 + 0.044715·x·x).
func geluGGML(x float32) float32 {
	switch {
	case x <= -10:
		return 0
	case x >= 10:
		return x
	}
	h := tensor.F16ToF32(tensor.F32ToF16(x))
	inner := float32(math.FMA(float64(float32(0.044715)*h), float64(h), 1))
	th := float32(math.Tanh(float64(float32(0.79788456080286535587989211986876) * h * inner)))
	return tensor.F16ToF32(tensor.F32ToF16(0.5 * h * (1 + th)))
}

// TestGeluMatchesGGML checks the table-driven gelu bit for bit, and the table
// against a hash recorded from ggml's own formula built with gcc -O3
// -march=native (glibc tanhf): FNV-1a 64 over the 65536 f16 entries.
func TestGeluMatchesGGML(t *testing.T) {
	const gccTableHash = 0x62f94b43163ac396
	h := uint64(1469598103934665603)
	for _, v := range cpu.GeluTable() {
		for _, c := range []uint16{v & 0xff, v >> 8} {
			h ^= uint64(c)
			h *= 1099511628211
		}
	}
	if h != gccTableHash {
		t.Errorf("gelu table hash %#x, gcc-built ggml formula gives %#x", h, uint64(gccTableHash))
	}
	b := cpu.New(1)
	defer b.Close()
	r := rand.New(rand.NewPCG(3, 4))
	a := mk(r, tensor.F32, [4]int{4096, 1, 1, 1}, dense)
	for k := 0; k < a.NElem(); k++ {
		a.set(k, 24*(r.Float64()-0.5))
	}
	d := mkOut(r, tensor.F32, a.Ne, dense)
	b.Gelu(d.Tensor, a.Tensor)
	want := make([]float64, a.NElem())
	for k := range want {
		want[k] = float64(geluGGML(float32(a.at(k))))
	}
	expectClose(t, d, want, exact)
}

// TestExp checks the exponential behind SoftMax and Silu over its whole
// range: softmax of a pair [0, x] is e^x/(1+e^x), Silu(x) is x/(1+e^-x),
// Sigmoid(x) 1/(1+e^-x).
// Tolerance: 3e-7 relative (one ulp of e^x plus the division), and the
// smallest subnormal.
func TestExp(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		b := cpu.New(1)
		defer b.Close()
		r := rand.New(rand.NewPCG(9, 9))
		for _, x := range []float64{math.Inf(-1), -120, -103.9, -87.5, -50, -1e-3, 0} {
			p := mk(r, tensor.F32, [4]int{2, 1, 1, 1}, dense)
			p.set(0, 0)
			p.set(1, x)
			d := mkOut(r, tensor.F32, p.Ne, dense)
			b.SoftMax(d.Tensor, p.Tensor, nil, ops.SoftMaxParams{Scale: 1, MaxBias: 0})
			e := math.Exp(x)
			want := []float64{roundTo(tensor.F32, 1/(1+e)), roundTo(tensor.F32, e/(1+e))}
			expectClose(t, d, want, func(k int) float64 { return 3e-7*want[k] + 0x1p-149 })
		}
		a := mk(r, tensor.F32, [4]int{20000, 1, 1, 1}, dense)
		for k := 0; k < a.NElem(); k++ {
			a.set(k, 100*(r.Float64()-0.8)) // e^-x up to e^80, and Inf past 89
		}
		a.set(0, -95)
		a.set(1, math.NaN())
		d := mkOut(r, tensor.F32, a.Ne, dense)
		b.Silu(d.Tensor, a.Tensor)
		want := make([]float64, a.NElem())
		for k := range want {
			x := a.at(k)
			// e^-x overflows float32 past 88.7, as in ggml: silu(-95) = -0
			want[k] = roundTo(tensor.F32, x/(1+float64(float32(math.Exp(-x)))))
		}
		expectClose(t, d, want, func(k int) float64 { return 3e-7*math.Abs(want[k]) + 0x1p-149 })
		b.Sigmoid(d.Tensor, a.Tensor)
		for k := range want {
			// sigmoid(-95) = 0 and sigmoid(x > 104) = 1, as in ggml
			want[k] = roundTo(tensor.F32, 1/(1+float64(float32(math.Exp(-a.at(k))))))
		}
		expectClose(t, d, want, func(k int) float64 { return 3e-7*math.Abs(want[k]) + 0x1p-149 })
	})
}

// BenchmarkGating: the router's sigmoid against silu over a batch's
// logits (128 experts, 512 tokens), one thread.
func BenchmarkGating(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	c := cpu.New(1)
	defer c.Close()
	a := mk(r, tensor.F32, [4]int{128, 512, 1, 1}, dense)
	d := mkOut(r, tensor.F32, a.Ne, dense)
	for _, k := range []struct {
		name string
		f    func(dst, a *tensor.Tensor)
	}{{"sigmoid", c.Sigmoid}, {"silu", c.Silu}} {
		b.Run(k.name, func(b *testing.B) {
			for b.Loop() {
				k.f(d.Tensor, a.Tensor)
			}
		})
	}
}
