package interp_test

import (
	"math"
	"testing"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/internal/interp"
	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/passes"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/tensor"
)

// packModel has a weight of each kind pack_weights tells apart: a tied
// q8_0 embedding (get_rows and the output's mul_mat), q4_0 and q8_0
// matrices, one with rows that do not fill a packed group, and f32.
const packModel = `
dim n_embd = 64
dim n_ff = 96
dim n_vocab = 40
dim n_tokens <= 5
input tokens: i32[n_tokens] fill i * 7 % n_vocab
weight token_embd.weight: q8_0[n_embd, n_vocab]
weight norm.weight: f32[n_embd]
weight up.weight: q4_0[n_embd, n_ff]
weight down.weight: q8_0[n_ff, n_embd]
weight mix.weight: f32[n_embd, n_embd]
x = get_rows(token_embd.weight, tokens)
h = mul(rms_norm(x, eps=1e-5), norm.weight)
h = silu(mul_mat(up.weight, h))
h = add(mul_mat(down.weight, h), x)
h = mul_mat(mix.weight, h)
output logits = mul_mat(token_embd.weight, h)
`

// TestPackedSameOutputs: a plan whose CPU reads packed copies of its
// quantized weights computes what the plan without them does. Pack is a
// stub today, so the outputs are the same bits; once it really copies,
// the packed products may sum in another order, hence 1e-5 of the
// output's largest magnitude rather than equality.
func TestPackedSameOutputs(t *testing.T) {
	run := func(noPack bool) (*ir.Graph, []engine.Named) {
		res, err := compiler.Compile("pack.g", []byte(packModel), compiler.Config{Options: passes.Options{NoPack: noPack}, Verify: true})
		if err != nil {
			t.Fatal(err)
		}
		m, err := interp.Load(res.Graph, interp.Config{Threads: 2, Weights: quantizedWeights(res.Graph)})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		out, err := m.Eval(map[string]int{"n_tokens": 5}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.Graph, out
	}
	g, packed := run(false)
	if ws, n := g.PackedWeights(g.BackendIndex("cpu")); len(ws) != 3 || n == 0 {
		t.Fatalf("packed %d weights (%d bytes), want token_embd, up and down", len(ws), n)
	}
	g, plain := run(true)
	if ws, _ := g.PackedWeights(g.BackendIndex("cpu")); len(ws) != 0 {
		t.Fatalf("with packing off, %d weights are packed", len(ws))
	}
	want, got := plain[0].Tensor.F32s(), packed[0].Tensor.F32s()
	scale := 0.0
	for _, v := range want {
		scale = max(scale, math.Abs(float64(v)))
	}
	if scale == 0 {
		t.Fatal("the logits are all zero: the test would compare nothing")
	}
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*scale {
			t.Fatalf("logits[%d] = %g packed, %g not: off by %g, more than 1e-5 of %g", i, got[i], want[i], d, scale)
		}
	}
}

// quantizedWeights are g's weights with the fill rule's values in their
// own types: the fill leaves quantized weights zero, which would make the
// products compare zeros.
func quantizedWeights(g *ir.Graph) map[string]tensor.Tensor {
	out := map[string]tensor.Tensor{}
	for k, d := range interp.WeightDecls(g) {
		n := d.Ne[0] * d.Ne[1] * d.Ne[2] * d.Ne[3]
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = float32(tensor.GGMLFill(k)(i, [4]int{}))
		}
		w := tensor.NewTensor(d.Type, d.Ne)
		copy(w.Data, tensor.Quantize(nil, d.Type, vals))
		out[d.Name] = w
	}
	return out
}
