package compiler

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/runtime"
)

func TestGGUFNewAndInfo(t *testing.T) {
	dir := t.TempDir()
	for _, typ := range []string{"f32", "q8_0", "q4_0"} {
		path := filepath.Join(dir, typ+".gguf")
		if code, _, stderr := runCLI("gguf", "new", "-type", typ, "../examples/llama/llama.g", path); code != 0 {
			t.Fatalf("gguf new -type %s: exit %d: %s", typ, code, stderr)
		}
		m, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		q, _ := m.Lookup("blk.0.attn_q.weight")
		norm, _ := m.Lookup("blk.0.attn_norm.weight")
		if q.Type.String() != typ || norm.Type.String() != "f32" || len(m.Tensors) != 39 {
			t.Errorf("-type %s: attn_q %s, attn_norm %s, %d tensors", typ, q.Type, norm.Type, len(m.Tensors))
		}
		if typ == "f32" {
			// The ggml fill: element i of the k-th weight is sin(i*0.01 + k)*0.1.
			got := runtime.Dequantize(nil, runtime.F32, m.Data(q), 2)
			if got[1] != float32(runtime.GGMLFill(2)(1, [4]int{})) {
				t.Errorf("blk.0.attn_q.weight[1] = %g", got[1])
			}
		}
		m.Close()
		types, err := WeightTypesOf(path)
		if err != nil || types["blk.0.attn_q.weight"].String() != typ {
			t.Errorf("WeightTypesOf: %v %v", types["blk.0.attn_q.weight"], err)
		}
	}
	code, out, _ := runCLI("gguf", "info", filepath.Join(dir, "q4_0.gguf"))
	if code != 0 || !strings.Contains(out, "GGUF v3, 2 metadata keys, 39 tensors") || !strings.Contains(out, "30 q4_0, 9 f32") {
		t.Errorf("gguf info: exit %d\n%s", code, out)
	}
	if code, _, stderr := runCLI("gguf", "info", "testdata/not_a_trace.json"); code != ExitUser || !strings.Contains(stderr, "magic") {
		t.Errorf("gguf info on a non-GGUF file: exit %d: %s", code, stderr)
	}
	if code, _, _ := runCLI("gguf", "new", "-type", "i32", "../examples/llama/llama.g", filepath.Join(dir, "x.gguf")); code != ExitUsage {
		t.Errorf("-type i32: exit %d", code)
	}
}

// TestCompileForQuantizedWeights retypes declared f32 weights to the types
// of a weights file.
func TestCompileForQuantizedWeights(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.gguf")
	if code, _, stderr := runCLI("gguf", "new", "-type", "q4_0", "../examples/llama/llama.g", path); code != 0 {
		t.Fatal(stderr)
	}
	types, err := WeightTypesOf(path)
	if err != nil {
		t.Fatal(err)
	}
	src := []byte("dim n <= 4\ninput x: f32[64, n]\nweight blk.0.attn_q.weight: f32[64, 64]\nweight blk.0.attn_norm.weight: f32[64]\noutput y = mul_mat(blk.0.attn_q.weight, mul(x, blk.0.attn_norm.weight))\n")
	res, err := Compile("m.g", src, Config{WeightTypes: types})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range res.Graph.Params {
		want := map[string]string{"blk.0.attn_q.weight": "q4_0", "blk.0.attn_norm.weight": "f32"}[w.Name]
		if w.Type.String() != want {
			t.Errorf("%s compiled as %s, want %s", w.Name, w.Type, want)
		}
	}
}
