package ggufarch_test

import (
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
