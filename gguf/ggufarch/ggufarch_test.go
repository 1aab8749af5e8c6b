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
	for _, arch := range []string{"llama", "qwen2", "qwen3"} {
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
			if arch == "qwen3" && key == "qwen3.rope.dimension_count" {
				// qwen3 files state their heads' size instead.
				key = "qwen3.attention.key_length"
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
		if arch != "llama" {
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
		}
		if _, ok := m.Lookup("blk.2.attn_k.bias"); ok != (arch == "qwen2") {
			t.Errorf("%s: attn_k.bias %v", arch, ok)
		}
		if _, ok := m.Lookup("blk.2.attn_q_norm.weight"); ok != (arch == "qwen3") {
			t.Errorf("%s: attn_q_norm.weight %v", arch, ok)
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

// TestHeadDim: -head-dim writes qwen3 files whose heads are not n_embd /
// n_head wide, as Qwen3-0.6B's (128 at width 1024 and 16 heads): the
// key and value lengths stated, the query and output projections
// n_head·head_dim wide and the per-head norms head_dim long.
func TestHeadDim(t *testing.T) {
	o := ggufarch.Defaults("qwen3")
	o.HeadDim = 32
	path := filepath.Join(t.TempDir(), "q3.gguf")
	if err := ggufarch.WriteFile(path, o); err != nil {
		t.Fatal(err)
	}
	m, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, key := range []string{"qwen3.attention.key_length", "qwen3.attention.value_length"} {
		if v, ok := m.MetaInt(key); !ok || v != 32 {
			t.Errorf("%s = %d (%v), want 32", key, v, ok)
		}
	}
	for name, want := range map[string][2]int64{
		"blk.1.attn_q.weight": {64, 128}, "blk.1.attn_k.weight": {64, 64}, "blk.1.attn_output.weight": {128, 64},
		"blk.1.attn_q_norm.weight": {32, 1}, "blk.1.attn_k_norm.weight": {32, 1},
	} {
		ti, ok := m.Lookup(name)
		if !ok || ti.Ne[0] != want[0] || ti.Ne[1] != want[1] {
			t.Errorf("%s: %v (%v), want %v", name, ti.Ne, ok, want)
		}
	}
	o = ggufarch.Defaults("qwen2")
	o.HeadDim = 32
	if err := ggufarch.WriteFile(filepath.Join(t.TempDir(), "q2.gguf"), o); err == nil {
		t.Error("a qwen2 file with -head-dim")
	}
}

// TestGemma3: gemma3 files have Gemma 3's metadata (the window, key and
// value lengths), a SentencePiece vocabulary, the norms after the
// attention and the feed-forward and the per-head norms; other
// architectures take no window.
func TestGemma3(t *testing.T) {
	o := ggufarch.Defaults("gemma3")
	o.HeadDim, o.SlidingWindow, o.Tied = 32, 6, true
	path := filepath.Join(t.TempDir(), "g3.gguf")
	if err := ggufarch.WriteFile(path, o); err != nil {
		t.Fatal(err)
	}
	m, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for key, want := range map[string]int64{"gemma3.attention.sliding_window": 6, "gemma3.attention.key_length": 32, "gemma3.attention.value_length": 32} {
		if v, ok := m.MetaInt(key); !ok || v != want {
			t.Errorf("%s = %d (%v), want %d", key, v, ok, want)
		}
	}
	if tm, _ := m.MetaString("tokenizer.ggml.model"); tm != "llama" {
		t.Errorf("tokenizer.ggml.model = %q", tm)
	}
	for _, name := range []string{"blk.1.post_attention_norm.weight", "blk.1.post_ffw_norm.weight", "blk.1.attn_q_norm.weight", "blk.1.attn_k_norm.weight"} {
		if _, ok := m.Lookup(name); !ok {
			t.Errorf("no %s", name)
		}
	}
	if _, ok := m.Lookup("output.weight"); ok {
		t.Error("a tied gemma3 file with output.weight")
	}
	o = ggufarch.Defaults("gemma3")
	if o.SlidingWindow != 512 {
		t.Errorf("gemma3's default window %d, want Gemma 3 1B's 512", o.SlidingWindow)
	}
	o.SlidingWindow = 0
	if err := o.Check(); err == nil {
		t.Error("a gemma3 file without a window")
	}
	o = ggufarch.Defaults("llama")
	o.SlidingWindow = 8
	if err := o.Check(); err == nil {
		t.Error("a llama file with a window")
	}
}
