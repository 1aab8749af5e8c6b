package cpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// faCase is one flash_attn_ext problem: head sizes, tokens, heads, keys.
type faCase struct {
	dk, dv, n, h, hkv, nkv, b3 int
	kt, vt                     tensor.DType
	mask                       tensor.DType // 0: none
	maxBias, softcap           float32
}

func (c faCase) String() string {
	return fmt.Sprintf("dk%d dv%d n%d h%d/%d kv%d b%d %v/%v mask=%v bias%g cap%g", c.dk, c.dv, c.n, c.h, c.hkv, c.nkv, c.b3, c.kt, c.vt, c.mask, c.maxBias, c.softcap)
}

// faRef is flash_attn_ext in float64 on the operands' stored values.
func faRef(c faCase, q, k, v, m *tt, scale float32) []float64 {
	return faRefAt(c, q.at4, k.at4, v.at4, m, scale)
}

// faRefAt is faRef over the values qv, kv, vv return for (element, row,
// head, i3); mask plane h % H_m applies to head h.
func faRefAt(c faCase, qv, kv, vv func(e, j, h, i3 int) float64, m *tt, scale float32) []float64 {
	out := make([]float64, c.dv*c.h*c.n*c.b3)
	nHeadLog2 := 1 << uint(math.Floor(math.Log2(float64(c.h))))
	m0 := math.Pow(2, -float64(c.maxBias)/float64(nHeadLog2))
	m1 := math.Pow(2, -float64(c.maxBias)/2/float64(nHeadLog2))
	s := make([]float64, c.nkv)
	for i3 := range c.b3 {
		for h := range c.h {
			slope := 1.0
			if c.maxBias > 0 {
				if h < nHeadLog2 {
					slope = math.Pow(m0, float64(h+1))
				} else {
					slope = math.Pow(m1, float64(2*(h-nHeadLog2)+1))
				}
			}
			hk := h / (c.h / c.hkv)
			for tok := range c.n {
				mx := math.Inf(-1)
				for j := range c.nkv {
					d := 0.0
					for e := range c.dk {
						d += qv(e, tok, h, i3) * kv(e, j, hk, i3)
					}
					d *= float64(scale)
					if c.softcap != 0 {
						d = float64(c.softcap) * math.Tanh(d/float64(c.softcap))
					}
					if m != nil {
						d += slope * m.at4(j, tok, h%m.Ne[2], i3%m.Ne[3])
					}
					s[j] = d
					mx = max(mx, d)
				}
				sum := 0.0
				for j := range s {
					if !math.IsInf(mx, -1) {
						s[j] = math.Exp(s[j] - mx)
					} else {
						s[j] = 0
					}
					sum += s[j]
				}
				for e := range c.dv {
					acc := 0.0
					for j := range s {
						acc += s[j] * vv(e, j, hk, i3)
					}
					if sum > 0 {
						acc /= sum
					}
					out[e+c.dv*(h+c.h*(tok+c.n*i3))] = acc
				}
			}
		}
	}
	return out
}

// causalMask is [nkv, n + pad] of type typ: 0 where key j may be seen by
// token i (j ≤ nkv - n + i), -inf elsewhere.
func causalMask(r *rand.Rand, typ tensor.DType, nkv, n, pad int) *tt {
	m := mk(r, typ, [4]int{nkv, n + pad, 1, 1}, dense)
	for k := range m.NElem() {
		j, i := k%nkv, k/nkv
		if j <= nkv-n+i {
			m.set(k, 0)
		} else {
			m.set(k, math.Inf(-1))
		}
	}
	return m
}

// TestFlashAttnExt checks the kernel against float64 attention on the
// same (f16-stored) operands. Tolerance: 1e-3 (seen: 2e-4) where the weighted sum of v
// accumulates in f16 (an f16 v below 64 tokens, as ggml-cpu) or q is
// rounded to f16, 1e-5 (seen: 1e-7) in float32; values are in [-1, 1].
func TestFlashAttnExt(t *testing.T) {
	F16, F32 := tensor.F16, tensor.F32
	cases := []faCase{
		{dk: 16, dv: 16, n: 1, h: 4, hkv: 2, nkv: 48, b3: 1, kt: F16, vt: F16, mask: F16},
		{dk: 16, dv: 16, n: 7, h: 4, hkv: 2, nkv: 48, b3: 1, kt: F16, vt: F16, mask: F16},
		{dk: 64, dv: 64, n: 5, h: 8, hkv: 1, nkv: 37, b3: 1, kt: F16, vt: F16, mask: F32},
		{dk: 40, dv: 24, n: 3, h: 6, hkv: 3, nkv: 20, b3: 2, kt: F32, vt: F32},
		{dk: 32, dv: 32, n: 4, h: 4, hkv: 4, nkv: 30, b3: 1, kt: F16, vt: F32, mask: F16, maxBias: 8},
		{dk: 32, dv: 32, n: 4, h: 4, hkv: 2, nkv: 30, b3: 1, kt: F32, vt: F16, mask: F16, softcap: 3},
		{dk: 16, dv: 16, n: 1, h: 4, hkv: 2, nkv: 600, b3: 1, kt: F16, vt: F16, mask: F16}, // split keys
		{dk: 16, dv: 16, n: 70, h: 2, hkv: 1, nkv: 90, b3: 1, kt: F16, vt: F16, mask: F16}, // tiled
		{dk: 16, dv: 16, n: 3, h: 2, hkv: 1, nkv: 8, b3: 1, kt: F16, vt: F16, mask: F16},   // rows with every key masked
	}
	forISAs(t, func(t *testing.T) {
		forBackends(t, func(t *testing.T, b *cpu.Backend, r *rand.Rand) {
			for i, c := range cases {
				q := mk(r, F32, [4]int{c.dk, c.n, c.h, c.b3}, layout(i%2))
				k := mk(r, c.kt, [4]int{c.dk, c.nkv, c.hkv, c.b3}, layout((i+1)%2))
				v := mk(r, c.vt, [4]int{c.dv, c.nkv, c.hkv, c.b3}, dense)
				var m *tt
				var mt *tensor.Tensor
				if c.mask != 0 {
					m = causalMask(r, c.mask, c.nkv, c.n, i%3)
					if i == len(cases)-1 {
						for j := range c.nkv {
							m.set(j, math.Inf(-1)) // token 0 sees no key
						}
					}
					mt = m.Tensor
				}
				d := mkOut(r, F32, [4]int{c.dv, c.h, c.n, c.b3}, layout(i%2))
				scale := float32(1 / math.Sqrt(float64(c.dk)))
				b.FlashAttnExt(d.Tensor, q.Tensor, k.Tensor, v.Tensor, mt, ops.FlashAttnParams{Scale: scale, MaxBias: c.maxBias, LogitSoftcap: c.softcap})
				want := faRef(c, q, k, v, m, scale)
				tol := 1e-5
				if c.kt == F16 && c.n < 64 || c.vt == F16 && c.n < 64 {
					tol = 1e-3
				}
				t.Run(c.String(), func(t *testing.T) { expectClose(t, d, want, func(int) float64 { return tol }) })
			}
		})
	})
}

// TestFlashAttnMatchesSoftMaxPath compares the fused op with the graph
// llama.cpp builds without it: kq = mul_mat(k, q), soft_max(kq, mask,
// scale), mul_mat(vᵀ, kq) over an f16 cache, whose products round the
// softmax to f16. Tolerance 2e-3 (seen: 4.5e-4).
func TestFlashAttnMatchesSoftMaxPath(t *testing.T) {
	F16, F32 := tensor.F16, tensor.F32
	b := cpu.New(2)
	defer b.Close()
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 9} {
		dk, h, hkv, nkv := 32, 8, 2, 40
		qh := mk(r, F32, [4]int{dk, h, n, 1}, dense) // rope's layout: [head_dim, n_head, n_tokens]
		q := *qh.Tensor
		q.Ne[1], q.Ne[2], q.Nb[1], q.Nb[2] = n, h, qh.Nb[2], qh.Nb[1] // permute(0, 2, 1, 3)
		k := mk(r, F16, [4]int{dk, nkv, hkv, 1}, dense)
		v := mk(r, F16, [4]int{dk, nkv, hkv, 1}, dense)
		mask16, mask32 := causalMask(r, F16, nkv, n, 0), causalMask(r, F32, nkv, n, 0)
		scale := float32(1 / math.Sqrt(float64(dk)))

		fa := tensor.NewTensor(F32, [4]int{dk, h, n, 1})
		b.FlashAttnExt(&fa, &q, k.Tensor, v.Tensor, mask16.Tensor, ops.FlashAttnParams{Scale: scale, Prec: 32})

		kq := tensor.NewTensor(F32, [4]int{nkv, n, h, 1})
		b.MulMat(&kq, k.Tensor, &q, ops.MulMatParams{Prec: 32})
		b.SoftMax(&kq, &kq, mask32.Tensor, ops.SoftMaxParams{Scale: scale})
		vt := tensor.NewTensor(F16, [4]int{nkv, dk, hkv, 1}) // the V cache as the path without flash attention stores it
		tr := *v.Tensor
		tr.Ne[0], tr.Ne[1], tr.Nb[0], tr.Nb[1] = tr.Ne[1], tr.Ne[0], tr.Nb[1], tr.Nb[0]
		b.Cpy(&vt, &tr)
		kqv := tensor.NewTensor(F32, [4]int{dk, n, h, 1})
		b.MulMat(&kqv, &vt, &kq, ops.MulMatParams{})

		worst := 0.0
		for tok := range n {
			for hd := range h {
				for e := range dk {
					got := fa.F32s()[e+dk*(hd+h*tok)]
					want := kqv.F32s()[e+dk*(tok+n*hd)]
					worst = max(worst, math.Abs(float64(got-want)))
				}
			}
		}
		if worst > 2e-3 {
			t.Errorf("%d tokens: flash attention differs from mul_mat, soft_max, mul_mat by %g, want at most 2e-3", n, worst)
		}
		t.Logf("%d tokens: max |diff| %.3g", n, worst)
	}
}

// TestFlashAttnBlocks checks the kernel's key blocks and query tiles
// against float64 attention: ragged last blocks, tiles of many tokens and
// of the GQA group's heads, masks that hide whole blocks (and a token that
// sees nothing), one mask plane per head, softcap, ALiBi, head sizes the
// vector kernels take in part, and quantized K/V (whose stored values the
// reference reads, with q rounded through q8_0 as ggml's vec_dot does).
// Tolerance: 1e-5 (seen: 1.4e-7) in float32, 2e-3 (seen: 8.1e-4) where
// the sum of an f16 v is f16 or q is rounded to f16 (below 64 tokens).
func TestFlashAttnBlocks(t *testing.T) {
	F16, F32, Q8, Q4 := tensor.F16, tensor.F32, tensor.Q8_0, tensor.Q4_0
	type blockCase struct {
		faCase
		maskKind int // 0 causal, 1 blocks hidden, 2 one random plane per head
	}
	cases := []blockCase{
		{faCase: faCase{dk: 64, dv: 64, n: 1, h: 16, hkv: 4, nkv: 700, b3: 1, kt: F16, vt: F16, mask: F16}},
		{faCase: faCase{dk: 64, dv: 64, n: 70, h: 4, hkv: 1, nkv: 150, b3: 1, kt: F16, vt: F16, mask: F16}},
		{faCase: faCase{dk: 64, dv: 64, n: 130, h: 2, hkv: 2, nkv: 200, b3: 1, kt: F32, vt: F32, mask: F32, softcap: 20}},
		{faCase: faCase{dk: 32, dv: 32, n: 66, h: 8, hkv: 2, nkv: 100, b3: 1, kt: F16, vt: F16, mask: F16, maxBias: 8}},
		{faCase: faCase{dk: 64, dv: 64, n: 9, h: 8, hkv: 2, nkv: 190, b3: 2, kt: F16, vt: F16, mask: F16}, maskKind: 1},
		{faCase: faCase{dk: 64, dv: 64, n: 66, h: 2, hkv: 1, nkv: 200, b3: 1, kt: F16, vt: F16, mask: F32}, maskKind: 1},
		{faCase: faCase{dk: 64, dv: 96, n: 6, h: 6, hkv: 3, nkv: 150, b3: 1, kt: F16, vt: F16, mask: F16}, maskKind: 2},
		{faCase: faCase{dk: 36, dv: 24, n: 65, h: 4, hkv: 2, nkv: 100, b3: 1, kt: F16, vt: F16, mask: F16}},
		{faCase: faCase{dk: 36, dv: 40, n: 3, h: 4, hkv: 2, nkv: 100, b3: 1, kt: F16, vt: F32, mask: F16, softcap: 5}},
		{faCase: faCase{dk: 64, dv: 64, n: 1, h: 16, hkv: 4, nkv: 600, b3: 1, kt: Q8, vt: Q8, mask: F16}},
		{faCase: faCase{dk: 64, dv: 64, n: 5, h: 8, hkv: 2, nkv: 130, b3: 1, kt: Q8, vt: F16, mask: F16}},
		{faCase: faCase{dk: 64, dv: 64, n: 66, h: 4, hkv: 2, nkv: 130, b3: 1, kt: Q8, vt: Q8, mask: F16}},
		{faCase: faCase{dk: 64, dv: 64, n: 66, h: 4, hkv: 2, nkv: 100, b3: 1, kt: Q8, vt: F16, mask: F16}},
		{faCase: faCase{dk: 32, dv: 32, n: 3, h: 4, hkv: 2, nkv: 90, b3: 1, kt: Q4, vt: Q4, mask: F16}},
	}
	forISAs(t, func(t *testing.T) {
		forBackends(t, func(t *testing.T, b *cpu.Backend, r *rand.Rand) {
			for i, c := range cases {
				q := mk(r, F32, [4]int{c.dk, c.n, c.h, c.b3}, layout(i%2))
				kt, kv := faOperand(r, c.kt, [4]int{c.dk, c.nkv, c.hkv, c.b3}, layout((i+1)%2))
				vt, vv := faOperand(r, c.vt, [4]int{c.dv, c.nkv, c.hkv, c.b3}, dense)
				var m *tt
				switch c.maskKind {
				case 0:
					m = causalMask(r, c.mask, c.nkv, c.n, i%3)
				case 1:
					m = causalMask(r, c.mask, c.nkv, c.n, 1)
					for k := range m.NElem() {
						if j := k % c.nkv; j >= 64 && j < 128 || k/c.nkv == 0 {
							m.set(k, math.Inf(-1)) // a hidden block; token 0 sees nothing
						}
					}
				case 2:
					m = mk(r, c.mask, [4]int{c.nkv, c.n, c.h, 1}, dense)
					for k := range m.NElem() {
						if r.IntN(3) == 0 || k%c.nkv >= 64 && k/c.nkv%c.n == 1 {
							m.set(k, math.Inf(-1))
						}
					}
				}
				qv := q.at4
				if c.kt == Q8 || c.kt == Q4 {
					qv = q8Rounded(q, c.faCase)
				}
				d := mkOut(r, F32, [4]int{c.dv, c.h, c.n, c.b3}, layout(i%2))
				scale := float32(1 / math.Sqrt(float64(c.dk)))
				b.FlashAttnExt(d.Tensor, q.Tensor, kt, vt, m.Tensor, ops.FlashAttnParams{Scale: scale, MaxBias: c.maxBias, LogitSoftcap: c.softcap})
				want := faRefAt(c.faCase, qv, kv, vv, m, scale)
				tol := 1e-5
				if c.n < 64 && (c.kt == F16 || c.vt == F16) {
					tol = 2e-3
				}
				t.Run(c.String(), func(t *testing.T) {
					expectClose(t, d, want, func(int) float64 { return tol })
					worst := 0.0
					for k, w := range want {
						worst = max(worst, math.Abs(d.at(k)-w))
					}
					t.Logf("max |diff| %.3g", worst)
				})
			}
		})
	})
}

// faOperand is a K or V operand of type typ: a float one laid out as l, a
// block one dense; and its stored values.
func faOperand(r *rand.Rand, typ tensor.DType, ne [4]int, l layout) (*tensor.Tensor, func(e, j, h, i3 int) float64) {
	if typ == tensor.F16 || typ == tensor.F32 {
		x := mk(r, typ, ne, l)
		return x.Tensor, x.at4
	}
	x := mkCache(r, typ, ne)
	vals := tensor.Dequantize(nil, typ, x.Data, x.NElem())
	return x, func(e, j, h, i3 int) float64 { return float64(vals[e+ne[0]*(j+ne[1]*(h+ne[2]*i3))]) }
}

// q8Rounded is q's values rounded through q8_0 by ggml's from_float, row by row.
func q8Rounded(q *tt, c faCase) func(e, j, h, i3 int) float64 {
	vals := make([]float32, 0, q.NElem())
	f := make([]float32, c.dk)
	for i3 := range c.b3 {
		for h := range c.h {
			for tok := range c.n {
				for i := range f {
					f[i] = float32(q.at4(i, tok, h, i3))
				}
				vals = tensor.Dequantize(vals, tensor.Q8_0, cpu.QuantizeActivations(nil, tensor.Q8_0, f), c.dk)
			}
		}
	}
	return func(e, tok, h, i3 int) float64 { return float64(vals[e+c.dk*(tok+c.n*(h+c.h*i3))]) }
}
