package ggufarch_test

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"

	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/gguf/ggufarch"
	"github.com/graphc/graphc/tensor"
)

// TestPhi3File reads back a phi3 file with rope factors: the converter's
// metadata (original context, sliding window, attn_factor), fused
// attn_qkv [n_embd, n_embd + 2·n_embd_gqa] and ffn_up [n_embd, 2·n_ff]
// matrices and no separate Q/K/V or gate, the rope factors first, Phi-3's
// added tokens ending the vocabulary with <|endoftext|> as eos.
func TestPhi3File(t *testing.T) {
	path := filepath.Join(t.TempDir(), "phi3.gguf")
	o := ggufarch.Defaults("phi3")
	o.RopeFactors, o.RopeOrigCtx, o.SlidingWindow, o.Type = true, 512, 256, tensor.Q8_0
	if err := ggufarch.WriteFile(path, o); err != nil {
		t.Fatal(err)
	}
	m, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for key, want := range map[string]int64{
		"phi3.rope.scaling.original_context_length": 512, "phi3.attention.sliding_window": 256, "phi3.context_length": 2048,
		"tokenizer.ggml.eos_token_id": 309, "tokenizer.ggml.bos_token_id": 1,
	} {
		if got, ok := m.MetaInt(key); !ok || got != want {
			t.Errorf("%s = %d (%v), want %d", key, got, ok, want)
		}
	}
	if v, _ := m.MetaValue("phi3.rope.scaling.attn_factor"); v != float32(math.Sqrt(1+math.Log(4)/math.Log(512))) {
		t.Errorf("attn_factor %v", v)
	}
	raw, _ := m.MetaValue("tokenizer.ggml.tokens")
	if tokens := raw.([]string); tokens[309] != "<|endoftext|>" || tokens[316] != "<|end|>" || tokens[319] != "<|user|>" {
		t.Errorf("the vocabulary's last tokens: %q", tokens[305:])
	}
	for name, ne := range map[string][2]int64{"blk.1.attn_qkv.weight": {64, 128}, "blk.1.ffn_up.weight": {64, 256}, "blk.1.ffn_down.weight": {128, 64}} {
		ti, ok := m.Lookup(name)
		if !ok || ti.Ne[0] != ne[0] || ti.Ne[1] != ne[1] || ti.Type != tensor.Q8_0 {
			t.Errorf("%s: %+v, want %v q8_0", name, ti, ne)
		}
	}
	for _, name := range []string{"blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.ffn_gate.weight"} {
		if _, ok := m.Lookup(name); ok {
			t.Errorf("phi3 file has %s", name)
		}
	}
	long, short := ggufarch.Phi3RopeFactors(16)
	for k, c := range []struct {
		name string
		want []float32
	}{{"rope_factors_long.weight", long}, {"rope_factors_short.weight", short}} {
		ti, ok := m.Lookup(c.name)
		if !ok || ti.Type != tensor.F32 || ti.Ne[0] != 8 || m.Tensors[k].Name != c.name {
			t.Fatalf("%s: %+v", c.name, ti)
		}
		data := m.Data(ti)
		for i, w := range c.want {
			if got := math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:])); got != w {
				t.Errorf("%s[%d] = %g, want %g", c.name, i, got, w)
			}
		}
	}

	o = ggufarch.Defaults("llama")
	o.RopeFactors = true
	if err := ggufarch.WriteFile(filepath.Join(t.TempDir(), "l.gguf"), o); err == nil {
		t.Error("a llama file with Phi-3's rope factors")
	}
}
