package llama

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/graphc/graphc/tensor"
)

// newFilledWeights builds the model on the given number of threads (0:
// every core) with the traces' weights: the k-th weight holds
// (float)(sin(i*0.01 + k)*0.1); the KV cache starts empty.
func newFilledWeights(t testing.TB, threads int) *Model {
	weights := map[string]tensor.Tensor{}
	for k, w := range Weights {
		x := tensor.NewTensor(w.Type, w.Ne)
		tensor.Fill(&x, tensor.GGMLFill(k))
		weights[w.Name] = x
	}
	m, err := New(weights, threads)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDecodeMatchesBatch checks the KV cache: logits of a token decoded
// alone, reading its predecessors' keys and values from the cache, equal
// the logits of the same token in one batch with them.
func TestDecodeMatchesBatch(t *testing.T) {
	tokens := []int32{5, 17, 99, 3, 42, 7}
	inc := newFilledWeights(t, 0)
	defer inc.Close()
	if _, err := inc.Eval(batch(tokens[:4], 0)); err != nil {
		t.Fatal(err)
	}
	var last *Outputs
	for pos := 4; pos < len(tokens); pos++ {
		out, err := inc.Eval(batch(tokens[pos:pos+1], pos))
		if err != nil {
			t.Fatal(err)
		}
		last = out
	}
	full := newFilledWeights(t, 0)
	defer full.Close()
	all, err := full.Eval(batch(tokens, 0))
	if err != nil {
		t.Fatal(err)
	}
	vocab := all.ResultOutput.Ne[0]
	want := all.ResultOutput.F32s()[(len(tokens)-1)*vocab:]
	for i, w := range want {
		if d := math.Abs(float64(last.ResultOutput.F32s()[i] - w)); d > 1e-5 {
			t.Fatalf("logit %d: decoded %g, batch %g", i, last.ResultOutput.F32s()[i], w)
		}
	}
}

func TestGenerate(t *testing.T) {
	m := newFilledWeights(t, 0)
	defer m.Close()
	var emitted []int32
	got, err := m.Generate([]int32{1, 2, 3}, 5, func(t int32) bool {
		emitted = append(emitted, t)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || len(emitted) != 5 {
		t.Fatalf("generated %v, emitted %v", got, emitted)
	}
	// Greedy decoding is deterministic: a second model says the same.
	m2 := newFilledWeights(t, 0)
	defer m2.Close()
	again, err := m2.Generate([]int32{1, 2, 3}, 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != again[i] {
			t.Fatalf("run 1 %v, run 2 %v", got, again)
		}
	}
	// emit returning false stops generation at that token.
	m4 := newFilledWeights(t, 0)
	defer m4.Close()
	calls := 0
	short, err := m4.Generate([]int32{1, 2, 3}, 5, func(int32) bool {
		calls++
		return calls < 2
	})
	if err != nil || fmt.Sprint(short) != fmt.Sprint(got[:2]) || calls != 2 {
		t.Errorf("stopping after 2 tokens: generated %v (%v) after %d calls; want %v", short, err, calls, got[:2])
	}
	m3 := newFilledWeights(t, 0)
	defer m3.Close()
	if _, err := m3.Generate(make([]int32, 10), 7, nil); err == nil || !strings.Contains(err.Error(), "need 17 KV cache slots; the cache has 16") {
		t.Errorf("beyond the cache: %v", err)
	}
}
