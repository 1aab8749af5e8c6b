package gguf_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/tensor"
)

// llamaTensors are a llama file's tensors of width embd and feed-forward
// width ff, in the order graphc writes them.
func llamaTensors(layers int, embd, kv, ff, vocab int64, tied bool) []gguf.MixTensor {
	ts := []gguf.MixTensor{{Name: "token_embd.weight", Ne: []int64{embd, vocab}}}
	for l := range layers {
		b := fmt.Sprintf("blk.%d.", l)
		ts = append(ts,
			gguf.MixTensor{Name: b + "attn_norm.weight", Ne: []int64{embd}},
			gguf.MixTensor{Name: b + "attn_q.weight", Ne: []int64{embd, embd}},
			gguf.MixTensor{Name: b + "attn_k.weight", Ne: []int64{embd, kv}},
			gguf.MixTensor{Name: b + "attn_v.weight", Ne: []int64{embd, kv}},
			gguf.MixTensor{Name: b + "attn_output.weight", Ne: []int64{embd, embd}},
			gguf.MixTensor{Name: b + "ffn_norm.weight", Ne: []int64{embd}},
			gguf.MixTensor{Name: b + "ffn_gate.weight", Ne: []int64{embd, ff}},
			gguf.MixTensor{Name: b + "ffn_up.weight", Ne: []int64{embd, ff}},
			gguf.MixTensor{Name: b + "ffn_down.weight", Ne: []int64{ff, embd}},
		)
	}
	ts = append(ts, gguf.MixTensor{Name: "output_norm.weight", Ne: []int64{embd}})
	if !tied {
		ts = append(ts, gguf.MixTensor{Name: "output.weight", Ne: []int64{embd, vocab}})
	}
	return ts
}

// TestMix checks a few of llama.cpp's choices, as llama_model_quantize
// made them (internal/llamacpp's TestMixMatchesLlamaCpp checks them all
// against it).
func TestMix(t *testing.T) {
	for _, c := range []struct {
		name   string
		ft     gguf.FileType
		model  gguf.MixModel
		ts     []gguf.MixTensor
		pure   bool
		expect map[string]tensor.DType
	}{
		{"q4_K_m 4 layers", gguf.FileQ4_K_M, gguf.MixModel{Arch: "llama", Layers: 4, Heads: 4, KVHeads: 1},
			llamaTensors(4, 256, 64, 512, 512, false), false, map[string]tensor.DType{
				"token_embd.weight": tensor.Q4_K, "output.weight": tensor.Q6_K, "output_norm.weight": tensor.F32,
				"blk.0.attn_v.weight": tensor.Q4_K, "blk.2.attn_v.weight": tensor.Q6_K, "blk.3.attn_v.weight": tensor.Q6_K,
				"blk.1.ffn_down.weight": tensor.Q4_K, "blk.2.ffn_down.weight": tensor.Q6_K, "blk.0.attn_q.weight": tensor.Q4_K,
			}},
		{"q4_K_m width 320, tied", gguf.FileQ4_K_M, gguf.MixModel{Arch: "llama", Layers: 4, Heads: 4, KVHeads: 1},
			llamaTensors(4, 320, 80, 864, 512, true), false, map[string]tensor.DType{
				"token_embd.weight": tensor.Q8_0, "blk.0.attn_v.weight": tensor.Q5_0, "blk.3.attn_v.weight": tensor.Q8_0,
				"blk.0.ffn_down.weight": tensor.Q5_0,
			}},
		{"q2_K gqa 4", gguf.FileQ2_K, gguf.MixModel{Arch: "qwen2", Layers: 2, Heads: 8, KVHeads: 2},
			llamaTensors(2, 256, 64, 512, 512, false), false, map[string]tensor.DType{
				"blk.0.attn_v.weight": tensor.Q4_K, "blk.0.ffn_down.weight": tensor.Q3_K, "blk.0.attn_output.weight": tensor.Q3_K,
				"blk.0.ffn_up.weight": tensor.Q2_K, "output.weight": tensor.Q6_K,
			}},
		{"q4_0 ffn 400", gguf.FileQ4_0, gguf.MixModel{Arch: "llama", Layers: 2, Heads: 4, KVHeads: 4},
			llamaTensors(2, 256, 256, 400, 512, false), false, map[string]tensor.DType{
				"blk.0.ffn_down.weight": tensor.F16, "output.weight": tensor.Q6_K, "token_embd.weight": tensor.Q4_0,
			}},
		{"q4_K_m pure", gguf.FileQ4_K_M, gguf.MixModel{Arch: "llama", Layers: 4, Heads: 4, KVHeads: 1},
			llamaTensors(4, 320, 80, 512, 512, false), true, map[string]tensor.DType{
				"output.weight": tensor.Q5_0, "blk.3.attn_v.weight": tensor.Q5_0, "blk.3.ffn_down.weight": tensor.Q4_K,
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := gguf.Mix(c.ft, c.model, c.ts, c.pure)
			if err != nil {
				t.Fatal(err)
			}
			for i, ts := range c.ts {
				if want, ok := c.expect[ts.Name]; ok && got[i] != want {
					t.Errorf("%s: %s, want %s", ts.Name, got[i], want)
				}
			}
		})
	}
}

func TestFileTypes(t *testing.T) {
	for _, ft := range gguf.FileTypes() {
		if p, ok := gguf.ParseFileType(ft.String()); !ok || p != ft {
			t.Errorf("ParseFileType(%q) = %v, %v", ft.String(), p, ok)
		}
	}
	if ft, ok := gguf.ParseFileType("Q4_K_M"); !ok || ft != gguf.FileQ4_K_M || ft.Default() != tensor.Q4_K {
		t.Errorf("ParseFileType(Q4_K_M) = %v, %v", ft, ok)
	}
	if _, ok := gguf.ParseFileType("q2_K_s"); ok {
		t.Error("q2_K_s needs an importance matrix; want it unknown")
	}
}

func TestLoaderCompare(t *testing.T) {
	names := []string{"blk.10.attn_q.weight", "output.weight", "blk.2.ffn_up.weight", "blk.2.attn_k.weight", "token_embd.weight", "output_norm.weight"}
	slices.SortFunc(names, gguf.LoaderCompare)
	want := []string{"output.weight", "output_norm.weight", "token_embd.weight", "blk.2.attn_k.weight", "blk.2.ffn_up.weight", "blk.10.attn_q.weight"}
	if !slices.Equal(names, want) {
		t.Errorf("got %v, want %v", names, want)
	}
}

func TestQuantizedMeta(t *testing.T) {
	meta := []gguf.KV{{Key: "general.architecture", Value: "llama"}, {Key: "general.file_type", Value: uint32(0)}, {Key: "split.count", Value: uint16(1)}, {Key: "llama.block_count", Value: uint32(2)}}
	got := gguf.QuantizedMeta(meta, gguf.FileQ6_K)
	want := []gguf.KV{{Key: "general.architecture", Value: "llama"}, {Key: "llama.block_count", Value: uint32(2)},
		{Key: "general.quantization_version", Value: uint32(2)}, {Key: "general.file_type", Value: uint32(18)}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestMixExperts: a model of exactly 8 experts (Mixtral's) gets llama.cpp's
// rules for them — attn_v and attn_k q8_0 in any quantized file type,
// attn_output q5_K in q4_K_m — where one of 16 experts keeps the dense
// model's types; the experts' matrices are quantized as ffn_down's and
// the others' are, the router kept f32.
func TestMixExperts(t *testing.T) {
	ts := []gguf.MixTensor{
		{Name: "blk.0.attn_k.weight", Ne: []int64{256, 128}},
		{Name: "blk.0.attn_v.weight", Ne: []int64{256, 128}},
		{Name: "blk.0.attn_output.weight", Ne: []int64{256, 256}},
		{Name: "blk.0.ffn_gate_inp.weight", Ne: []int64{256, 8}, Type: tensor.F32},
		{Name: "blk.0.ffn_down_exps.weight", Ne: []int64{512, 256, 8}},
		{Name: "blk.0.ffn_up_exps.weight", Ne: []int64{256, 512, 8}},
	}
	for _, c := range []struct {
		ft      gguf.FileType
		experts int
		want    []tensor.DType
	}{
		{gguf.FileQ4_K_M, 8, []tensor.DType{tensor.Q8_0, tensor.Q8_0, tensor.Q5_K, tensor.F32, tensor.Q6_K, tensor.Q4_K}},
		{gguf.FileQ4_0, 8, []tensor.DType{tensor.Q8_0, tensor.Q8_0, tensor.Q4_0, tensor.F32, tensor.Q4_0, tensor.Q4_0}},
		{gguf.FileQ4_K_M, 16, []tensor.DType{tensor.Q4_K, tensor.Q6_K, tensor.Q4_K, tensor.F32, tensor.Q6_K, tensor.Q4_K}},
	} {
		got, err := gguf.Mix(c.ft, gguf.MixModel{Arch: "llama", Layers: 1, Heads: 4, KVHeads: 2, Experts: c.experts}, ts, false)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s, %d experts: %v, want %v", c.ft, c.experts, got, c.want)
		}
	}
}
