package engine_test

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/runtime/sim"
	"github.com/graphc/graphc/tensor"
)

// accModel is a hand-written model the way generated code drives a
// Driver: state acc (host memory, the cpu) accumulates the input x, state
// dev lives in sim0's memory; one split on the cpu, two pipeline copies of
// x. It embeds the Driver like a generated Model.
type accModel struct {
	engine.Driver
	sched *engine.Sched
	host  *cpu.Backend
	sim0  *sim.Backend
	buf   []byte // per slot a version of x
	state []tensor.Tensor
}

const (
	accCPU   = 0
	accSim0  = 1
	accSlots = 2
)

var (
	accStates       = []tensor.Decl{{Name: "acc", Type: tensor.F32, Ne: [4]int{4, 1, 1, 1}}, {Name: "dev", Type: tensor.F32, Ne: [4]int{4, 1, 1, 1}}}
	accStateBackend = []int{accCPU, accSim0}
	accNe           = [4]int{4, 1, 1, 1}
)

type accOutputs struct{ Acc tensor.Tensor }

func newAccModel(t *testing.T, stopped *[]string) *accModel {
	m := &accModel{}
	m.host = cpu.New(1)
	engine.OnClose(&m.Driver, func() { m.host.Close(); *stopped = append(*stopped, "cpu") })
	m.sim0 = sim.New(0, 1)
	engine.OnClose(&m.Driver, func() { m.sim0.Close(); *stopped = append(*stopped, "sim0") })
	bts := []backend.BufferType{backend.CPUBufferType, backend.Sim(0).BufferType}
	splits := []engine.SplitInfo{{Backend: accCPU, Nodes: 1, First: "acc", Last: "acc"}}
	var err error
	if m.sched, err = engine.NewSched([]engine.Backend{engine.NewHostBackend("cpu", backend.CPUBufferType), m.sim0}, bts, splits, accSlots); err != nil {
		t.Fatal(err)
	}
	x := tensor.NewTensor(tensor.F32, accNe)
	if m.buf, err = m.sched.Backend(accCPU).Alloc(accSlots * x.Span()); err != nil {
		t.Fatal(err)
	}
	if m.state, err = engine.StartDriver(&m.Driver, m.sched, accStates, accStateBackend); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// submit adds x to acc; slots records the pipeline slot it ran on.
func (m *accModel) submit(x []float32, slots *[]int) (*engine.Pending[accOutputs], error) {
	return engine.Issue(&m.Driver, func(c int) *accOutputs {
		*slots = append(*slots, c)
		in := tensor.At(m.buf, c*16, tensor.F32, accNe, tensor.ContiguousStrides(tensor.F32, accNe))
		copy(in.F32s(), x)
		m.sched.BeginSplit(0)
		m.sched.Compute(0)
		acc := &m.state[0]
		m.host.Add(acc, acc, &in)
		m.sched.Inspect(accCPU, "acc", *acc)
		m.sched.EndSplit(0)
		return &accOutputs{Acc: m.sched.Output(accCPU, acc, nil)}
	})
}

// wait waits for p and fails the test on its error.
func wait[O any](t *testing.T, p *engine.Pending[O]) *O {
	t.Helper()
	out, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDriverEvaluates(t *testing.T) {
	var stopped []string
	m := newAccModel(t, &stopped)
	var slots []int
	for k := 1; k <= 5; k++ {
		p, err := m.submit([]float32{1, 2, 3, float32(k)}, &slots)
		if err != nil {
			t.Fatal(err)
		}
		out := wait(t, p)
		if again, err := p.Wait(); !p.Done() || again != out || err != nil {
			t.Fatal("a waited evaluation is not done, or a second Wait differs")
		}
		if got, want := out.Acc.F32s(), []float32{float32(k), float32(2 * k), float32(3 * k), float32(k * (k + 1) / 2)}; !reflect.DeepEqual(got, want) {
			t.Fatalf("evaluation %d: acc %v, want %v", k, got, want)
		}
	}
	if want := []int{0, 1, 0, 1, 0}; !reflect.DeepEqual(slots, want) {
		t.Errorf("pipeline slots %v, want %v", slots, want)
	}
	if st := m.Stats(); len(st.Splits) != 1 || st.Splits[0].Backend != "cpu" || st.Splits[0].Nodes != 1 {
		t.Errorf("stats %+v", st)
	}

	// acc is in host memory: in place, and ReadState agrees.
	acc := m.State("acc")
	if acc == nil || acc.F32s()[3] != 15 {
		t.Fatalf("State(acc) = %v", acc)
	}
	if r, err := m.ReadState("acc"); err != nil || !reflect.DeepEqual(r.F32s(), acc.F32s()) {
		t.Errorf("ReadState(acc) = %v, %v; in place %v", r.F32s(), err, acc.F32s())
	}
	w := tensor.NewTensor(tensor.F32, accNe)
	copy(w.F32s(), []float32{10, 20, 30, 40})
	if err := m.WriteState("acc", w); err != nil {
		t.Fatal(err)
	}
	if p, err := m.submit([]float32{1, 1, 1, 1}, &slots); err != nil || wait(t, p).Acc.F32s()[3] != 41 {
		t.Errorf("after WriteState(acc): %v", err)
	}

	// dev is in sim0's memory: not in place, but readable and writable.
	if m.State("dev") != nil || m.State("nope") != nil {
		t.Error("State returned a device tensor or an undeclared one")
	}
	copy(w.F32s(), []float32{-1, -2, -3, -4})
	if err := m.WriteState("dev", w); err != nil {
		t.Fatal(err)
	}
	if r, err := m.ReadState("dev"); err != nil || !reflect.DeepEqual(r.F32s(), w.F32s()) {
		t.Errorf("ReadState(dev) = %v, %v; wrote %v", r.F32s(), err, w.F32s())
	}

	if _, err := m.ReadState("nope"); err == nil || !strings.Contains(err.Error(), `no state "nope"`) {
		t.Errorf("ReadState(nope): %v", err)
	}
	if err := m.WriteState("nope", w); err == nil {
		t.Error("WriteState(nope) succeeded")
	}
	if err := m.WriteState("dev", tensor.NewTensor(tensor.F32, [4]int{2, 2, 1, 1})); err == nil || !strings.Contains(err.Error(), "state dev: want") {
		t.Errorf("WriteState of the wrong shape: %v", err)
	}
	if err := m.WriteState("dev", tensor.Tensor{Type: tensor.F32, Ne: accNe}); err == nil {
		t.Error("WriteState of a tensor without data succeeded")
	}
}

func TestDriverCallbackStops(t *testing.T) {
	var stopped []string
	m := newAccModel(t, &stopped)
	var slots []int
	var seen []float32
	m.SetEvalCallback(func(name string, x *tensor.Tensor, ask bool) bool {
		if !ask {
			seen = append(seen, x.F32s()[0])
		}
		return ask // want every node, stop at the first
	})
	if p, err := m.submit([]float32{7, 0, 0, 0}, &slots); !errors.Is(err, engine.ErrStopped) || p != nil || !reflect.DeepEqual(seen, []float32{7}) {
		t.Fatalf("stopped evaluation: %v, %v, inspected %v", p, err, seen)
	}
	m.SetEvalCallback(nil)
	p, err := m.submit([]float32{1, 0, 0, 0}, &slots)
	if err != nil {
		t.Fatal(err)
	}
	if got := wait(t, p).Acc.F32s()[0]; got != 8 {
		t.Errorf("after a stop: acc[0] = %g, want 8", got)
	}
}

func TestDriverClose(t *testing.T) {
	var stopped []string
	m := newAccModel(t, &stopped)
	var slots []int
	p, err := m.submit([]float32{1, 1, 1, 1}, &slots)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	if !p.Done() {
		t.Error("Close returned with an evaluation in flight")
	}
	m.Close()
	if want := []string{"cpu", "sim0"}; !reflect.DeepEqual(stopped, want) {
		t.Errorf("backends stopped: %v, want %v once each, in order", stopped, want)
	}
	if _, err := m.submit(nil, &slots); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Issue after Close: %v", err)
	}
	if _, err := m.ReadState("acc"); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("ReadState after Close: %v", err)
	}
	if err := m.WriteState("acc", tensor.NewTensor(tensor.F32, accNe)); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("WriteState after Close: %v", err)
	}
	if len(slots) != 1 {
		t.Errorf("a closed driver issued evaluations: slots %v", slots)
	}
}

// TestDriverNotStarted: a model whose start failed before StartDriver is
// closed with the backends it started; it issues nothing.
func TestDriverNotStarted(t *testing.T) {
	var d engine.Driver
	n := 0
	engine.OnClose(&d, func() { n++ })
	if _, err := engine.Issue(&d, func(int) *accOutputs { t.Fatal("issued"); return nil }); err == nil {
		t.Error("Issue before StartDriver succeeded")
	}
	if st := d.Stats(); len(st.Splits) != 0 {
		t.Errorf("stats %+v", st)
	}
	d.SetEvalCallback(nil)
	d.Close()
	d.Close()
	if n != 1 {
		t.Errorf("stop called %d times, want 1", n)
	}
}

// TestDriverConcurrent submits from several goroutines while others read
// the state and the statistics: every evaluation counts once (run it with
// -race).
func TestDriverConcurrent(t *testing.T) {
	var stopped []string
	m := newAccModel(t, &stopped)
	var slots []int // written under the driver's lock only
	const workers, evals = 4, 25
	var wg sync.WaitGroup
	for range workers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range evals {
				p, err := m.submit([]float32{1, 0, 0, 1}, &slots)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := p.Wait(); err != nil {
					t.Error(err)
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range evals {
				if _, err := m.ReadState("acc"); err != nil {
					t.Error(err)
					return
				}
				_ = m.Stats()
			}
		}()
	}
	wg.Wait()
	r, err := m.ReadState("acc")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.F32s(), []float32{workers * evals, 0, 0, workers * evals}; !reflect.DeepEqual(got, want) {
		t.Errorf("acc %v, want %v", got, want)
	}
}

// TestDriverCallbackReenters: a callback that calls back into its model
// gets ErrReentered instead of waiting forever for the evaluation that
// called it; it may still replace itself.
func TestDriverCallbackReenters(t *testing.T) {
	var stopped []string
	m := newAccModel(t, &stopped)
	var slots []int
	var inner []error
	m.SetEvalCallback(func(name string, x *tensor.Tensor, ask bool) bool {
		_, err := m.submit([]float32{1, 0, 0, 0}, &slots)
		inner = append(inner, err)
		_, err = m.ReadState("acc")
		inner = append(inner, err)
		inner = append(inner, m.WriteState("acc", tensor.NewTensor(tensor.F32, accNe)))
		m.SetEvalCallback(nil)
		return false
	})
	done := make(chan error, 1)
	go func() {
		p, err := m.submit([]float32{2, 0, 0, 0}, &slots)
		if err == nil {
			_, err = p.Wait()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an eval callback calling its model deadlocked")
	}
	if len(inner) != 3 {
		t.Fatalf("callback ran %d times with %v", len(inner)/3, inner)
	}
	for _, err := range inner {
		if !errors.Is(err, engine.ErrReentered) {
			t.Errorf("call from the callback: %v, want ErrReentered", err)
		}
	}
	// Other goroutines are not refused while no callback runs.
	p, err := m.submit([]float32{1, 0, 0, 0}, &slots)
	if err != nil {
		t.Fatal(err)
	}
	if got := wait(t, p).Acc.F32s()[0]; got != 3 {
		t.Errorf("acc[0] = %g after the evaluations, want 3", got)
	}
}

// TestDriverKernelError: a kernel's KernelError on the issuing goroutine
// is the evaluation's error, and the model goes on.
func TestDriverKernelError(t *testing.T) {
	var stopped []string
	m := newAccModel(t, &stopped)
	_, err := engine.Issue(&m.Driver, func(c int) *accOutputs {
		m.sched.BeginSplit(0)
		m.sched.Compute(0)
		panic(&engine.KernelError{Op: "get_rows", Msg: "index 9 is not a row of the table (0..3)"})
	})
	var ke *engine.KernelError
	if !errors.As(err, &ke) || ke.Op != "get_rows" {
		t.Fatalf("Issue = %v, want the KernelError", err)
	}
	var slots []int
	p, err := m.submit([]float32{5, 0, 0, 0}, &slots)
	if err != nil {
		t.Fatal(err)
	}
	if got := wait(t, p).Acc.F32s()[0]; got != 5 {
		t.Errorf("after a kernel error: acc[0] = %g, want 5", got)
	}
}
