package llamapipe

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"sync"
	"testing"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/examples/llama"
	"github.com/graphc/graphc/internal/planview"
	"github.com/graphc/graphc/passes"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/tensor"
)

// config is the go:generate line's: sim0, sim1 and the cpu, four pipeline
// copies, layers 0-1 on sim0, layers 2-3 and the output layer on sim1.
func config(t testing.TB) compiler.Config {
	cfg := compiler.Config{Backends: []string{"sim0", "sim1", "cpu"}, Options: passes.Options{NCopies: 4}, Verify: true}
	for _, o := range []string{`blk\.[01]\.=sim0`, `cache_._l[01]=sim0`, `blk\.[23]\.=sim1`, `cache_._l[23]=sim1`, `output=sim1`} {
		r, err := compiler.ParseOverride(o)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Placement.Overrides = append(cfg.Placement.Overrides, r)
	}
	return cfg
}

func TestGeneratedUpToDate(t *testing.T) {
	src, err := os.ReadFile("../llama/llama.g")
	if err != nil {
		t.Fatal(err)
	}
	want, err := compiler.GenerateFile("../llama/llama.g", src, ".", "llamapipe", false, config(t))
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

// models returns this package's model and the CPU-only llama example's,
// with the conformance traces' weights and KV cache.
func models(t testing.TB) (*Model, *llama.Model) {
	t.Helper()
	weights := map[string]tensor.Tensor{}
	for k, w := range Weights {
		x := tensor.NewTensor(w.Type, w.Ne)
		tensor.Fill(&x, tensor.GGMLFill(k))
		weights[w.Name] = x
	}
	m, err := New(weights, 1)
	if err != nil {
		t.Fatal(err)
	}
	cpu, err := llama.New(weights, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	t.Cleanup(cpu.Close)
	for k, s := range States {
		x := tensor.NewTensor(s.Type, s.Ne)
		tensor.Fill(&x, tensor.GGMLFill(len(Weights)+k))
		if err := m.WriteState(s.Name, x); err != nil {
			t.Fatal(err)
		}
		if err := cpu.WriteState(s.Name, x); err != nil {
			t.Fatal(err)
		}
	}
	return m, cpu
}

// batch is a batch of tokens whose first goes to KV cache slot pos.
func batch(tokens []int32, pos int) *Inputs {
	positions, mask := engine.CausalBatch(len(tokens), pos)
	return &Inputs{Dims: Dims{NTokens: len(tokens), NKV: pos + len(tokens)}, InpTokens: tokens, InpPos: positions, KQMask: mask}
}

func (in *Inputs) cpu() *llama.Inputs {
	return &llama.Inputs{Dims: llama.Dims{NTokens: in.NTokens, NKV: in.NKV}, InpTokens: in.InpTokens, InpPos: in.InpPos, KQMask: in.KQMask}
}

func sameBits(t *testing.T, what string, got, want tensor.Tensor) {
	t.Helper()
	if got.Ne != want.Ne {
		t.Fatalf("%s: shape %v, cpu %v", what, got.Ne, want.Ne)
	}
	g, w := got.F32s(), want.F32s()
	for i := range w {
		if math.Float32bits(g[i]) != math.Float32bits(w[i]) {
			t.Fatalf("%s: element %d = %g, cpu %g", what, i, g[i], w[i])
		}
	}
}

// steps is a generation: a prompt of 5 tokens, then one token at a time.
func steps() []*Inputs {
	ins := []*Inputs{batch([]int32{1, 7, 3, 99, 42}, 0)}
	for pos := 5; pos < 16; pos++ {
		ins = append(ins, batch([]int32{int32(pos*37) % 128}, pos))
	}
	return ins
}

// TestMatchesCPU evaluates a generation one evaluation at a time.
func TestMatchesCPU(t *testing.T) {
	m, cpu := models(t)
	for k, in := range steps() {
		got, err := m.Eval(in)
		if err != nil {
			t.Fatal(err)
		}
		want, err := cpu.Eval(in.cpu())
		if err != nil {
			t.Fatal(err)
		}
		sameBits(t, fmt.Sprintf("step %d", k), got.ResultOutput, want.ResultOutput)
	}
	for _, s := range States {
		got, err := m.ReadState(s.Name)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := cpu.ReadState(s.Name)
		if string(got.Data) != string(want.Data) {
			t.Errorf("state %s differs from the cpu's", s.Name)
		}
	}
}

// TestPipelined submits four generations in a row before waiting for any
// of them: up to NCopies evaluations are in flight, each on its own
// pipeline slot, and the results are the serial ones. (Each generation
// starts at cache slot 0 and reads only what it wrote.)
func TestPipelined(t *testing.T) {
	m, cpu := models(t)
	var ins []*Inputs
	for g := 0; g < 4; g++ {
		ins = append(ins, steps()...)
	}
	var pending []*Pending
	inFlight := 0
	for _, in := range ins {
		p, err := m.Submit(in)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Done() {
			inFlight++
		}
		pending = append(pending, p)
	}
	if inFlight == 0 {
		t.Error("every evaluation was done when Submit returned: nothing was pipelined")
	}
	t.Logf("%d of %d evaluations still computing when Submit returned", inFlight, len(ins))
	for k, in := range ins {
		want, err := cpu.Eval(in.cpu())
		if err != nil {
			t.Fatal(err)
		}
		got, err := pending[k].Wait()
		if err != nil {
			t.Fatal(err)
		}
		sameBits(t, fmt.Sprintf("step %d", k), got.ResultOutput, want.ResultOutput)
	}
}

// TestConcurrentEval calls Eval from several goroutines at once, with
// batches whose results do not depend on the order (each starts at cache
// slot 0 and reads only its own keys and values).
func TestConcurrentEval(t *testing.T) {
	m, cpu := models(t)
	const workers, each = 6, 8
	type result struct {
		in  *Inputs
		out *Outputs
	}
	results := make(chan result, workers*each)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for i := 0; i < each; i++ {
				tokens := make([]int32, 1+r.IntN(MaxNTokens))
				for k := range tokens {
					tokens[k] = int32(r.IntN(128))
				}
				in := batch(tokens, 0)
				out, err := m.Eval(in)
				if err != nil {
					t.Error(err)
					return
				}
				results <- result{in, out}
			}
		}()
	}
	wg.Wait()
	close(results)
	n := 0
	for r := range results {
		want, err := cpu.Eval(r.in.cpu())
		if err != nil {
			t.Fatal(err)
		}
		sameBits(t, fmt.Sprintf("tokens %v", r.in.InpTokens), r.out.ResultOutput, want.ResultOutput)
		n++
	}
	if n != workers*each {
		t.Errorf("%d results, want %d", n, workers*each)
	}
}

// TestStats: at the dims' bounds an evaluation copies exactly the plan's
// bytes_copied_per_eval, split by split.
func TestStats(t *testing.T) {
	src, err := os.ReadFile("../llama/llama.g")
	if err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Compile("../llama/llama.g", src, config(t))
	if err != nil {
		t.Fatal(err)
	}
	plan := planview.JSON(res.Graph)
	m, _ := models(t)
	tokens := make([]int32, MaxNTokens)
	for k := range tokens {
		tokens[k] = int32(k * 11)
	}
	for i := 0; i < 3; i++ {
		if _, err := m.Eval(batch(tokens, MaxNKV-MaxNTokens)); err != nil {
			t.Fatal(err)
		}
		st := m.Stats()
		if st.BytesCopied != plan.BytesCopiedPerEval {
			t.Errorf("copied %d bytes, the plan %d", st.BytesCopied, plan.BytesCopiedPerEval)
		}
		if len(st.Splits) != len(plan.Splits) {
			t.Fatalf("%d splits in the statistics, %d in the plan", len(st.Splits), len(plan.Splits))
		}
		for k, sp := range plan.Splits {
			var bytes int64
			for _, in := range sp.Inputs {
				bytes += in.Bytes
			}
			got := st.Splits[k]
			if got.Backend != sp.Backend || got.BytesCopied != bytes || got.Inputs != len(sp.Inputs) || got.First != sp.First {
				t.Errorf("split %d: %+v, plan %s from %s with %d inputs, %d bytes", k, got, sp.Backend, sp.First, len(sp.Inputs), bytes)
			}
		}
		if st.Wall <= 0 {
			t.Errorf("wall time %v", st.Wall)
		}
	}
	t.Logf("\n%s", m.Stats())
}

// TestEvalCallback inspects tensors computed on each backend: the values
// are the CPU-only model's; and a callback can stop an evaluation.
func TestEvalCallback(t *testing.T) {
	m, cpu := models(t)
	watch := regexp.MustCompile(`^(inp_embd|kq_soft_max-1|k_cache_cpy-2|norm_out|result_output)$`)
	collect := func(into map[string]tensor.Tensor) engine.EvalCallback {
		return func(name string, x *tensor.Tensor, ask bool) bool {
			if ask {
				return watch.MatchString(name)
			}
			into[name] = tensor.Clone(x)
			return true
		}
	}
	got, want := map[string]tensor.Tensor{}, map[string]tensor.Tensor{}
	m.SetEvalCallback(collect(got))
	cpu.SetEvalCallback(collect(want))
	in := batch([]int32{5, 6, 7}, 0)
	if _, err := m.Eval(in); err != nil {
		t.Fatal(err)
	}
	if _, err := cpu.Eval(in.cpu()); err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Errorf("inspected %d tensors, want 5", len(got))
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("%s not inspected", name)
			continue
		}
		if w.Type == tensor.F32 {
			sameBits(t, name, g, w)
		} else if string(g.Data) != string(w.Data) {
			t.Errorf("%s differs from the cpu's", name)
		}
	}

	// Stop at a node on sim1: the evaluation ends with ErrStopped and the
	// model goes on working.
	seen := 0
	m.SetEvalCallback(func(name string, _ *tensor.Tensor, ask bool) bool {
		if ask {
			return name == "ffn_out-2"
		}
		seen++
		return false
	})
	if _, err := m.Eval(in); !errors.Is(err, engine.ErrStopped) || seen != 1 {
		t.Fatalf("stopped evaluation: err %v, %d calls", err, seen)
	}
	m.SetEvalCallback(nil)
	cpu.SetEvalCallback(nil)
	out, err := m.Eval(in)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := cpu.Eval(in.cpu())
	sameBits(t, "after a stop", out.ResultOutput, w.ResultOutput)
}

// TestStateOnDevices: the KV cache of layers 0-3 lives on the simulated
// devices, not in host memory.
func TestStateOnDevices(t *testing.T) {
	m, _ := models(t)
	if m.State("cache_k_l0") != nil {
		t.Error("State returned device memory")
	}
	x := tensor.NewTensor(States[0].Type, States[0].Ne)
	for i := range x.F16s() {
		x.F16s()[i] = uint16(i)
	}
	if err := m.WriteState(States[0].Name, x); err != nil {
		t.Fatal(err)
	}
	got, err := m.ReadState(States[0].Name)
	if err != nil || string(got.Data) != string(x.Data) {
		t.Errorf("state round trip: %v", err)
	}
	if err := m.WriteState("nope", x); err == nil {
		t.Error("WriteState of an unknown state")
	}
}
