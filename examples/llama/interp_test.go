package llama

import (
	"math"
	"os"
	"testing"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/internal/interp"
)

// TestInterpMatchesGenerated runs llama.g's plan in process (internal/interp),
// inputs from the model's fill expressions, and wants this package's logits
// bit for bit on the same thread count, evaluation after evaluation (the KV
// cache carries over), and ggml's trace for the first as TestMatchesGGML.
func TestInterpMatchesGenerated(t *testing.T) {
	src, err := os.ReadFile("llama.g")
	if err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Compile("llama.g", src, compiler.Config{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	want := readGGMLOutput(t)
	for _, threads := range []int{1, 2} {
		m := newGGMLModel(t, threads)
		defer m.Close()
		im, err := interp.Load(res.Graph, interp.Config{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		defer im.Close()
		// kvHead, nTokens: the trace's batch, then one token after it.
		for step, b := range [][2]int{{8, 8}, {16, 0}, {8, 1}} {
			kvHead, nTokens := b[0], b[1]
			gen, err := m.Eval(traceInputs(nTokens, kvHead))
			if err != nil {
				t.Fatal(err)
			}
			got, err := im.Eval(map[string]int{"n_tokens": nTokens, "n_kv": kvHead + nTokens}, nil)
			if err != nil {
				t.Fatal(err)
			}
			logits := got[0].Tensor
			if len(got) != 1 || got[0].Name != "result_output" || logits.Ne != gen.ResultOutput.Ne {
				t.Fatalf("threads %d, step %d: interp's outputs %v, generated result_output%v", threads, step, got, gen.ResultOutput.Ne)
			}
			for i, w := range gen.ResultOutput.F32s() {
				if g := logits.F32s()[i]; math.Float32bits(g) != math.Float32bits(w) {
					t.Fatalf("threads %d, step %d: logit %d = %g in process, %g generated", threads, step, i, g, w)
				}
			}
			if step == 0 {
				for i, w := range want.Values {
					if d := math.Abs(float64(logits.F32s()[i]) - w); d > 1e-4 {
						t.Fatalf("logit %d = %g in process, ggml %g", i, logits.F32s()[i], w)
					}
				}
			}
		}
	}
}
