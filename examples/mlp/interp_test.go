package mlp

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/internal/interp"
	"github.com/graphc/graphc/tensor"
)

// TestInterpMatchesGenerated runs mlp.g's plan in process (internal/interp)
// and wants this package's outputs bit for bit on the same thread count,
// and ggml's as TestMatchesGGML does.
func TestInterpMatchesGenerated(t *testing.T) {
	src, err := os.ReadFile("mlp.g")
	if err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Compile("mlp.g", src, compiler.Config{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	var ggml struct {
		Values []float64 `json:"values"`
	}
	b, err := os.ReadFile("testdata/ggml_mlp_output.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ggml); err != nil {
		t.Fatal(err)
	}
	weights := map[string]tensor.Tensor{}
	for k, w := range Weights {
		x := tensor.NewTensor(w.Type, w.Ne)
		tensor.Fill(&x, tensor.GGMLFill(k))
		weights[w.Name] = x
	}
	for _, threads := range []int{1, 2} {
		m, err := New(weights, threads)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		im, err := interp.Load(res.Graph, interp.Config{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		defer im.Close()
		for _, batch := range []int{4, 1} {
			in := &Inputs{Dims: Dims{NBatch: batch}}
			for i := range 32 * batch {
				in.MlpIn = append(in.MlpIn, float32(math.Cos(float64(i)*0.013)))
			}
			want, err := m.Eval(in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := im.Eval(map[string]int{"n_batch": batch}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Name != "mlp_out" || got[0].Tensor.Ne != want.MlpOut.Ne {
				t.Fatalf("threads %d, n_batch %d: interp's outputs %v, generated mlp_out%v", threads, batch, got, want.MlpOut.Ne)
			}
			for i, w := range want.MlpOut.F32s() {
				if g := got[0].Tensor.F32s()[i]; math.Float32bits(g) != math.Float32bits(w) {
					t.Fatalf("threads %d, n_batch %d: mlp_out[%d] = %g in process, %g generated", threads, batch, i, g, w)
				}
			}
			if batch == 4 {
				for i, w := range ggml.Values {
					if d := math.Abs(float64(got[0].Tensor.F32s()[i]) - w); d > 1e-4 {
						t.Fatalf("mlp_out[%d] = %g in process, ggml %g", i, got[0].Tensor.F32s()[i], w)
					}
				}
			}
		}
	}
}
