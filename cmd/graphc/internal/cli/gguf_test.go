package cli

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/tensor"
)

func TestGGUFNewAndInfo(t *testing.T) {
	dir := t.TempDir()
	for _, typ := range []string{"f32", "q8_0", "q4_0"} {
		path := filepath.Join(dir, typ+".gguf")
		if code, _, stderr := runCLI("gguf", "new", "-type", typ, "../../../../examples/llama/llama.g", path); code != 0 {
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
			got := tensor.Dequantize(nil, tensor.F32, m.Data(q), 2)
			if got[1] != float32(tensor.GGMLFill(2)(1, [4]int{})) {
				t.Errorf("blk.0.attn_q.weight[1] = %g", got[1])
			}
		}
		m.Close()
		types, err := compiler.WeightTypesOf(path)
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
	// iq3_s is a llama.cpp file type, but graphc has no encoder for its
	// default type; q2_K_s needs an importance matrix; i32 is no weight
	// type.
	for _, typ := range []string{"i32", "iq3_s", "q2_K_s"} {
		if code, _, _ := runCLI("gguf", "new", "-type", typ, "../../../../examples/llama/llama.g", filepath.Join(dir, "x.gguf")); code != ExitUsage {
			t.Errorf("-type %s: exit %d", typ, code)
		}
	}
}

// TestGGUFNewMix: -type of a llama.cpp file type stores the weights as its
// mix picks (the llama example's width 64 is not whole 256-blocks, so
// q4_K_m's q4_K falls back to q5_0; its output head is q8_0) and records
// the file type.
func TestGGUFNewMix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q4_K_m.gguf")
	if code, _, stderr := runCLI("gguf", "new", "-type", "q4_K_m", "../../../../examples/llama/llama.g", path); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for name, want := range map[string]string{"blk.0.attn_q.weight": "q5_0", "blk.0.attn_norm.weight": "f32", "output.weight": "q8_0"} {
		if ti, ok := m.Lookup(name); !ok || ti.Type.String() != want {
			t.Errorf("%s: %v, want %s", name, ti, want)
		}
	}
	if ft, _ := m.MetaInt("general.file_type"); ft != int64(gguf.FileQ4_K_M) {
		t.Errorf("general.file_type %d, want %d", ft, gguf.FileQ4_K_M)
	}
}

// TestCompileForQuantizedWeights retypes declared f32 weights to the types
// of a weights file.
func TestCompileForQuantizedWeights(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.gguf")
	if code, _, stderr := runCLI("gguf", "new", "-type", "q4_0", "../../../../examples/llama/llama.g", path); code != 0 {
		t.Fatal(stderr)
	}
	types, err := compiler.WeightTypesOf(path)
	if err != nil {
		t.Fatal(err)
	}
	src := []byte("dim n <= 4\ninput x: f32[64, n]\nweight blk.0.attn_q.weight: f32[64, 64]\nweight blk.0.attn_norm.weight: f32[64]\noutput y = mul_mat(blk.0.attn_q.weight, mul(x, blk.0.attn_norm.weight))\n")
	res, err := compiler.Compile("m.g", src, compiler.Config{WeightTypes: types})
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

// TestRunQuantizedLlama writes the llama example's weights as f32, f16,
// bf16, q8_0 and q4_0 GGUF files, runs the model from each (compiled for its
// types, loaded by mmap) and checks the logits against the f32 run. Stated
// tolerances, absolute on logits of magnitude up to 0.2: f16 2e-4, bf16 and
// q8_0 2e-3, q4_0 2e-2 (4-bit weights keep about 1/16 of a block's range).
func TestRunQuantizedLlama(t *testing.T) {
	if testing.Short() {
		t.Skip("builds five binaries")
	}
	dir := t.TempDir()
	logits := map[string][]float64{}
	for _, typ := range []string{"f32", "f16", "bf16", "q8_0", "q4_0"} {
		path := filepath.Join(dir, typ+".gguf")
		if code, _, stderr := runCLI("gguf", "new", "-type", typ, "../../../../examples/llama/llama.g", path); code != 0 {
			t.Fatal(stderr)
		}
		code, out, stderr := runCLI("run", "-json", "-weights", path, "../../../../examples/llama/llama.g")
		if code != 0 {
			t.Fatalf("run -weights %s: exit %d: %s", typ, code, stderr)
		}
		var got struct {
			Outputs []struct {
				Values []float64 `json:"values"`
			} `json:"outputs"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		logits[typ] = got.Outputs[0].Values
	}
	// The f32 file holds the fill rule's weights, and run fills state the
	// same with -weights as without: the two runs agree bit for bit.
	code, out, stderr := runCLI("run", "-json", "../../../../examples/llama/llama.g")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	var filled struct {
		Outputs []struct {
			Values []float64 `json:"values"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(out), &filled); err != nil {
		t.Fatal(err)
	}
	for i, v := range filled.Outputs[0].Values {
		if logits["f32"][i] != v {
			t.Fatalf("logit %d: %g with -weights f32.gguf, %g without", i, logits["f32"][i], v)
		}
	}
	for typ, tol := range map[string]float64{"f16": 2e-4, "bf16": 2e-3, "q8_0": 2e-3, "q4_0": 2e-2} {
		worst := 0.0
		for i, v := range logits["f32"] {
			worst = max(worst, math.Abs(logits[typ][i]-v))
		}
		t.Logf("%s: max |logit - f32 logit| = %.3g (tolerance %g)", typ, worst, tol)
		if worst > tol || worst == 0 {
			t.Errorf("%s logits differ from f32 by %g", typ, worst)
		}
	}
}
