package mlp

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/tensor"
)

// TestMatchesGGML compares with the output ggml computed for the same graph
// (testdata/ggml_mlp_output.json: the output of ggml's trace
// ../../ggmltrace/testdata/mlp.json): the k-th weight holds
// (float)(sin(i*0.01 + k)*0.1), mlp_in[i] = (float)cos(i*0.013).
func TestMatchesGGML(t *testing.T) {
	var want struct {
		Ne     [4]int    `json:"ne"`
		Values []float64 `json:"values"`
	}
	b, err := os.ReadFile("testdata/ggml_mlp_output.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	weights := map[string]tensor.Tensor{}
	for k, w := range Weights {
		x := tensor.NewTensor(w.Type, w.Ne)
		tensor.Fill(&x, tensor.GGMLFill(k))
		weights[w.Name] = x
	}
	m, err := New(weights, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	in := &Inputs{Dims: Dims{NBatch: 4}}
	for i := 0; i < 32*4; i++ {
		in.MlpIn = append(in.MlpIn, float32(math.Cos(float64(i)*0.013)))
	}
	out, err := m.Eval(in)
	if err != nil {
		t.Fatal(err)
	}
	if out.MlpOut.Ne != want.Ne {
		t.Fatalf("mlp_out shape %v, ggml %v", out.MlpOut.Ne, want.Ne)
	}
	worst := 0.0
	for i, w := range want.Values {
		worst = max(worst, math.Abs(float64(out.MlpOut.F32s()[i])-w))
	}
	t.Logf("max |graphc - ggml| = %.3g over %d values", worst, len(want.Values))
	if worst > 1e-4 {
		t.Errorf("outputs differ from ggml's by up to %g, want <= 1e-4", worst)
	}
}

func TestGeneratedUpToDate(t *testing.T) {
	src, err := os.ReadFile("mlp.g")
	if err != nil {
		t.Fatal(err)
	}
	want, err := compiler.GenerateFile("mlp.g", src, ".", "", false, compiler.Config{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("mlp_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("stale generated files; run go generate ./examples/...")
	}
}
