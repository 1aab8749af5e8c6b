package llamacpp_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphc/graphc/gguf/ggufarch"
	"github.com/graphc/graphc/internal/llamacpp"
	"github.com/graphc/graphc/tensor"
)

// TestBencher runs the harness's timing mode on a small file: each test
// answers with a positive time.
func TestBencher(t *testing.T) {
	h := oracle(t)
	path := filepath.Join(t.TempDir(), "small.gguf")
	o := ggufarch.Defaults("llama")
	o.Type = tensor.Q8_0
	if err := ggufarch.WriteFile(path, o); err != nil {
		t.Fatal(err)
	}
	b, err := h.Bench(path, llamacpp.BenchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.NVocab != 320 {
		t.Errorf("n_vocab %d, want 320", b.NVocab)
	}
	for _, threads := range []int{1, 2} {
		if err := b.Threads(threads); err != nil {
			t.Fatal(err)
		}
		pp, err := b.PP(64)
		if err != nil {
			t.Fatal(err)
		}
		tg, err := b.TG(16)
		if err != nil {
			t.Fatal(err)
		}
		if pp <= 0 || tg <= 0 {
			t.Errorf("%d threads: pp64 %v, tg16 %v", threads, pp, tg)
		}
		t.Logf("%d threads: pp64 %v, tg16 %v (flash attention off: %v)", threads, pp, tg, b.FlashAttnSet)
	}
}

// TestBencherDepth runs the tests at a depth, with flash attention and
// q8_0 caches: a depth and a test longer than the context are refused.
func TestBencherDepth(t *testing.T) {
	h := oracle(t)
	path := filepath.Join(t.TempDir(), "small.gguf")
	o := ggufarch.Defaults("llama")
	o.Type = tensor.Q8_0
	o.Embd, o.FF = 128, 256 // heads of 32, q8_0's block
	if err := ggufarch.WriteFile(path, o); err != nil {
		t.Fatal(err)
	}
	b, err := h.Bench(path, llamacpp.BenchOptions{Ctx: 1024, FlashAttn: true, CacheK: tensor.Q8_0, CacheV: tensor.Q8_0})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if !b.FlashAttnSet {
		t.Fatal("the harness could not turn flash attention on")
	}
	if _, err := b.Depth(600); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second finds the depth the first left
		if _, err := b.PP(400); err != nil {
			t.Fatal(err)
		}
		if _, err := b.TG(16); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.PP(512); err == nil || !strings.Contains(err.Error(), "more than the context") {
		t.Fatalf("pp512 at depth 600 in a context of 1024: %v, want the harness's refusal", err)
	}
}
