package ggufarch_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/gguf/ggufarch"
	"github.com/graphc/graphc/tensor"
)

// TestWriteMoEFile: a qwen3moe file states its experts as llama.cpp reads
// them and holds the router (f32 whatever the type) and the experts'
// matrices, one per expert in the third dimension, instead of the dense
// feed-forward; ExpertFF 0 is FF / ExpertsUsed.
func TestWriteMoEFile(t *testing.T) {
	for _, c := range []struct {
		experts, used, ff, ffn  int
		wantN, wantUsed, wantFF int
	}{{0, 0, 0, 128, 8, 2, 64}, {16, 4, 64, 96, 16, 4, 64}, {6, 3, 0, 96, 6, 3, 32}} {
		path := filepath.Join(t.TempDir(), "moe.gguf")
		o := ggufarch.Defaults("qwen3moe")
		o.Experts, o.ExpertsUsed, o.ExpertFF, o.FF, o.Type = c.experts, c.used, c.ff, c.ffn, tensor.Q8_0
		if err := ggufarch.WriteFile(path, o); err != nil {
			t.Fatal(err)
		}
		m, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		n, used := c.wantN, c.wantUsed
		for key, want := range map[string]int64{
			"qwen3moe.expert_count": int64(n), "qwen3moe.expert_used_count": int64(used),
			"qwen3moe.expert_feed_forward_length": int64(c.wantFF), "qwen3moe.attention.key_length": 16,
		} {
			if got, ok := m.MetaInt(key); !ok || got != want {
				t.Errorf("%+v: %s = %d (%v), want %d", c, key, got, ok, want)
			}
		}
		for name, want := range map[string]string{
			"blk.1.ffn_gate_inp.weight":  fmt.Sprintf("f32 [64 %d 1 1]", n),
			"blk.1.ffn_gate_exps.weight": fmt.Sprintf("q8_0 [64 %d %d 1]", c.wantFF, n),
			"blk.1.ffn_up_exps.weight":   fmt.Sprintf("q8_0 [64 %d %d 1]", c.wantFF, n),
			"blk.1.ffn_down_exps.weight": fmt.Sprintf("q8_0 [%d 64 %d 1]", c.wantFF, n),
			"blk.1.attn_q_norm.weight":   "f32 [16 1 1 1]",
		} {
			ti, ok := m.Lookup(name)
			if got := fmt.Sprintf("%s %v", ti.Type, ti.Ne); !ok || got != want {
				t.Errorf("%+v: %s: %s (%v), want %s", c, name, got, ok, want)
			}
		}
		if _, ok := m.Lookup("blk.0.ffn_up.weight"); ok {
			t.Errorf("%+v: a dense ffn_up.weight beside the experts", c)
		}
	}
}

// TestWriteLlamaExpertsFile: a llama file with experts (Mixtral's kind)
// states their count and those used, but no width of their own: llama.cpp
// reads the experts -ff wide.
func TestWriteLlamaExpertsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mixtral.gguf")
	o := ggufarch.Defaults("llama")
	o.Experts, o.FF, o.Type = 4, 96, tensor.Q4_0
	if err := ggufarch.WriteFile(path, o); err != nil {
		t.Fatal(err)
	}
	m, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for key, want := range map[string]int64{"llama.expert_count": 4, "llama.expert_used_count": 2, "llama.feed_forward_length": 96} {
		if got, ok := m.MetaInt(key); !ok || got != want {
			t.Errorf("%s = %d (%v), want %d", key, got, ok, want)
		}
	}
	if _, ok := m.MetaValue("llama.expert_feed_forward_length"); ok {
		t.Errorf("llama.expert_feed_forward_length written; Mixtral's converter writes none")
	}
	for name, want := range map[string]string{
		"blk.0.ffn_gate_inp.weight":  "f32 [64 4 1 1]",
		"blk.0.ffn_gate_exps.weight": "q4_0 [64 96 4 1]",
		"blk.0.ffn_down_exps.weight": "q4_0 [96 64 4 1]",
	} {
		ti, ok := m.Lookup(name)
		if got := fmt.Sprintf("%s %v", ti.Type, ti.Ne); !ok || got != want {
			t.Errorf("%s: %s (%v), want %s", name, got, ok, want)
		}
	}
	for _, name := range []string{"blk.0.ffn_gate.weight", "blk.1.ffn_up.weight"} {
		if _, ok := m.Lookup(name); ok {
			t.Errorf("a dense %s beside the experts", name)
		}
	}
}

// TestMoECheck: expert options outside qwen3moe and llama, and expert counts that
// make no file llama.cpp loads, are refused by their flags.
func TestMoECheck(t *testing.T) {
	for _, c := range []struct {
		arch              string
		experts, used, ff int
		typ               tensor.DType
		mix, want         string
	}{
		{"qwen3", 8, 0, 0, tensor.F32, "", "only qwen3moe and llama files have experts"},
		{"llama", 8, 2, 64, tensor.F32, "", "a llama file's experts are -ff wide"},
		{"llama", 0, 2, 0, tensor.F32, "", "a llama file has experts only with -experts"},
		{"llama", 4, 6, 0, tensor.F32, "", "-experts-used 6 is more than the 4 experts"},
		{"qwen3moe", 4, 6, 0, tensor.F32, "", "-experts-used 6 is more than the 4 experts"},
		{"qwen3moe", 8, 2, 48, tensor.Q8_0, "", "-expert-ff 48 must be a multiple of q8_0's block size 32"},
		{"qwen3moe", -1, 2, 0, tensor.F32, "", "must not be negative"},
	} {
		o := ggufarch.Defaults(c.arch)
		o.Experts, o.ExpertsUsed, o.ExpertFF, o.Type, o.Mix = c.experts, c.used, c.ff, c.typ, c.mix
		if err := o.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c, err, c.want)
		}
	}
}
