package cpu_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// cacheTypes are the block KV cache types (llama.cpp's -ctk, -ctv).
var cacheTypes = []tensor.DType{tensor.BF16, tensor.Q8_0, tensor.Q4_0, tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.IQ4_NL}

// quantized returns f's values in typ and, as an f32 tensor of the same
// shape, their decoded values.
func quantized(typ tensor.DType, f *tt) (tensor.Tensor, *tt) {
	q := tensor.NewTensor(typ, f.Ne)
	tensor.Quantize(q.Data[:0], typ, f.F32s())
	back := tensor.NewTensor(tensor.F32, f.Ne)
	tensor.Dequantize(back.F32s()[:0], typ, q.Data, f.NElem())
	return q, &tt{Tensor: &back}
}

// TestFlashAttnQuantizedCache checks flash attention over block-quantized
// K and V against float64 attention on their decoded values: the kernel's
// error is q's rounding to K's vec_dot_type (q8_0 or q8_1: 1/254 of a
// block's largest |q|; bf16: 2⁻⁹). Tolerance 2e-3 (seen: 6.7e-4).
func TestFlashAttnQuantizedCache(t *testing.T) {
	F16, F32 := tensor.F16, tensor.F32
	forBackends(t, func(t *testing.T, b *cpu.Backend, r *rand.Rand) {
		for _, typ := range cacheTypes {
			for _, n := range []int{1, 5, 70} {
				c := faCase{dk: 64, dv: 64, n: n, h: 4, hkv: 2, nkv: 96, b3: 1, kt: typ, vt: typ, mask: F16}
				q := mk(r, F32, [4]int{c.dk, c.n, c.h, c.b3}, dense)
				kq, k := quantized(typ, mk(r, F32, [4]int{c.dk, c.nkv, c.hkv, c.b3}, dense))
				vq, v := quantized(typ, mk(r, F32, [4]int{c.dv, c.nkv, c.hkv, c.b3}, dense))
				m := causalMask(r, c.mask, c.nkv, c.n, 0)
				d := mkOut(r, F32, [4]int{c.dv, c.h, c.n, c.b3}, dense)
				scale := float32(1 / math.Sqrt(float64(c.dk)))
				b.FlashAttnExt(d.Tensor, q.Tensor, &kq, &vq, m.Tensor, ops.FlashAttnParams{Scale: scale})
				want := faRef(c, q, k, v, m, scale)
				t.Run(c.String(), func(t *testing.T) { expectClose(t, d, want, func(int) float64 { return 2e-3 }) })
			}
		}
	})
}

// TestCpyIntoQuantizedCache checks Cpy from f32 into a block cache, whole
// and into a view of some of its rows: the bytes are the type's quantizer's
// (q8_0's rounds half to even, as ggml's CPU from_float; the others are
// the reference quantizers, tensor.Quantize). An f16 source's values are
// the same, rounded to f16 first.
func TestCpyIntoQuantizedCache(t *testing.T) {
	b := cpu.New(1)
	defer b.Close()
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range cacheTypes {
		src := tensor.NewTensor(tensor.F32, [4]int{64, 2, 3, 1})
		for i := range src.F32s() {
			src.F32s()[i] = float32(r.NormFloat64())
		}
		src.F32s()[5] = 0.5 * src.F32s()[0] // not all blocks' maxima are distinct
		want := tensor.Quantize(nil, typ, src.F32s())
		if typ == tensor.Q8_0 {
			want = cpu.QuantizeActivationsQ8_0(nil, src.F32s())
		}
		cache := tensor.NewTensor(typ, [4]int{128, 5, 1, 1})
		row := typ.RowSize(128)
		slot := tensor.Tensor{Type: typ, Ne: [4]int{64 * 6, 1, 1, 1}, Data: cache.Data[2*row:]}
		slot.Nb = [4]int{typ.Size(), typ.RowSize(64 * 6), typ.RowSize(64 * 6), typ.RowSize(64 * 6)}
		b.Cpy(&slot, &src)
		if got := cache.Data[2*row : 2*row+len(want)]; !bytes.Equal(got, want) {
			t.Errorf("%v: cpy wrote %x…, want %x…", typ, got[:16], want[:16])
		}
		if !bytes.Equal(cache.Data[:2*row], make([]byte, 2*row)) || !bytes.Equal(cache.Data[2*row+len(want):], make([]byte, len(cache.Data)-2*row-len(want))) {
			t.Errorf("%v: cpy wrote outside its view", typ)
		}
	}
}
