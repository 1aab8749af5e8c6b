package llamarpc

import (
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/examples/llama"
	"github.com/graphc/graphc/passes"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/runtime/rpc"
	"github.com/graphc/graphc/runtime/rpc/rpctest"
	"github.com/graphc/graphc/tensor"
)

// config is the go:generate line's: rpc0, rpc1 and the cpu, four pipeline
// copies, layers 0-1 on rpc0, layers 2-3 and the output layer on rpc1.
func config(t testing.TB) compiler.Config {
	cfg := compiler.Config{Backends: []string{"rpc0", "rpc1", "cpu"}, Options: passes.Options{NCopies: 4}, Verify: true}
	for _, o := range []string{`blk\.[01]\.=rpc0`, `cache_._l[01]=rpc0`, `blk\.[23]\.=rpc1`, `cache_._l[23]=rpc1`, `output=rpc1`} {
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
	want, err := compiler.GenerateFile("../llama/llama.g", src, ".", "llamarpc", false, config(t))
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

// faultTimeout is $GRAPHC_RPC_TIMEOUT in these tests: what a hang would
// last. A dead server is noticed at once (the connection resets), well
// within it.
const faultTimeout = 5 * time.Second

// servers starts two ggml rpc-servers and binds rpc0 and rpc1 to them.
func servers(t *testing.T) (*rpctest.Server, *rpctest.Server) {
	t.Helper()
	s0, s1 := rpctest.Start(t), rpctest.Start(t)
	t.Setenv("GRAPHC_RPC_TIMEOUT", faultTimeout.String())
	rpc.SetEndpoints([]string{s0.Endpoint, s1.Endpoint})
	t.Cleanup(func() { rpc.SetEndpoints(nil) })
	return s0, s1
}

// weights are the conformance traces' weights.
func weights() map[string]tensor.Tensor {
	w := map[string]tensor.Tensor{}
	for k, d := range Weights {
		x := tensor.NewTensor(d.Type, d.Ne)
		tensor.Fill(&x, tensor.GGMLFill(k))
		w[d.Name] = x
	}
	return w
}

// newModel makes this package's model on the bound servers, with the
// traces' KV cache.
func newModel(t *testing.T) (*Model, error) {
	m, err := New(weights(), 1)
	if err != nil {
		return nil, err
	}
	t.Cleanup(m.Close)
	for k, s := range States {
		x := tensor.NewTensor(s.Type, s.Ne)
		tensor.Fill(&x, tensor.GGMLFill(len(Weights)+k))
		if err := m.WriteState(s.Name, x); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// cpuModel is the CPU-only llama example with the same weights and cache.
func cpuModel(t *testing.T) *llama.Model {
	cpu, err := llama.New(weights(), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cpu.Close)
	for k, s := range llama.States {
		x := tensor.NewTensor(s.Type, s.Ne)
		tensor.Fill(&x, tensor.GGMLFill(len(llama.Weights)+k))
		if err := cpu.WriteState(s.Name, x); err != nil {
			t.Fatal(err)
		}
	}
	return cpu
}

// batch is a batch of tokens whose first goes to KV cache slot pos.
func batch(tokens []int32, pos int) *Inputs {
	positions, mask := engine.CausalBatch(len(tokens), pos)
	return &Inputs{Dims: Dims{NTokens: len(tokens), NKV: pos + len(tokens)}, InpTokens: tokens, InpPos: positions, KQMask: mask}
}

func (in *Inputs) cpu() *llama.Inputs {
	return &llama.Inputs{Dims: llama.Dims{NTokens: in.NTokens, NKV: in.NKV}, InpTokens: in.InpTokens, InpPos: in.InpPos, KQMask: in.KQMask}
}

// steps is a generation: a prompt of 5 tokens, then one token at a time.
func steps() []*Inputs {
	ins := []*Inputs{batch([]int32{1, 7, 3, 99, 42}, 0)}
	for pos := 5; pos < 16; pos++ {
		ins = append(ins, batch([]int32{int32(pos*37) % 128}, pos))
	}
	return ins
}

// within fails t when got and want differ by more than 1e-5 anywhere:
// ggml's kernels on the servers are not graphc's, so not bit for bit.
func within(t *testing.T, what string, got, want tensor.Tensor) float64 {
	t.Helper()
	if got.Ne != want.Ne {
		t.Fatalf("%s: shape %v, cpu %v", what, got.Ne, want.Ne)
	}
	worst := 0.0
	g, w := got.F32s(), want.F32s()
	for i := range w {
		d := math.Abs(float64(g[i]) - float64(w[i]))
		if !(d <= 1e-5) {
			t.Fatalf("%s: element %d = %g, cpu %g", what, i, g[i], w[i])
		}
		worst = max(worst, d)
	}
	return worst
}

// TestPipelinedMatchesCPU submits four generations in a row before
// waiting for any: up to four evaluations in flight over the two servers,
// each on its own pipeline slot, and every result is the CPU's within
// 1e-5. (Each generation starts at cache slot 0 and reads only what it
// wrote.)
func TestPipelinedMatchesCPU(t *testing.T) {
	servers(t)
	m, err := newModel(t)
	if err != nil {
		t.Fatal(err)
	}
	cpu := cpuModel(t)
	var ins []*Inputs
	for range 4 {
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
	t.Logf("%d of %d evaluations still computing when Submit returned", inFlight, len(ins))
	worst := 0.0
	for k, in := range ins {
		want, err := cpu.Eval(in.cpu())
		if err != nil {
			t.Fatal(err)
		}
		got, err := pending[k].Wait()
		if err != nil {
			t.Fatal(err)
		}
		worst = max(worst, within(t, fmt.Sprintf("evaluation %d", k), got.ResultOutput, want.ResultOutput))
	}
	st := m.Stats()
	t.Logf("logits within %g of the cpu's; last evaluation:\n%s", worst, st)
	for _, sp := range st.Splits {
		if strings.HasPrefix(sp.Backend, "rpc") && sp.RoundTrips == 0 && sp.WireBytes == 0 {
			t.Errorf("split on %s moved nothing on the wire", sp.Backend)
		}
	}
}

// failsWithin runs f and wants it to return an error within d.
func failsWithin(t *testing.T, what string, d time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- f() }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		t.Logf("%s: %v after %v", what, err, time.Since(start).Round(time.Millisecond))
		return err
	case <-time.After(d):
		t.Fatalf("%s: still waiting after %v", what, d)
	}
	return nil
}

// TestServerKilledBetween: rpc1's server killed between evaluations makes
// the next evaluation fail at once with an error naming rpc1 and its
// endpoint, and every later one too (the server's memory, weights and
// cache, is gone); Close returns; a new model works once a server is back
// at the endpoint.
func TestServerKilledBetween(t *testing.T) {
	_, s1 := servers(t)
	m, err := newModel(t)
	if err != nil {
		t.Fatal(err)
	}
	cpu := cpuModel(t)
	in := batch([]int32{1, 7, 3}, 0)
	want, err := cpu.Eval(in.cpu())
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Eval(in)
	if err != nil {
		t.Fatal(err)
	}
	within(t, "before the kill", got.ResultOutput, want.ResultOutput)

	s1.Kill()
	err = failsWithin(t, "Eval after the kill", faultTimeout/2, func() error { _, err := m.Eval(in); return err })
	if !strings.Contains(err.Error(), "rpc1") || !strings.Contains(err.Error(), s1.Endpoint) {
		t.Errorf("the error names neither rpc1 nor %s: %v", s1.Endpoint, err)
	}
	failsWithin(t, "the next Eval", faultTimeout/2, func() error { _, err := m.Eval(in); return err })
	closed := make(chan struct{})
	go func() { m.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(faultTimeout / 2):
		t.Fatal("Close still waiting")
	}

	bin, _ := rpctest.Binary()
	back, err := rpctest.StartAt(bin, s1.Endpoint)
	if err != nil {
		t.Fatalf("restarting the server at %s: %v", s1.Endpoint, err)
	}
	t.Cleanup(back.Kill)
	m2, err := newModel(t)
	if err != nil {
		t.Fatalf("a new model with the server back: %v", err)
	}
	got, err = m2.Eval(in)
	if err != nil {
		t.Fatal(err)
	}
	within(t, "a new model", got.ResultOutput, want.ResultOutput)
}

// TestServerKilledDuring: rpc0's server killed while evaluations stream
// through the pipeline (up to four in flight, so the kill lands while the
// servers compute or move data) ends the stream with an error within a
// bounded time: every Submit and Wait returns, none hangs or panics.
func TestServerKilledDuring(t *testing.T) {
	s0, _ := servers(t)
	m, err := newModel(t)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		pending []*Pending
		ok      int
	)
	stopped := make(chan error, 1)
	go func() {
		for {
			p, err := m.Submit(batch([]int32{1, 7, 3, 99, 42, 5, 6, 8}, 0))
			if err != nil {
				stopped <- err
				return
			}
			mu.Lock()
			pending = append(pending, p)
			// Wait for the oldest beyond the pipeline's four, as a
			// server of requests would.
			var oldest *Pending
			if len(pending) > 4 {
				oldest, pending = pending[0], pending[1:]
			}
			mu.Unlock()
			if oldest != nil {
				if _, err := oldest.Wait(); err != nil {
					stopped <- err
					return
				}
				mu.Lock()
				ok++
				mu.Unlock()
			}
		}
	}()
	time.Sleep(500 * time.Millisecond)
	mu.Lock()
	before := ok
	mu.Unlock()
	if before == 0 {
		t.Fatal("no evaluation finished in 500 ms")
	}
	s0.Kill()
	start := time.Now()
	select {
	case err := <-stopped:
		t.Logf("%d evaluations done before the kill; the stream stopped %v after it: %v", before, time.Since(start).Round(time.Millisecond), err)
		if !strings.Contains(err.Error(), "rpc0") || !strings.Contains(err.Error(), s0.Endpoint) {
			t.Errorf("the error names neither rpc0 nor %s: %v", s0.Endpoint, err)
		}
	case <-time.After(faultTimeout / 2):
		t.Fatal("evaluations still going, or hung, after the server was killed")
	}
	mu.Lock()
	left := pending
	mu.Unlock()
	for k, p := range left {
		failsWithin(t, fmt.Sprintf("Wait of in-flight evaluation %d", k), faultTimeout/2, func() error { _, err := p.Wait(); return err })
	}
}

// TestServerBusy: ggml's rpc-server serves one client at a time and
// leaves the next connected but unanswered until the first disconnects.
// A model whose server is busy with another client (here a bare
// connection, as another program's would be) waits for it, up to
// $GRAPHC_RPC_TIMEOUT: it is made once the other client goes within that
// time, and fails with an error saying the server may be busy after it.
// (Models in one process share one connection per server, so they are
// never each other's other client.)
func TestServerBusy(t *testing.T) {
	s0, _ := servers(t)
	t.Setenv("GRAPHC_RPC_TIMEOUT", "1s")
	other, err := rpc.Dial(s0.Endpoint, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = newModel(t)
	if err == nil {
		t.Fatal("a model was made while its server served another client")
	}
	if d := time.Since(start); d > faultTimeout {
		t.Errorf("the busy server's error took %v", d)
	}
	if !strings.Contains(err.Error(), "another client") || !strings.Contains(err.Error(), s0.Endpoint) {
		t.Errorf("the error does not say %s may be busy: %v", s0.Endpoint, err)
	}
	t.Logf("busy server: %v after %v", err, time.Since(start).Round(time.Millisecond))
	other.Close()

	// The other client leaves while the model waits: the model is made.
	t.Setenv("GRAPHC_RPC_TIMEOUT", faultTimeout.String())
	other, err = rpc.Dial(s0.Endpoint, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(300 * time.Millisecond); other.Close() }()
	m, err := newModel(t)
	if err != nil {
		t.Fatalf("the other client left within the timeout: %v", err)
	}
	if _, err := m.Eval(batch([]int32{1, 2}, 0)); err != nil {
		t.Fatal(err)
	}
}
