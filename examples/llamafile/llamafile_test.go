package llamafile

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/internal/cli"
)

// newFile writes a random llama.cpp model file with graphc gguf new -arch.
func newFile(t *testing.T, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.gguf")
	var out, errb bytes.Buffer
	if code := cli.Main(append(append([]string{"gguf", "new"}, args...), path), &out, &errb); code != 0 {
		t.Fatalf("gguf new %v: exit %d: %s", args, code, errb.String())
	}
	return path
}

// TestGeneratedLoadsDefaultFile: the package here, compiled for llama.g's
// defaults, loads a file of that shape and computes finite logits.
func TestGeneratedLoadsDefaultFile(t *testing.T) {
	path := newFile(t, "-arch", "llama") // f32, as llama.g declares
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
	out, err := m.Eval(&Inputs{Dims: Dims{NTokens: 2, NKV: 2}, InpTokens: []int32{1, 100}, InpPos: []int32{0, 1}, KQMask: []float32{0, float32(math.Inf(-1)), 0, 0}})
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
	path := newFile(t, "-arch", "llama", "-layers", "3", "-kv-heads", "4")
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

// TestRunsFilesOfSeveralShapes compiles llama.g for files of other shapes
// (GQA and not, tied head, quantized) and runs it end to end.
func TestRunsFilesOfSeveralShapes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program per shape")
	}
	src, err := os.ReadFile("llama.g")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		vocab   string
		layers  int
		kvWidth int // ne1 of attn_k.weight
		tied    bool
	}{
		{[]string{"-layers", "2", "-embd", "64", "-heads", "4", "-kv-heads", "2", "-type", "q8_0"}, "320", 2, 32, false},
		{[]string{"-layers", "3", "-embd", "128", "-heads", "4", "-kv-heads", "1", "-ff", "256", "-vocab", "512", "-tied", "-rope-theta", "500000", "-type", "q4_0"}, "512", 3, 32, true},
		{[]string{"-layers", "1", "-embd", "96", "-heads", "3", "-kv-heads", "3", "-ff", "160", "-vocab", "300", "-type", "f16"}, "300", 1, 96, false},
	} {
		path := newFile(t, append([]string{"-arch", "llama"}, tc.args...)...)
		file, err := compiler.ReadWeightsFile(path)
		if err != nil {
			t.Fatal(err)
		}
		res, err := compiler.Compile("llama.g", src, compiler.Config{File: file})
		if err != nil {
			t.Fatal(err)
		}
		layers, tied := 0, true
		for _, w := range res.Graph.Params {
			switch {
			case strings.HasSuffix(w.Name, ".attn_k.weight"):
				layers++
				if n, _ := w.Ne[1].Constant(); n != int64(tc.kvWidth) {
					t.Errorf("%v: %s ne1 = %d, want %d", tc.args, w.Name, n, tc.kvWidth)
				}
			case w.Name == "output.weight":
				tied = false
			}
		}
		if layers != tc.layers || tied != tc.tied {
			t.Errorf("%v: %d layers, tied %v; want %d, %v", tc.args, layers, tied, tc.layers, tc.tied)
		}
		var out, errb bytes.Buffer
		if code := cli.Main([]string{"run", "-weights", path, "-dim", "n_tokens=3", "-dim", "n_kv=3", "llama.g"}, &out, &errb); code != 0 {
			t.Fatalf("%v: run: exit %d: %s", tc.args, code, errb.String())
		}
		if first, _, _ := strings.Cut(out.String(), "\n"); first != "result_output f32["+tc.vocab+", 3]" || strings.Contains(out.String(), "NaN") {
			t.Errorf("%v: run printed %.200s", tc.args, out.String())
		}
	}
}
