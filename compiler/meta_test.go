package compiler

import (
	"strings"
	"testing"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

const metaModel = `dim n = meta("m.width")
dim v = meta("m.vocab", 8)
param eps = meta("m.eps", 1e-5)
param half = 1.0 / sqrt(4)
input x: f32[n]
weight emb.weight: f32[n, v]
weight out.weight: f32[n, v] or emb.weight
output y = mul_mat(out.weight, scale(rms_norm(x, eps=eps), s=half))
`

func TestMetaWithoutFile(t *testing.T) {
	_, err := Compile("m.g", []byte(metaModel), Config{})
	if err == nil || !strings.Contains(err.Error(), `m.g:1:9: meta("m.width"): compiled without a weights file`) {
		t.Fatalf("got %v", err)
	}
}

func TestMetaFromFile(t *testing.T) {
	file := &WeightsFile{
		Meta:    map[string]any{"m.width": uint32(32), "m.eps": float32(1e-6)},
		Tensors: map[string]bool{"emb.weight": true},
		Types:   map[string]tensor.DType{"emb.weight": tensor.F32},
	}
	res, err := Compile("m.g", []byte(metaModel), Config{File: file})
	if err != nil {
		t.Fatal(err)
	}
	g := res.Graph
	want := []tensor.Meta{{Key: "m.width", Value: 32}, {Key: "m.vocab", Value: 8, Default: true}, {Key: "m.eps", Value: float64(float32(1e-6)), Default: true}}
	if len(g.Meta) != len(want) {
		t.Fatalf("meta %v, want %v", g.Meta, want)
	}
	for i := range want {
		if g.Meta[i] != want[i] {
			t.Errorf("meta[%d] = %v, want %v", i, g.Meta[i], want[i])
		}
	}
	var weights []string
	for _, p := range g.Params {
		weights = append(weights, p.Name)
	}
	if strings.Join(weights, ",") != "emb.weight" {
		t.Errorf("weights %v: out.weight should read emb.weight, the file lacking it", weights)
	}
	for _, n := range g.Nodes {
		if n.Op == ops.RMSNorm && n.Params.(ops.NormParams).Eps != float32(1e-6) {
			t.Errorf("eps = %g, want the file's 1e-6", n.Params.(ops.NormParams).Eps)
		}
		if n.Op == ops.Scale && n.Params.(ops.ScaleParams).S != 0.5 {
			t.Errorf("scale = %g, want 0.5", n.Params.(ops.ScaleParams).S)
		}
	}
	file.Meta["m.width"] = float32(1.5)
	if _, err := Compile("m.g", []byte(metaModel), Config{File: file}); err == nil || !strings.Contains(err.Error(), "an integer is needed here") {
		t.Errorf("a fractional width: %v", err)
	}
}

// TestMetaArrayLength: meta of an array is its length, which is how the
// examples find the vocabulary size of a file without <arch>.vocab_size
// (llama.cpp counts tokenizer.ggml.tokens); the load check compares it too.
func TestMetaArrayLength(t *testing.T) {
	src := `dim v = meta("m.vocab", meta("tokenizer.ggml.tokens", 8))
input x: f32[4]
weight emb.weight: f32[4, v]
output y = mul_mat(emb.weight, x)
`
	file := &WeightsFile{
		Meta:    map[string]any{"tokenizer.ggml.tokens": []string{"a", "b", "c", "d", "e"}},
		Tensors: map[string]bool{"emb.weight": true},
		Types:   map[string]tensor.DType{"emb.weight": tensor.F32},
	}
	res, err := Compile("m.g", []byte(src), Config{File: file})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Graph.Params[0].ShapeString(); got != "[4, 5]" {
		t.Errorf("emb.weight %s, want [4, 5]: the vocabulary's length", got)
	}
}

// optionalModel reads an optional weight (`or none`) as rope's optional
// freqs operand, as the llama file model reads Llama 3's rope_freqs.weight.
const optionalModel = `input x: f32[8, 2, 3]
input pos: i32[3]
weight rope_freqs.weight: f32[4] or none
output y = rope(x, pos, rope_freqs.weight, n_dims=8, mode=0)
`

// TestOptionalWeight: an `or none` weight is declared when the file has
// it, and the rope reads it; when the file lacks it (or there is no file)
// the rope has no third operand.
func TestOptionalWeight(t *testing.T) {
	ropeSrcs := func(cfg Config) int {
		t.Helper()
		res, err := Compile("m.g", []byte(optionalModel), cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range res.Graph.Nodes {
			if n.Op == ops.Rope {
				return len(n.Src)
			}
		}
		t.Fatal("no rope")
		return 0
	}
	if n := ropeSrcs(Config{}); n != 2 {
		t.Errorf("without a file: rope has %d operands, want 2", n)
	}
	with := &WeightsFile{Path: "with.gguf", Tensors: map[string]bool{"rope_freqs.weight": true}, Names: []string{"rope_freqs.weight"}, Types: map[string]tensor.DType{"rope_freqs.weight": tensor.F32}}
	if n := ropeSrcs(Config{File: with}); n != 3 {
		t.Errorf("with rope_freqs.weight in the file: rope has %d operands, want 3", n)
	}
	without := &WeightsFile{Path: "without.gguf", Tensors: map[string]bool{}}
	if n := ropeSrcs(Config{File: without}); n != 2 {
		t.Errorf("without rope_freqs.weight in the file: rope has %d operands, want 2", n)
	}

	// Any other use needs the tensor.
	bad := strings.Replace(optionalModel, "output y = rope(x, pos, rope_freqs.weight, n_dims=8, mode=0)", "output y = mul(x, rope_freqs.weight)", 1)
	_, err := Compile("m.g", []byte(bad), Config{File: without})
	if err == nil || !strings.Contains(err.Error(), "m.g:4:19: rope_freqs.weight is absent from without.gguf and this use needs it") {
		t.Errorf("a required use of an absent weight: %v", err)
	}
	if _, err := Compile("m.g", []byte(bad), Config{File: with}); err != nil {
		t.Errorf("a required use of a present optional weight: %v", err)
	}
}
