package cpu_test

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/tensor"
)

func TestThreads(t *testing.T) {
	b := cpu.New(3)
	defer b.Close()
	if b.Threads() != 3 {
		t.Errorf("Threads() = %d, want 3", b.Threads())
	}
	d := cpu.New(0)
	defer d.Close()
	if d.Threads() != runtime.GOMAXPROCS(0) {
		t.Errorf("New(0).Threads() = %d, want GOMAXPROCS %d", d.Threads(), runtime.GOMAXPROCS(0))
	}
}

// TestCloseStopsWorkers: Close leaves no goroutine behind, whether the
// workers were spinning, parked or never used.
func TestCloseStopsWorkers(t *testing.T) {
	before := runtime.NumGoroutine()
	r := rand.New(rand.NewPCG(1, 1))
	a := mk(r, tensor.F32, [4]int{64, 8, 1, 1}, dense)
	defer cpu.SetMinWork(1)()
	for i := 0; i < 20; i++ {
		b := cpu.New(4)
		if i%2 == 0 {
			b.Scale(a.Tensor, a.Tensor, ops.ScaleParams{S: 1})
		}
		if i%5 == 0 {
			time.Sleep(5 * time.Millisecond) // let the workers park
			b.Scale(a.Tensor, a.Tensor, ops.ScaleParams{S: 1})
		}
		b.Close()
		b.Close() // idempotent
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before New", n, before)
	}
}

// TestParkedWorkersWake: ops keep working after the workers have parked.
func TestParkedWorkersWake(t *testing.T) {
	defer cpu.SetMinWork(1)()
	b := cpu.New(3)
	defer b.Close()
	r := rand.New(rand.NewPCG(1, 2))
	a := mk(r, tensor.F32, [4]int{16, 9, 1, 1}, dense)
	for i := 0; i < 3; i++ {
		time.Sleep(20 * time.Millisecond)
		d := mkOut(r, tensor.F32, a.Ne, dense)
		b.Scale(d.Tensor, a.Tensor, ops.ScaleParams{S: 2})
		want := a.values()
		for k := range want {
			want[k] *= 2
		}
		expectClose(t, d, want, exact)
	}
}

func TestBugPanics(t *testing.T) {
	b := cpu.New(2)
	defer b.Close()
	r := rand.New(rand.NewPCG(1, 3))
	a := mk(r, tensor.F32, [4]int{8, 4, 1, 1}, dense)
	x := mk(r, tensor.F32, [4]int{3, 4, 1, 1}, dense)
	d := mk(r, tensor.F32, [4]int{4, 4, 1, 1}, dense)
	i := mk(r, tensor.I32, [4]int{2, 1, 1, 1}, dense)
	const bug = "BUG: "
	expectPanic(t, bug, func() { b.Add(a.Tensor, a.Tensor, x.Tensor) })                        // 3 does not divide 8
	expectPanic(t, bug, func() { b.MulMat(d.Tensor, a.Tensor, x.Tensor, ops.MulMatParams{}) }) // K mismatch
	expectPanic(t, bug, func() { b.Relu(d.Tensor, a.Tensor) })                                 // shapes
	expectPanic(t, bug, func() { b.Cpy(d.Tensor, a.Tensor) })                                  // counts
	expectPanic(t, bug, func() { b.SoftMax(a.Tensor, a.Tensor, x.Tensor, ops.SoftMaxParams{Scale: 1, MaxBias: 0}) })
	a3 := mk(r, tensor.F32, [4]int{8, 1, 3, 1}, dense)
	expectPanic(t, bug, func() { b.Rope(a3.Tensor, a3.Tensor, i.Tensor, nil, ops.RopeParams{NDims: 8}) }) // pos too short
	expectPanic(t, bug, func() { b.Rope(a.Tensor, a.Tensor, i.Tensor, nil, ops.RopeParams{NDims: 8, Mode: 8}) })
	expectPanic(t, bug, func() { b.RMSNorm(i.Tensor, i.Tensor, ops.NormParams{Eps: 1e-5}) })
	short := *a.Tensor
	short.Data = short.Data[:len(short.Data)-4]
	expectPanic(t, bug, func() { b.Scale(&short, &short, ops.ScaleParams{S: 1}) })
	// an index out of range, found by a worker, comes back to the caller
	// as the values' fault (a KernelError), not a bug
	defer cpu.SetMinWork(1)()
	table := mk(r, tensor.F32, [4]int{4, 3, 1, 1}, dense)
	idx := mk(r, tensor.I32, [4]int{2, 1, 1, 1}, dense)
	idx.set(1, 7)
	rows := mk(r, tensor.F32, [4]int{4, 2, 1, 1}, dense)
	func() {
		defer func() {
			if e, ok := recover().(*engine.KernelError); !ok || e.Error() != "get_rows: index 7 is not a row of the table (0..2)" {
				t.Errorf("GetRows with index 7 of 3 rows: panic %v, want a KernelError", e)
			}
		}()
		b.GetRows(rows.Tensor, table.Tensor, idx.Tensor)
	}()
	// and the backend still works
	idx.set(1, 2)
	b.GetRows(rows.Tensor, table.Tensor, idx.Tensor)
}

// TestDroppedBackendStopsWorkers: a Backend that becomes unreachable without
// Close still stops its workers once collected.
func TestDroppedBackendStopsWorkers(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		defer cpu.SetMinWork(1)()
		b := cpu.New(3)
		r := rand.New(rand.NewPCG(1, 4))
		a := mk(r, tensor.F32, [4]int{64, 8, 1, 1}, dense)
		b.Scale(a.Tensor, a.Tensor, ops.ScaleParams{S: 1})
	}()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after dropping the Backend, %d before", n, before)
	}
}

// TestNoAllocs: once scratch is sized, kernels allocate nothing, inline or
// dispatched.
func TestNoAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 5))
	a := mk(r, tensor.F32, [4]int{64, 16, 2, 1}, dense)
	w := mk(r, tensor.F16, [4]int{64, 16, 1, 1}, dense)
	d := mk(r, tensor.F32, [4]int{64, 16, 2, 1}, dense)
	mm := mk(r, tensor.F32, [4]int{16, 16, 2, 1}, dense)
	pos := mk(r, tensor.I32, [4]int{2, 1, 1, 1}, dense)
	p := ops.RopeParams{NDims: 64, FreqBase: 10000, FreqScale: 1, AttnFactor: 1}
	for _, split := range []bool{false, true} {
		if split {
			defer cpu.SetMinWork(1)()
		}
		b := cpu.New(2)
		ops := func() {
			b.MulMat(mm.Tensor, w.Tensor, a.Tensor, ops.MulMatParams{})
			b.Add(d.Tensor, a.Tensor, a.Tensor)
			b.Silu(d.Tensor, a.Tensor)
			b.RMSNorm(d.Tensor, a.Tensor, ops.NormParams{Eps: 1e-5})
			b.SoftMax(d.Tensor, a.Tensor, nil, ops.SoftMaxParams{Scale: 1, MaxBias: 0})
			b.Rope(d.Tensor, a.Tensor, pos.Tensor, nil, p)
			b.Cpy(d.Tensor, a.Tensor)
		}
		ops()
		if n := testing.AllocsPerRun(20, ops); n != 0 {
			t.Errorf("split=%v: %v allocations per run of the ops", split, n)
		}
		b.Close()
	}
}
