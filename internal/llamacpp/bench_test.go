package llamacpp_test

import (
	"path/filepath"
	"testing"

	"github.com/graphc/graphc/gguf/ggufarch"
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
	b, err := h.Bench(path)
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
		t.Logf("%d threads: pp64 %v, tg16 %v (flash attention off: %v)", threads, pp, tg, b.FlashAttnOff)
	}
}
