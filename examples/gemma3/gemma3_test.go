package gemma3

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/gguf/ggufarch"
)

// TestLoadsDefaultFile: the package, compiled for gemma3.g's defaults,
// loads what graphc gguf new -arch gemma3 writes by default (a window of
// 512, both masks as inputs) and computes finite logits.
func TestLoadsDefaultFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.gguf")
	if err := ggufarch.WriteFile(path, ggufarch.Defaults("gemma3")); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if tm, _ := f.MetaString("tokenizer.ggml.model"); tm != "llama" {
		t.Errorf("tokenizer.ggml.model = %q", tm)
	}
	if err := f.CheckMeta(Meta); err != nil {
		t.Fatal(err)
	}
	weights, err := f.Weights(Weights)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(weights, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	res, err := m.Eval(&Inputs{Dims: Dims{NTokens: 1, NKV: 1, NOutputs: 1}, InpTokens: []int32{300}, InpPos: []int32{0}, KQMask: []float32{0}, KQMaskSwa: []float32{0}, InpOutIds: []int32{0}})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range res.ResultOutput.F32s() {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("logit %d = %g", i, v)
		}
	}
}
