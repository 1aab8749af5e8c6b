package llama32

import (
	"math"
	"os"
	"testing"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/internal/interp"
)

// TestInterpMatchesGenerated runs llama32.g's plan, whose layers are
// parallel regions, in process (internal/interp) and wants this package's
// logits bit for bit on the same thread count, evaluation after evaluation.
func TestInterpMatchesGenerated(t *testing.T) {
	src, err := os.ReadFile("llama32.g")
	if err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Compile("llama32.g", src, compiler.Config{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Graph.Regions) == 0 {
		t.Fatal("the plan has no parallel regions")
	}
	for _, threads := range []int{1, 2} {
		m := newModel(t, threads)
		defer m.Close()
		im, err := interp.Load(res.Graph, interp.Config{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		defer im.Close()
		for step, b := range [][2]int{{8, 8}, {3, 11}, {1, 12}} {
			nTokens, nKV := b[0], b[1]
			gen, err := m.Eval(batch(nTokens, nKV))
			if err != nil {
				t.Fatal(err)
			}
			got, err := im.Eval(map[string]int{"n_tokens": nTokens, "n_kv": nKV}, nil)
			if err != nil {
				t.Fatal(err)
			}
			logits := got[0].Tensor
			if logits.Ne != gen.ResultOutput.Ne {
				t.Fatalf("threads %d, step %d: result_output%v in process, %v generated", threads, step, logits.Ne, gen.ResultOutput.Ne)
			}
			for i, w := range gen.ResultOutput.F32s() {
				if g := logits.F32s()[i]; math.Float32bits(g) != math.Float32bits(w) {
					t.Fatalf("threads %d, step %d: logit %d = %g in process, %g generated", threads, step, i, g, w)
				}
			}
		}
	}
}
