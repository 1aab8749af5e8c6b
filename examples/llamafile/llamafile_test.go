package llamafile

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/gguf/ggufarch"
)

// newFile writes a random llama.cpp model file of o, as graphc gguf new
// -arch does.
func newFile(t *testing.T, o ggufarch.Options) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := ggufarch.WriteFile(path, o); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGeneratedLoadsDefaultFile: the package here, compiled for llama.g's
// defaults, loads a file of that shape and computes finite logits.
func TestGeneratedLoadsDefaultFile(t *testing.T) {
	path := newFile(t, ggufarch.Defaults("llama")) // f32, as llama.g declares
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
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
	out, err := m.Eval(&Inputs{Dims: Dims{NTokens: 2, NKV: 2, NOutputs: 2}, InpTokens: []int32{1, 100}, InpPos: []int32{0, 1}, KQMask: []float32{0, float32(math.Inf(-1)), 0, 0}, InpOutIds: []int32{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range out.ResultOutput.F32s() {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("logit %d = %g", i, v)
		}
	}
}

// TestRefusesOtherShapes: a file of another shape is refused by the
// package compiled for the defaults, naming the keys that differ.
func TestRefusesOtherShapes(t *testing.T) {
	o := ggufarch.Defaults("llama")
	o.Layers, o.KVHeads = 3, 4
	path := newFile(t, o)
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = f.CheckMeta(Meta)
	for _, want := range []string{"llama.block_count = 3, the model was compiled for 2", "llama.attention.head_count_kv = 4, the model was compiled for 2"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckMeta: %v; want %q", err, want)
		}
	}
}
