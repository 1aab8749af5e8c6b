package qwen3moe

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/gguf/ggufarch"
)

// TestLoadsDefaultFile: the package, compiled for qwen3moe.g's defaults,
// loads what graphc gguf new -arch qwen3moe writes by default (8 experts,
// 2 used, the experts' width stated) and computes finite logits for a
// batch of 3 tokens, each routed to its own experts.
func TestLoadsDefaultFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := ggufarch.WriteFile(path, ggufarch.Defaults("qwen3moe")); err != nil {
		t.Fatal(err)
	}
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
	inf := float32(math.Inf(-1))
	res, err := m.Eval(&Inputs{Dims: Dims{NTokens: 3, NKV: 3, NOutputs: 3}, InpTokens: []int32{300, 7, 42}, InpPos: []int32{0, 1, 2},
		KQMask: []float32{0, inf, inf, 0, 0, inf, 0, 0, 0}, InpOutIds: []int32{0, 1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range res.ResultOutput.F32s() {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("logit %d = %g", i, v)
		}
	}
}

func TestGeneratedUpToDate(t *testing.T) {
	src, err := os.ReadFile("qwen3moe.g")
	if err != nil {
		t.Fatal(err)
	}
	want, err := compiler.GenerateFile("qwen3moe.g", src, ".", "", false, compiler.Config{Verify: true, FlashAttnAuto: true}) // as graphc compile's -fa auto
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("qwen3moe_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("stale generated files; run go generate ./examples/...")
	}
}
