package cpu_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// refMulMat is ggml_mul_mat in float64. With roundX, x is first rounded to
// f16 as ggml does for an f16 a. It also returns Σ|a·x| per element for the
// tolerance.
func refMulMat(a, x *tt, roundX bool) (want, mag []float64) {
	K, M, N := a.Ne[0], a.Ne[1], x.Ne[1]
	r2, r3 := x.Ne[2]/a.Ne[2], x.Ne[3]/a.Ne[3]
	n := M * N * x.Ne[2] * x.Ne[3]
	want, mag = make([]float64, n), make([]float64, n)
	k := 0
	for i3 := 0; i3 < x.Ne[3]; i3++ {
		for i2 := 0; i2 < x.Ne[2]; i2++ {
			for i1 := 0; i1 < N; i1++ {
				for i0 := 0; i0 < M; i0++ {
					var s, m float64
					for j := 0; j < K; j++ {
						xv := x.at4(j, i1, i2, i3)
						if roundX {
							xv = roundTo(tensor.F16, xv)
						}
						p := a.at4(j, i0, i2/r2, i3/r3) * xv
						s += p
						m += math.Abs(p)
					}
					want[k], mag[k] = s, m
					k++
				}
			}
		}
	}
	return want, mag
}

// mulMatTol is the float32 summation bound: K·2⁻²⁴·Σ|a·x| (products of f16
// values are exact, f32 products add one more rounding, inside the bound).
func mulMatTol(K int, mag []float64) func(int) float64 {
	return func(k int) float64 { return float64(K+1)*0x1p-24*mag[k] + 1e-30 }
}

// Tolerance: mulMatTol.
func TestMulMat(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		forBackends(t, func(t *testing.T, b *cpu.Backend, r *rand.Rand) {
			for i := 0; i < 24; i++ {
				K := 1 + r.IntN(70)
				M := 1 + r.IntN(20)
				N := 1 + r.IntN(12)
				if i%6 == 5 {
					M, N = 70+r.IntN(70), 1+r.IntN(3) // matvec-like, f16 direct kernels
				}
				ane := [4]int{K, M, 1 + r.IntN(2), 1 + r.IntN(2)}
				xne := [4]int{K, N, ane[2] * (1 + r.IntN(3)), ane[3] * (1 + r.IntN(2))}
				at, xt := tensor.F32, tensor.F32
				switch i % 4 {
				case 1:
					at = tensor.F16
				case 2:
					at, xt = tensor.F16, tensor.F16
				case 3:
					xt = tensor.F16
				}
				a := mk(r, at, ane, layout(r.IntN(int(nLayouts))))
				x := mk(r, xt, xne, layout(r.IntN(int(nLayouts))))
				d := mkOut(r, tensor.F32, [4]int{M, N, xne[2], xne[3]}, layout(r.IntN(int(nLayouts))))
				want, mag := refMulMat(a, x, at == tensor.F16)
				before, inputs := d.snapshot(), readOnly(t, a, x)
				b.MulMat(d.Tensor, a.Tensor, x.Tensor, ops.MulMatParams{})
				checkUntouched(t, d, before)
				inputs()
				expectClose(t, d, want, mulMatTol(K, mag))
			}
		})
	})
}

// TestMulMatF16RoundsX: with an f16 a, x is rounded to f16 before the dot, as
// ggml converts src1 to vec_dot_type. The result matches the rounding
// reference within float32 summation error and misses the unrounded one.
func TestMulMatF16RoundsX(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		b := cpu.New(2)
		defer b.Close()
		r := rand.New(rand.NewPCG(5, 6))
		for _, n := range []int{1, 7} { // the f16 direct kernels and the converting path
			const K, M = 256, 16
			a := mk(r, tensor.F16, [4]int{K, M, 1, 1}, dense)
			x := mk(r, tensor.F32, [4]int{K, n, 1, 1}, dense)
			for k := 0; k < x.NElem(); k++ { // x in [1, 2) just below an f16 midpoint: rounding to f16 always goes down
				x.set(k, 1+float64(r.IntN(1024))/1024+0.45/1024)
			}
			for k := 0; k < a.NElem(); k++ {
				a.set(k, math.Abs(a.at(k)))
			}
			d := mkOut(r, tensor.F32, [4]int{M, n, 1, 1}, dense)
			b.MulMat(d.Tensor, a.Tensor, x.Tensor, ops.MulMatParams{})
			want, mag := refMulMat(a, x, true)
			expectClose(t, d, want, mulMatTol(K, mag))
			unrounded, _ := refMulMat(a, x, false)
			far := 0
			for k := range want {
				if math.Abs(d.at(k)-unrounded[k]) > 10*mulMatTol(K, mag)(k) {
					far++
				}
			}
			if far < len(want)/2 {
				t.Errorf("n=%d: only %d of %d results tell rounded x from unrounded", n, far, len(want))
			}
		}
	})
}

// TestMulMatAttention uses the layouts of a llama attention step: k a view
// of an f16 cache (rows of the cache, heads by a stride), q a permute of a
// rope output, kq·v with v transposed.
func TestMulMatAttention(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		forBackends(t, func(t *testing.T, b *cpu.Backend, r *rand.Rand) {
			const hd, nHead, nHeadKV, nCtx, nKV, nTok = 16, 4, 2, 32, 11, 3
			// cache [hd·nHeadKV, nCtx] f16; k = view_3d(cache, hd, nKV, nHeadKV, nb1 = row, nb2 = hd·2)
			cache := mk(r, tensor.F16, [4]int{hd * nHeadKV, nCtx, 1, 1}, dense)
			k := &tt{Tensor: &tensor.Tensor{Type: tensor.F16, Ne: [4]int{hd, nKV, nHeadKV, 1},
				Nb: [4]int{2, hd * nHeadKV * 2, hd * 2, hd * nHeadKV * 2 * nKV}}, buf: cache.buf, off: cache.off}
			k.Data = cache.Data[:k.Span()]
			// qcur [hd, nHead, nTok] f32, q = permute(0, 2, 1, 3) -> [hd, nTok, nHead]
			qcur := mk(r, tensor.F32, [4]int{hd, nHead, nTok, 1}, dense)
			q := &tt{Tensor: &tensor.Tensor{Type: tensor.F32, Ne: [4]int{hd, nTok, nHead, 1},
				Nb: [4]int{4, qcur.Nb[2], qcur.Nb[1], qcur.Nb[3]}, Data: qcur.Data}, buf: qcur.buf, off: qcur.off}
			kq := mkOut(r, tensor.F32, [4]int{nKV, nTok, nHead, 1}, dense)
			want, mag := refMulMat(k, q, true)
			b.MulMat(kq.Tensor, k.Tensor, q.Tensor, ops.MulMatParams{})
			expectClose(t, kq, want, mulMatTol(hd, mag))

			// v^T: a view of the f16 cache as [nKV, hd, nHeadKV] (transposed rows)
			v := &tt{Tensor: &tensor.Tensor{Type: tensor.F16, Ne: [4]int{nKV, hd, nHeadKV, 1},
				Nb: [4]int{hd * nHeadKV * 2, 2, hd * 2, hd * nHeadKV * 2 * nKV}}, buf: cache.buf, off: cache.off}
			v.Data = cache.Data[:v.Span()]
			kqv := mkOut(r, tensor.F32, [4]int{hd, nTok, nHead, 1}, permuted)
			want, mag = refMulMat(v, kq, true)
			b.MulMat(kqv.Tensor, v.Tensor, kq.Tensor, ops.MulMatParams{})
			expectClose(t, kqv, want, mulMatTol(nKV, mag))
		})
	})
}

// TestMulMatAttentionDecode is an attention step of one token with four
// query heads per K/V head (the batches-in-fours path at AVX2 and AVX-512): k a view
// of an f16 cache by rows, v a view of a transposed one (llama.cpp's V cache
// without flash attention), kq's rows not a multiple of four.
func TestMulMatAttentionDecode(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		forBackends(t, func(t *testing.T, b *cpu.Backend, r *rand.Rand) {
			const hd, nHead, nHeadKV, nCtx = 16, 8, 2, 48
			for _, nKV := range []int{1, 11, 37} {
				kc := mk(r, tensor.F16, [4]int{hd * nHeadKV, nCtx, 1, 1}, dense)
				k := &tt{Tensor: &tensor.Tensor{Type: tensor.F16, Ne: [4]int{hd, nKV, nHeadKV, 1},
					Nb: [4]int{2, hd * nHeadKV * 2, hd * 2, hd * nHeadKV * 2 * nKV}}, buf: kc.buf, off: kc.off}
				k.Data = kc.Data[:k.Span()]
				qcur := mk(r, tensor.F32, [4]int{hd, nHead, 1, 1}, dense)
				q := &tt{Tensor: &tensor.Tensor{Type: tensor.F32, Ne: [4]int{hd, 1, nHead, 1},
					Nb: [4]int{4, qcur.Nb[2], qcur.Nb[1], qcur.Nb[3]}, Data: qcur.Data}, buf: qcur.buf, off: qcur.off}
				kq := mkOut(r, tensor.F32, [4]int{nKV, 1, nHead, 1}, dense)
				want, mag := refMulMat(k, q, true)
				b.MulMat(kq.Tensor, k.Tensor, q.Tensor, ops.MulMatParams{})
				expectClose(t, kq, want, mulMatTol(hd, mag))

				vc := mk(r, tensor.F16, [4]int{nCtx * hd * nHeadKV, 1, 1, 1}, dense)
				v := &tt{Tensor: &tensor.Tensor{Type: tensor.F16, Ne: [4]int{nKV, hd, nHeadKV, 1},
					Nb: [4]int{2, nCtx * 2, nCtx * hd * 2, nCtx * hd * nHeadKV * 2}}, buf: vc.buf, off: vc.off}
				v.Data = vc.Data[:v.Span()]
				kqv := mkOut(r, tensor.F32, [4]int{hd, 1, nHead, 1}, dense)
				want, mag = refMulMat(v, kq, true)
				b.MulMat(kqv.Tensor, v.Tensor, kq.Tensor, ops.MulMatParams{})
				expectClose(t, kqv, want, mulMatTol(nKV, mag))
			}
		})
	})
}

// TestMulMatLarge runs shapes big enough to split over threads by default.
func TestMulMatLarge(t *testing.T) {
	forISAs(t, func(t *testing.T) {
		b := cpu.New(2)
		defer b.Close()
		r := rand.New(rand.NewPCG(8, 9))
		for _, c := range []struct {
			at      tensor.DType
			K, M, N int
		}{{tensor.F32, 300, 130, 37}, {tensor.F16, 300, 130, 37}, {tensor.F16, 1024, 257, 1}, {tensor.F32, 1024, 257, 1}} {
			a := mk(r, c.at, [4]int{c.K, c.M, 1, 1}, dense)
			x := mk(r, tensor.F32, [4]int{c.K, c.N, 1, 1}, dense)
			d := mkOut(r, tensor.F32, [4]int{c.M, c.N, 1, 1}, dense)
			b.MulMat(d.Tensor, a.Tensor, x.Tensor, ops.MulMatParams{})
			want, mag := refMulMat(a, x, c.at == tensor.F16)
			expectClose(t, d, want, mulMatTol(c.K, mag))
		}
	})
}

func TestMulMatEmptySum(t *testing.T) {
	b := cpu.New(1)
	defer b.Close()
	r := rand.New(rand.NewPCG(1, 1))
	a := mk(r, tensor.F32, [4]int{0, 3, 1, 1}, dense)
	x := mk(r, tensor.F32, [4]int{0, 2, 1, 1}, dense)
	d := mkOut(r, tensor.F32, [4]int{3, 2, 1, 1}, padded)
	b.MulMat(d.Tensor, a.Tensor, x.Tensor, ops.MulMatParams{})
	expectClose(t, d, make([]float64, 6), exact)
}

// TestMulMatPacked covers the packed GEMM: edges in M and N, several K
// blocks, f16 operands (x rounded for an f16 a), strided and permuted
// operands and dst, and batches with a broadcast a.
func TestMulMatPacked(t *testing.T) {
	defer cpu.ForcePacked()()
	forISAs(t, func(t *testing.T) {
		b := cpu.New(2)
		defer b.Close()
		r := rand.New(rand.NewPCG(10, 11))
		for i, c := range []struct {
			at, xt      tensor.DType
			K, M, N, b2 int
		}{
			{tensor.F32, tensor.F32, 64, 64, 64, 1},
			{tensor.F32, tensor.F32, 70, 97, 41, 1},
			{tensor.F32, tensor.F32, 2*cpu.GemmKC + 3, 33, 25, 1},
			{tensor.F16, tensor.F32, cpu.GemmKC + 17, 45, 30, 1},
			{tensor.F16, tensor.F16, 100, 40, 26, 1},
			{tensor.F32, tensor.F16, 90, 35, 29, 1},
			{tensor.F32, tensor.F32, 64, 36, 30, 2},
		} {
			la, lx, ld := layout(i%2), layout(i%3), layout((i+1)%3)
			a := mk(r, c.at, [4]int{c.K, c.M, 1, 1}, la)
			x := mk(r, c.xt, [4]int{c.K, c.N, c.b2, 1}, lx)
			d := mkOut(r, tensor.F32, [4]int{c.M, c.N, c.b2, 1}, ld)
			want, mag := refMulMat(a, x, c.at == tensor.F16)
			before, inputs := d.snapshot(), readOnly(t, a, x)
			b.MulMat(d.Tensor, a.Tensor, x.Tensor, ops.MulMatParams{})
			checkUntouched(t, d, before)
			inputs()
			expectClose(t, d, want, mulMatTol(c.K, mag))
		}
	})
}
