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

// BenchmarkFlashAttn times one layer's flash attention at Llama-3.2-1B's
// shapes (32 query heads over 8 K/V heads of 64): a generated token over
// 4096 and 16384 cached keys and a 512-token batch over 4608, with the
// causal mask llama.cpp builds (f16, or f32 as graphc's graphs pass it)
// and f16 and q8_0 caches.
func BenchmarkFlashAttn(b *testing.B) {
	const dk, h, hkv = 64, 32, 8
	F16, Q8 := tensor.F16, tensor.Q8_0
	for _, c := range []struct {
		n, nkv int
		kt, vt tensor.DType
		mask   tensor.DType
	}{
		{1, 4096, F16, F16, F16},
		{1, 4096, Q8, Q8, F16},
		{1, 4096, Q8, F16, F16},
		{1, 16384, F16, F16, F16},
		{1, 16384, Q8, Q8, F16},
		{512, 4608, F16, F16, F16},
		{512, 4608, F16, F16, tensor.F32},
		{512, 4608, Q8, Q8, F16},
		{512, 4608, Q8, F16, F16},
	} {
		name := fmt.Sprintf("n=%d,kv=%d,k=%v,v=%v,mask=%v", c.n, c.nkv, c.kt, c.vt, c.mask)
		b.Run(name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			q := mk(r, tensor.F32, [4]int{dk, c.n, h, 1}, dense)
			k := mkCache(r, c.kt, [4]int{dk, c.nkv, hkv, 1})
			v := mkCache(r, c.vt, [4]int{dk, c.nkv, hkv, 1})
			m := causalMask(r, c.mask, c.nkv, c.n, 0)
			d := mk(r, tensor.F32, [4]int{dk, h, c.n, 1}, dense)
			p := ops.FlashAttnParams{Scale: float32(1 / math.Sqrt(dk)), Prec: 32}
			benchThreads(b, func(b *testing.B, be *cpu.Backend) {
				for b.Loop() {
					be.FlashAttnExt(d.Tensor, q.Tensor, k, v, m.Tensor, p)
				}
			})
		})
	}
}

// mkCache is a K/V cache of type typ: random values in [-1, 1], encoded.
func mkCache(r *rand.Rand, typ tensor.DType, ne [4]int) *tensor.Tensor {
	f := make([]float32, ne[0]*ne[1]*ne[2]*ne[3])
	for i := range f {
		f[i] = 2*r.Float32() - 1
	}
	t := tensor.NewTensor(typ, ne)
	copy(t.Data, typ.Traits().Encode(nil, f))
	return &t
}
