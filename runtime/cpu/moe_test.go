package cpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// randomWeights is a tensor of type typ and shape ne holding random values
// in [-1, 1), quantized for a block type.
func randomWeights(r *rand.Rand, typ tensor.DType, ne [4]int) tensor.Tensor {
	f := tensor.NewTensor(tensor.F32, ne)
	for i := range f.F32s() {
		f.F32s()[i] = float32(r.Float64()*2 - 1)
	}
	if typ == tensor.F32 {
		return f
	}
	t := tensor.NewTensor(typ, ne)
	tensor.Quantize(t.Data[:0], typ, f.F32s())
	return t
}

// TestMulMatID: each column of mul_mat_id is mul_mat's product of the
// expert the column's id names with the column's x (to float rounding:
// MulMat's float kernels sum a column in another order when it comes
// with others), for every weight type of the experts, x shared by a
// token's experts or one per expert, and ids strided as argsort's top-k
// view; an expert no token chose may hold anything (NaNs here); an id
// out of range is a KernelError.
func TestMulMatID(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	c := cpu.New(2)
	defer c.Close()
	const nExp, nUsed, nTok, width = 6, 3, 7, 5
	for _, typ := range []tensor.DType{tensor.F32, tensor.F16, tensor.Q8_0, tensor.Q4_0, tensor.Q4_K} {
		for _, ne11 := range []int{1, nUsed} {
			k, m := 64, 40
			if typ.BlockSize() == 256 {
				k = 256
			}
			as := randomWeights(r, typ, [4]int{k, m, nExp, 1})
			x := randomWeights(r, tensor.F32, [4]int{k, ne11, nTok, 1})
			// ids: the first nUsed of width columns, experts 0..nExp-2
			// only, so that the last one is never chosen.
			all := tensor.NewTensor(tensor.I32, [4]int{width, nTok, 1, 1})
			for tok := range nTok {
				for i, e := range r.Perm(nExp - 1)[:width] {
					all.I32s()[tok*width+i] = int32(e)
				}
			}
			ids := tensor.Tensor{Type: tensor.I32, Ne: [4]int{nUsed, nTok, 1, 1}, Nb: [4]int{4, 4 * width, 4 * width * nTok, 4 * width * nTok}, Data: all.Data}
			// The unchosen expert's bytes are all ones: NaN scales and values.
			last := as.Nb[2] * (nExp - 1)
			for i := last; i < len(as.Data); i++ {
				as.Data[i] = 0xff
			}
			dst := tensor.NewTensor(tensor.F32, [4]int{m, nUsed, nTok, 1})
			c.MulMatID(&dst, &as, &x, &ids)
			for tok := range nTok {
				for slot := range nUsed {
					e := int(ids.I32s()[tok*width+slot])
					ae := tensor.Tensor{Type: typ, Ne: [4]int{k, m, 1, 1}, Nb: [4]int{as.Nb[0], as.Nb[1], as.Nb[2], as.Nb[2]}, Data: as.Data[e*as.Nb[2] : (e+1)*as.Nb[2]]}
					col := tensor.NewTensor(tensor.F32, [4]int{k, 1, 1, 1})
					copy(col.F32s(), x.F32s()[(tok*ne11+slot%ne11)*k:][:k])
					want := tensor.NewTensor(tensor.F32, [4]int{m, 1, 1, 1})
					c.MulMat(&want, &ae, &col, ops.MulMatParams{})
					got := dst.F32s()[(tok*nUsed+slot)*m:][:m]
					if i := far(got, want.F32s()); i >= 0 {
						t.Fatalf("%v, x columns %d: token %d, slot %d (expert %d): %v, mul_mat gives %v", typ, ne11, tok, slot, e, got[:4], want.F32s()[:4])
					}
				}
			}
		}
	}
	t.Run("id out of range", func(t *testing.T) {
		as := randomWeights(r, tensor.F32, [4]int{32, 4, 2, 1})
		x := randomWeights(r, tensor.F32, [4]int{32, 1, 1, 1})
		ids := tensor.NewTensor(tensor.I32, [4]int{1, 1, 1, 1})
		ids.I32s()[0] = 2
		dst := tensor.NewTensor(tensor.F32, [4]int{4, 1, 1, 1})
		defer func() {
			if e := recover(); e == nil {
				t.Fatal("no panic")
			} else if err, ok := e.(error); !ok || err.Error() == "" {
				t.Fatalf("panic %v, want a KernelError", e)
			}
		}()
		c.MulMatID(&dst, &as, &x, &ids)
	})
}

// far is the first element of got off want by more than float rounding
// of sums of tens of products, -1 if none.
func far(got, want []float32) int {
	for i, w := range want {
		if d := math.Abs(float64(got[i] - w)); !(d <= 1e-5*(1+math.Abs(float64(w)))) {
			return i
		}
	}
	return -1
}

// TestMulMatIDPacked: mul_mat_id on a packed weight (Pack of the whole
// [k, m, n_expert] tensor) is mul_mat_id on the weight as loaded, to the
// packed kernels' other order of ggml's block terms, at every level: one
// token (the matrix-vector kernels, as in generation) and a batch whose
// experts take several columns each (the panels, as in a prompt), x
// shared by a token's experts and one per expert.
func TestMulMatIDPacked(t *testing.T) {
	for _, isa := range cpu.ISAs() {
		t.Run(isa, func(t *testing.T) {
			defer cpu.UseISA(isa)()
			r := rand.New(rand.NewPCG(7, 8))
			const nExp, nUsed = 8, 3
			for _, typ := range []tensor.DType{tensor.Q8_0, tensor.Q4_0, tensor.Q4_K} {
				for _, c := range []struct{ nTok, ne11, m int }{{1, 1, 40}, {1, nUsed, 16}, {37, 1, 50}, {29, nUsed, 33}} {
					k := 96
					if typ.BlockSize() == 256 {
						k = 512
					}
					as := randomWeights(r, typ, [4]int{k, c.m, nExp, 1})
					x := randomWeights(r, tensor.F32, [4]int{k, c.ne11, c.nTok, 1})
					ids := tensor.NewTensor(tensor.I32, [4]int{nUsed, c.nTok, 1, 1})
					for tok := range c.nTok {
						for i, e := range r.Perm(nExp)[:nUsed] {
							ids.I32s()[tok*nUsed+i] = int32(e)
						}
					}
					plain, packed := cpu.New(2), cpu.New(2)
					if err := packed.Pack(&as, false); err != nil {
						t.Fatal(err)
					}
					want := tensor.NewTensor(tensor.F32, [4]int{c.m, nUsed, c.nTok, 1})
					got := tensor.NewTensor(tensor.F32, want.Ne)
					plain.MulMatID(&want, &as, &x, &ids)
					packed.MulMatID(&got, &as, &x, &ids)
					plain.Close()
					packed.Close()
					if i := far(got.F32s(), want.F32s()); i >= 0 {
						t.Fatalf("%v %+v: element %d: packed %g, as loaded %g", typ, c, i, got.F32s()[i], want.F32s()[i])
					}
				}
			}
		})
	}
}

// TestArgSort: each row's indices order its values, ascending or
// descending, ties in index order; strided sources are read as such.
func TestArgSort(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	c := cpu.New(2)
	defer c.Close()
	for _, order := range []int{0, 1} {
		for _, l := range []layout{dense, padded} {
			a := mk(r, tensor.F32, [4]int{13, 5, 3, 1}, l)
			// Ties: the first two elements of each row equal.
			for row := range 15 {
				a.set(13*row+1, a.at(13*row))
			}
			dst := tensor.NewTensor(tensor.I32, a.Ne)
			c.ArgSort(&dst, a.Tensor, ops.ArgSortParams{Order: order})
			for row := range 15 {
				got := dst.I32s()[row*13:][:13]
				want := make([]int32, 13)
				for i := range want {
					want[i] = int32(i)
				}
				v := func(i int32) float64 { return a.at4(int(i), row%5, row/5, 0) }
				slices.SortStableFunc(want, func(i, j int32) int {
					if order == 1 {
						i, j = j, i
					}
					switch {
					case v(i) < v(j):
						return -1
					case v(i) > v(j):
						return 1
					}
					return 0
				})
				if !slices.Equal(got, want) {
					t.Errorf("order %d, %v: row %d: %v, want %v", order, l, row, got, want)
				}
			}
		}
	}
}

// TestSumRows: each row's sum in float64, rounded once, from any layout.
func TestSumRows(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	c := cpu.New(2)
	defer c.Close()
	for _, l := range []layout{dense, padded, permuted} {
		a := mk(r, tensor.F32, [4]int{37, 4, 3, 2}, l)
		dst := tensor.NewTensor(tensor.F32, [4]int{1, 4, 3, 2})
		c.SumRows(&dst, a.Tensor)
		for row := range 24 {
			var s float64
			for i := range 37 {
				s += a.at4(i, row%4, row/4%3, row/12)
			}
			if got := dst.F32s()[row]; got != float32(s) || math.IsNaN(float64(got)) {
				t.Errorf("%v: row %d: %g, want %g", l, row, got, float32(s))
			}
		}
	}
}

// BenchmarkMulMatID is one of Qwen3-30B-A3B's expert products (ffn_up_exps:
// 128 q4_0 experts of 768 rows of 2048, 8 used per token) for one token and
// for a 512-token prompt, packed and as loaded, at 1 and 2 threads.
func BenchmarkMulMatID(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	const k, m, nExp, nUsed = 2048, 768, 128, 8
	as := randomWeights(r, tensor.Q4_0, [4]int{k, m, nExp, 1})
	for _, nTok := range []int{1, 512} {
		x := randomWeights(r, tensor.F32, [4]int{k, 1, nTok, 1})
		ids := tensor.NewTensor(tensor.I32, [4]int{nUsed, nTok, 1, 1})
		for tok := range nTok {
			for i, e := range r.Perm(nExp)[:nUsed] {
				ids.I32s()[tok*nUsed+i] = int32(e)
			}
		}
		dst := tensor.NewTensor(tensor.F32, [4]int{m, nUsed, nTok, 1})
		for _, threads := range []int{1, 2} {
			for _, pack := range []bool{false, true} {
				b.Run(fmt.Sprintf("tokens=%d/threads=%d/packed=%v", nTok, threads, pack), func(b *testing.B) {
					c := cpu.New(threads)
					defer c.Close()
					if pack {
						if err := c.Pack(&as, false); err != nil {
							b.Fatal(err)
						}
					}
					for b.Loop() {
						c.MulMatID(&dst, &as, &x, &ids)
					}
				})
			}
		}
	}
}

// topKWant is ggml-cpu's top_k of row v: the k largest, descending (equal
// values by index), the first two swapped.
func topKWant(v func(i int32) float64, n, k int) []int32 {
	want := make([]int32, n)
	for i := range want {
		want[i] = int32(i)
	}
	slices.SortStableFunc(want, func(i, j int32) int {
		switch {
		case v(i) > v(j):
			return -1
		case v(i) < v(j):
			return 1
		}
		return 0
	})
	want = want[:k]
	if k > 1 {
		want[0], want[1] = want[1], want[0]
	}
	return want
}

func TestTopK(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	c := cpu.New(2)
	defer c.Close()
	const n = 13
	for _, k := range []int{1, 2, 4, n} {
		for _, l := range []layout{dense, padded} {
			a := mk(r, tensor.F32, [4]int{n, 5, 3, 1}, l)
			// Ties: the first two elements of each row equal, and in
			// every third row the last two as well.
			for row := range 15 {
				a.set(n*row+1, a.at(n*row))
				if row%3 == 0 {
					a.set(n*row+n-1, a.at(n*row+n-2))
				}
			}
			dst := tensor.NewTensor(tensor.I32, [4]int{k, 5, 3, 1})
			c.TopK(&dst, a.Tensor, ops.TopKParams{K: k})
			for row := range 15 {
				got := dst.I32s()[row*k:][:k]
				want := topKWant(func(i int32) float64 { return a.at4(int(i), row%5, row/5, 0) }, n, k)
				if !slices.Equal(got, want) {
					t.Errorf("k %d, %v: row %d: %v, want %v", k, l, row, got, want)
				}
			}
		}
	}
}

// TestTopKRow: the heap's selection against a sort, over rows of many
// ties (values from a few) and of distinct values, every k.
func TestTopKRow(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for iter := range 400 {
		n := 1 + r.IntN(70) // k on both sides of topKInsertMax
		v := make([]float32, n)
		for i := range v {
			if iter%2 == 0 {
				v[i] = float32(r.IntN(4))
			} else {
				v[i] = float32(r.NormFloat64())
			}
		}
		k := 1 + r.IntN(n)
		got := make([]int32, k)
		cpu.TopKRow(got, make([]float32, k), v)
		want := topKWant(func(i int32) float64 { return float64(v[i]) }, n, k)
		if k > 1 {
			want[0], want[1] = want[1], want[0] // TopKRow leaves them descending
		}
		if !slices.Equal(got, want) {
			t.Fatalf("n %d, k %d, %v: %v, want %v", n, k, v, got, want)
		}
	}
}

// BenchmarkExpertChoice: a batch's choice of 8 of 128 experts (Qwen3-30B-A3B's
// router) by top_k against argsort's full sort, one thread.
func BenchmarkExpertChoice(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	c := cpu.New(1)
	defer c.Close()
	a := mk(r, tensor.F32, [4]int{128, 512, 1, 1}, dense)
	b.Run("top_k", func(b *testing.B) {
		dst := tensor.NewTensor(tensor.I32, [4]int{8, 512, 1, 1})
		for b.Loop() {
			c.TopK(&dst, a.Tensor, ops.TopKParams{K: 8})
		}
	})
	b.Run("argsort", func(b *testing.B) {
		dst := tensor.NewTensor(tensor.I32, a.Ne)
		for b.Loop() {
			c.ArgSort(&dst, a.Tensor, ops.ArgSortParams{Order: 1})
		}
	})
}
