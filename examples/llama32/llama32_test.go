package llama32

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/tensor"
)

// newModel builds the model with the traces' fill rule: the k-th declared
// weight or state tensor holds (float)(sin(i*0.01 + k)*0.1).
func newModel(tb testing.TB, threads int) *Model {
	weights := map[string]tensor.Tensor{}
	for k, w := range Weights {
		x := tensor.NewTensor(w.Type, w.Ne)
		tensor.Fill(&x, tensor.GGMLFill(k))
		weights[w.Name] = x
	}
	m, err := New(weights, threads)
	if err != nil {
		tb.Fatal(err)
	}
	for k := range States {
		tensor.Fill(&m.state[k], tensor.GGMLFill(len(Weights)+k))
	}
	return m
}

// batch is a batch of nTokens tokens ending at cache slot nKV, as in the
// llama example's trace: token ids (t·7+3) mod 128, positions from
// nKV-nTokens, a causal mask.
func batch(nTokens, nKV int) *Inputs {
	in := &Inputs{Dims: Dims{NTokens: nTokens, NKV: nKV}}
	for t := 0; t < nTokens; t++ {
		in.InpTokens = append(in.InpTokens, int32((t*7+3)%128))
		in.InpPos = append(in.InpPos, int32(nKV-nTokens+t))
		for j := 0; j < nKV; j++ {
			v := float32(0)
			if j > nKV-nTokens+t {
				v = float32(math.Inf(-1))
			}
			in.KQMask = append(in.KQMask, v)
		}
	}
	return in
}

// TestThreadsAgree: the logits are finite and the same on 1 and 2 threads
// (every kernel's chunks are independent of the thread count).
func TestThreadsAgree(t *testing.T) {
	var logits [][]float32
	for _, th := range []int{1, 2} {
		m := newModel(t, th)
		out, err := m.Eval(batch(8, 16))
		m.Close()
		if err != nil {
			t.Fatal(err)
		}
		logits = append(logits, out.ResultOutput.F32s())
	}
	for i, v := range logits[0] {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("logit %d = %v", i, v)
		}
		if d := math.Abs(float64(v - logits[1][i])); d > 1e-5 {
			t.Fatalf("logit %d: %v on 1 thread, %v on 2", i, v, logits[1][i])
		}
	}
}

func TestGeneratedUpToDate(t *testing.T) {
	src, err := os.ReadFile("llama32.g")
	if err != nil {
		t.Fatal(err)
	}
	want, err := compiler.GenerateFile("llama32.g", src, ".", "", false, compiler.Config{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("llama32_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("stale generated files; run go generate ./examples/...")
	}
}

// BenchmarkEval is one evaluation of a batch of 8 tokens over a 16-slot
// cache on 1 and 2 threads. Target: at most 0.8 ms on 2 threads (ggml: 1.6 ms).
func BenchmarkEval(b *testing.B) {
	for _, th := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", th), func(b *testing.B) {
			m := newModel(b, th)
			defer m.Close()
			in := batch(8, 16)
			for b.Loop() {
				if _, err := m.Eval(in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/eval")
		})
	}
}

// TestEvalAllocs: an evaluation allocates only its outputs and bookkeeping
// (a few objects), not one per node: the generated code's tensors stay on
// its stack.
func TestEvalAllocs(t *testing.T) {
	for _, th := range []int{1, 2} {
		m := newModel(t, th)
		in := batch(8, 16)
		n := testing.AllocsPerRun(50, func() {
			if _, err := m.Eval(in); err != nil {
				t.Fatal(err)
			}
		})
		m.Close()
		if n > 20 {
			t.Errorf("threads=%d: %v allocations per evaluation, want at most 20", th, n)
		}
	}
}

// TestEvalCallbackRegions: with parallel regions the eval callback still
// sees every computed node, in order, with the values a single thread
// computes, and can stop the evaluation.
func TestEvalCallbackRegions(t *testing.T) {
	type seen struct {
		names  []string
		values map[string][]float32
	}
	record := func(threads int, stopAt string) (seen, error) {
		s := seen{values: map[string][]float32{}}
		m := newModel(t, threads)
		defer m.Close()
		m.SetEvalCallback(func(name string, x *tensor.Tensor, ask bool) bool {
			if ask {
				return true
			}
			s.names = append(s.names, name)
			if x.Type == tensor.F32 {
				s.values[name] = slices.Clone(x.F32s())
			}
			return name != stopAt
		})
		_, err := m.Eval(batch(8, 16))
		return s, err
	}
	one, err := record(1, "")
	if err != nil {
		t.Fatal(err)
	}
	two, err := record(2, "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(one.names, two.names) || len(one.names) < 32*20 {
		t.Fatalf("%d nodes reported on 1 thread, %d on 2 (or out of order)", len(one.names), len(two.names))
	}
	for name, want := range one.values {
		for i, v := range two.values[name] {
			if d := math.Abs(float64(v - want[i])); d > 1e-5 {
				t.Fatalf("%s[%d]: %v on 1 thread, %v on 2", name, i, want[i], v)
			}
		}
	}
	stopped, err := record(2, "kq-3")
	if !errors.Is(err, engine.ErrStopped) || stopped.names[len(stopped.names)-1] != "kq-3" {
		t.Fatalf("stopping at kq-3: %v, last node %q", err, stopped.names[len(stopped.names)-1])
	}
}

// TestEmptyBatch: a batch of no tokens evaluates to no logits, with and
// without the parallel regions' parts.
func TestEmptyBatch(t *testing.T) {
	for _, th := range []int{1, 2} {
		m := newModel(t, th)
		out, err := m.Eval(batch(0, 8))
		m.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := out.ResultOutput.Ne; got != [4]int{128, 0, 1, 1} {
			t.Errorf("threads=%d: logits of shape %v", th, got)
		}
	}
}
