package llama

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/tensor"
)

// ggmlOutput is the output ggml computed for the same graph, weights and
// inputs (testdata/ggml_llama_cpu_output.json: the output of ggml's trace
// ../../ggmltrace/testdata/llama_cpu.json).
type ggmlOutput struct {
	Tensor string    `json:"tensor"`
	Ne     [4]int    `json:"ne"`
	Values []float64 `json:"values"`
}

// newGGMLModel builds the model with the trace's weights and KV cache: the
// k-th declared weight or state tensor holds (float)(sin(i*0.01 + k)*0.1).
func newGGMLModel(t testing.TB, threads int) *Model {
	m := newFilledWeights(t, threads)
	for k := range States {
		tensor.Fill(&m.state[k], tensor.GGMLFill(len(Weights)+k))
	}
	return m
}

// traceInputs are the trace's inputs: inp_tokens[t] = (t*7+3) % n_vocab,
// inp_pos[t] = kv_head+t, KQ_mask[t*n_kv+j] = 0 if j <= kv_head+t else -inf,
// for a batch of nTokens whose first token goes to cache slot kvHead.
func traceInputs(nTokens, kvHead int) *Inputs {
	const nVocab = 128
	nKV := kvHead + nTokens
	in := &Inputs{Dims: Dims{NTokens: nTokens, NKV: nKV}}
	for t := 0; t < nTokens; t++ {
		in.InpTokens = append(in.InpTokens, int32((t*7+3)%nVocab))
		in.InpPos = append(in.InpPos, int32(kvHead+t))
		for j := 0; j < nKV; j++ {
			v := float32(0)
			if j > kvHead+t {
				v = float32(math.Inf(-1))
			}
			in.KQMask = append(in.KQMask, v)
		}
	}
	return in
}

// readGGMLOutput reads the trace's logits.
func readGGMLOutput(t *testing.T) ggmlOutput {
	t.Helper()
	var want ggmlOutput
	b, err := os.ReadFile("testdata/ggml_llama_cpu_output.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	return want
}

func TestMatchesGGML(t *testing.T) {
	want := readGGMLOutput(t)
	m := newGGMLModel(t, 0)
	defer m.Close()
	out, err := m.Eval(traceInputs(8, 8))
	if err != nil {
		t.Fatal(err)
	}
	got := out.ResultOutput
	if got.Ne != want.Ne {
		t.Fatalf("result_output shape %v, ggml %v", got.Ne, want.Ne)
	}
	worst := 0.0
	for i, w := range want.Values {
		worst = max(worst, math.Abs(float64(got.F32s()[i])-w))
	}
	t.Logf("max |graphc - ggml| = %.3g over %d logits", worst, len(want.Values))
	if worst > 1e-4 {
		t.Errorf("logits differ from ggml's by up to %g, want <= 1e-4", worst)
	}
}

func TestEvalErrors(t *testing.T) {
	m := newGGMLModel(t, 0)
	defer m.Close()
	in := traceInputs(8, 8)
	in.NTokens = 9
	if _, err := m.Eval(in); err == nil || err.Error() != "dim n_tokens = 9 is outside [0, 8]" {
		t.Errorf("n_tokens above its bound: got %v", err)
	}
	in = traceInputs(4, -1) // n_kv = 3 < n_tokens: the batch would start at cache slot -1
	if _, err := m.Eval(in); err == nil || !strings.Contains(err.Error(), "view k_cache_view-0 of cache_k_l0 covers bytes [-128, 384), outside its 2048 bytes (n_kv = 3, n_tokens = 4)") {
		t.Errorf("batch before the cache: got %v", err)
	}
	in = traceInputs(8, 8)
	in.InpPos = in.InpPos[:7]
	if _, err := m.Eval(in); err == nil || err.Error() != "input inp_pos: got 7 elements, want 8 (i32[n_tokens])" {
		t.Errorf("short input: got %v", err)
	}
	for _, id := range []int32{128, -5, 1 << 30} {
		in = traceInputs(8, 8)
		in.InpTokens[5] = id
		want := fmt.Sprintf("input inp_tokens: element 5 is %d, not a row of token_embd.weight (0..127)", id)
		if _, err := m.Eval(in); err == nil || err.Error() != want {
			t.Errorf("token id %d: got %v, want %q", id, err, want)
		}
	}
	if _, err := m.Eval(nil); !errors.Is(err, engine.ErrNoInputs) {
		t.Errorf("Eval(nil): got %v", err)
	}
	if _, err := m.Eval(traceInputs(8, 8)); err != nil {
		t.Errorf("after the refused evaluations: %v", err)
	}
	if _, err := New(map[string]tensor.Tensor{}, 1); err == nil {
		t.Error("New without weights: no error")
	}
}

// TestFewerTokens evaluates smaller batches with the same plan: no
// re-planning, and the first token's logits depend only on the first token
// and the cache.
func TestFewerTokens(t *testing.T) {
	m := newGGMLModel(t, 0)
	defer m.Close()
	full, err := m.Eval(traceInputs(8, 8))
	if err != nil {
		t.Fatal(err)
	}
	m2 := newGGMLModel(t, 0)
	defer m2.Close()
	one, err := m2.Eval(traceInputs(1, 8))
	if err != nil {
		t.Fatal(err)
	}
	if one.ResultOutput.Ne != [4]int{128, 1, 1, 1} {
		t.Fatalf("shape %v", one.ResultOutput.Ne)
	}
	for i := 0; i < 128; i++ {
		if d := math.Abs(float64(one.ResultOutput.F32s()[i] - full.ResultOutput.F32s()[i])); d > 1e-5 {
			t.Fatalf("logit %d: one token %g, eight tokens %g", i, one.ResultOutput.F32s()[i], full.ResultOutput.F32s()[i])
		}
	}
}

func TestGeneratedUpToDate(t *testing.T) {
	src, err := os.ReadFile("llama.g")
	if err != nil {
		t.Fatal(err)
	}
	want, err := compiler.GenerateFile("llama.g", src, ".", "", false, compiler.Config{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("llama_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("stale generated files; run go generate ./examples/...")
	}
}

// BenchmarkEval is one evaluation of the trace's batch of 8 tokens over a
// 16-slot cache on 1 and 2 threads; examples/llama32's is the same for 32
// layers.
func BenchmarkEval(b *testing.B) {
	for _, th := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", th), func(b *testing.B) {
			m := newGGMLModel(b, th)
			defer m.Close()
			in := traceInputs(8, 8)
			for b.Loop() {
				if _, err := m.Eval(in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/eval")
		})
	}
}
