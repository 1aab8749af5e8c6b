package ggufarch_test

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/gguf/ggufarch"
	"github.com/graphc/graphc/tensor"
)

// TestWriteFile reads back what WriteFile writes: the architecture's
// metadata as llama.cpp reads it, a vocabulary of Vocab tokens whose
// merges build tokens from tokens, and llama.cpp's tensors.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	for _, arch := range []string{"llama", "qwen2"} {
		path := filepath.Join(dir, arch+".gguf")
		o := ggufarch.Defaults(arch)
		o.Layers, o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab, o.Ctx, o.Tied, o.Type = 3, 128, 8, 2, 256, 400, 512, true, tensor.Q4_0
		o.ChatTemplate = "{{ messages[0].content }}"
		if err := ggufarch.WriteFile(path, o); err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		m, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		for key, want := range map[string]int64{
			"general.file_type": 2, ".block_count": 3, ".embedding_length": 128, ".attention.head_count": 8,
			".attention.head_count_kv": 2, ".feed_forward_length": 256, ".context_length": 512, ".rope.dimension_count": 16, ".vocab_size": 400,
		} {
			if strings.HasPrefix(key, ".") {
				key = arch + key
			}
			if got, ok := m.MetaInt(key); !ok || got != want {
				t.Errorf("%s: %s = %d (%v), want %d", arch, key, got, ok, want)
			}
		}
		if a, _ := m.MetaString("general.architecture"); a != arch {
			t.Errorf("general.architecture = %q", a)
		}
		if c, _ := m.MetaString("tokenizer.chat_template"); c != o.ChatTemplate {
			t.Errorf("tokenizer.chat_template = %q, want %q", c, o.ChatTemplate)
		}
		raw, _ := m.MetaValue("tokenizer.ggml.tokens")
		tokens, _ := raw.([]string)
		if len(tokens) != 400 {
			t.Fatalf("%s: %d tokens", arch, len(tokens))
		}
		if arch == "qwen2" {
			have := map[string]bool{}
			for _, tok := range tokens {
				have[tok] = true
			}
			raw, _ := m.MetaValue("tokenizer.ggml.merges")
			for _, mg := range raw.([]string) {
				a, b, ok := strings.Cut(mg, " ")
				if !ok || !have[a] || !have[b] || !have[a+b] {
					t.Fatalf("merge %q: not two tokens making a third", mg)
				}
			}
			if _, ok := m.Lookup("blk.2.attn_k.bias"); !ok {
				t.Error("qwen2 without attn_k.bias")
			}
		}
		k, _ := m.Lookup("blk.2.attn_k.weight")
		if _, ok := m.Lookup("output.weight"); ok || k.Ne[1] != 32 || k.Type.String() != "q4_0" {
			t.Errorf("%s: attn_k %v %s; -tied file has output.weight: %v", arch, k.Ne, k.Type, ok)
		}
	}
	o := ggufarch.Defaults("llama")
	o.Heads = 3
	if err := ggufarch.WriteFile(filepath.Join(dir, "x.gguf"), o); err == nil || err.Error() != "-embd 64 is not a multiple of -heads 3" {
		t.Errorf("Heads 3 with Embd 64: %v", err)
	}
}

// TestRopeFreqs: -rope-freqs writes rope_freqs.weight, f32[head_dim/2],
// first among the tensors as llama.cpp's converter writes it, with
// Llama 3's factors: 1 for the fast pairs, 32 for the slowest, a blend
// rising between.
func TestRopeFreqs(t *testing.T) {
	f := ggufarch.RopeFactors(64, 500000, 32, 1, 4, 8192)
	if len(f) != 32 || f[0] != 1 || f[31] != 32 {
		t.Fatalf("Llama 3.2's factors: %v", f)
	}
	blend := 0
	for i := 1; i < len(f); i++ {
		if f[i] < f[i-1] {
			t.Fatalf("factors fall at pair %d: %v", i, f)
		}
		if f[i] > 1 && f[i] < 32 {
			blend++
		}
	}
	if blend == 0 {
		t.Errorf("no blended factors between 1 and 32: %v", f)
	}

	path := filepath.Join(t.TempDir(), "l3.gguf")
	o := ggufarch.Defaults("llama")
	o.RopeFreqs, o.RopeTheta = true, 500000
	if err := ggufarch.WriteFile(path, o); err != nil {
		t.Fatal(err)
	}
	m, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ti, ok := m.Lookup("rope_freqs.weight")
	if !ok || ti.Type != tensor.F32 || ti.NDims != 1 || ti.Ne[0] != 8 || m.Tensors[0].Name != "rope_freqs.weight" {
		t.Fatalf("rope_freqs.weight: %+v", ti)
	}
	want := ggufarch.RopeFactors(16, 500000, 32, 1, 4, 8192)
	data := m.Data(ti)
	for i, w := range want {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:])); got != w {
			t.Errorf("rope_freqs.weight[%d] = %g, want %g", i, got, w)
		}
	}

	o = ggufarch.Defaults("qwen2")
	o.RopeFreqs = true
	if err := ggufarch.WriteFile(filepath.Join(t.TempDir(), "q.gguf"), o); err == nil {
		t.Error("a qwen2 file with rope_freqs.weight")
	}
}
