package sim_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/runtime/sim"
	"github.com/graphc/graphc/tensor"
)

// simHost is a host tensor with random contents.
func simHost(r *rand.Rand, typ tensor.DType, ne [4]int) tensor.Tensor {
	t := tensor.NewTensor(typ, ne)
	tensor.Fill(&t, func(i int, _ [4]int) float64 {
		if typ == tensor.I32 {
			return float64(r.IntN(ne[0]))
		}
		return r.Float64()*2 - 1
	})
	return t
}

// simPair is one tensor on the CPU and its copy on a simulated device.
type simPair struct {
	host tensor.Tensor // in host memory: the CPU backend computes here
	dev  tensor.Tensor // a handle into the device's memory
}

func simUpload(t *testing.T, s *sim.Backend, h tensor.Tensor) *simPair {
	t.Helper()
	mem, err := s.Alloc(h.Span())
	if err != nil {
		t.Fatal(err)
	}
	d := tensor.Tensor{Type: h.Type, Ne: h.Ne, Nb: h.Nb, Data: mem}
	s.SetTensor(&d, &h)
	return &simPair{host: h, dev: d}
}

func (p *simPair) get(s *sim.Backend) tensor.Tensor {
	out := tensor.Tensor{Type: p.host.Type, Ne: p.host.Ne, Nb: p.host.Nb, Data: tensor.NewBuffer(p.host.Span())}
	s.GetTensor(&out, &p.dev)
	return out
}

// TestSimMatchesCPU runs every op's kernel on the CPU and on a simulated
// device and wants the same bits.
func TestSimMatchesCPU(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	c := cpu.New(2)
	defer c.Close()
	s := sim.New(0, 2)
	defer s.Close()
	in := func(typ tensor.DType, ne ...int) *simPair {
		var n [4]int
		for i := range n {
			n[i] = 1
		}
		copy(n[:], ne)
		return simUpload(t, s, simHost(r, typ, n))
	}
	a, b := in(tensor.F32, 64, 48, 2), in(tensor.F32, 64, 48, 2)
	w16 := in(tensor.F16, 64, 40)
	x := in(tensor.F32, 64, 9)
	rows := in(tensor.F32, 16, 48, 2)
	mask := in(tensor.F32, 16, 48)
	pos := in(tensor.I32, 2)
	idx := in(tensor.I32, 5)
	out := func(typ tensor.DType, ne ...int) *simPair { return in(typ, ne...) }

	// Each step calls its op's kernel, as the op table names it, on dst,
	// srcs (nil: an optional source left out) and params.
	type step struct {
		op      ops.Op
		variant string
		dst     *simPair
		srcs    []*simPair
		params  []any
	}
	rope := ops.RopeParams{NDims: 16, FreqBase: 10000, FreqScale: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}
	steps := []step{
		{ops.MulMat, "f32", out(tensor.F32, 48, 48, 2), []*simPair{a, b}, []any{ops.MulMatParams{}}},
		{ops.MulMat, "f16", out(tensor.F32, 40, 9), []*simPair{w16, x}, []any{ops.MulMatParams{}}},
		{ops.Add, "", out(tensor.F32, 64, 48, 2), []*simPair{a, b}, nil},
		{ops.Sub, "", out(tensor.F32, 64, 48, 2), []*simPair{a, b}, nil},
		{ops.Mul, "", out(tensor.F32, 64, 48, 2), []*simPair{a, b}, nil},
		{ops.Div, "", out(tensor.F32, 64, 48, 2), []*simPair{a, b}, nil},
		{ops.Scale, "", out(tensor.F32, 64, 48, 2), []*simPair{a}, []any{ops.ScaleParams{S: 0.3}}},
		{ops.Relu, "", out(tensor.F32, 64, 48, 2), []*simPair{a}, nil},
		{ops.Gelu, "", out(tensor.F32, 64, 48, 2), []*simPair{a}, nil},
		{ops.Silu, "", out(tensor.F32, 64, 48, 2), []*simPair{a}, nil},
		{ops.Tanh, "", out(tensor.F32, 64, 48, 2), []*simPair{a}, nil},
		{ops.Sigmoid, "", out(tensor.F32, 64, 48, 2), []*simPair{a}, nil},
		{ops.RMSNorm, "", out(tensor.F32, 64, 48, 2), []*simPair{a}, []any{ops.NormParams{Eps: 1e-5}}},
		{ops.Norm, "", out(tensor.F32, 64, 48, 2), []*simPair{a}, []any{ops.NormParams{Eps: 1e-5}}},
		{ops.SoftMax, "", out(tensor.F32, 16, 48, 2), []*simPair{rows, mask}, []any{ops.SoftMaxParams{Scale: 0.25}}},
		{ops.SoftMax, "no mask", out(tensor.F32, 16, 48, 2), []*simPair{rows, nil}, []any{ops.SoftMaxParams{Scale: 0.25}}},
		{ops.Rope, "", out(tensor.F32, 16, 48, 2), []*simPair{rows, pos, nil}, []any{rope}},
		{ops.Rope, "freqs", out(tensor.F32, 16, 48, 2), []*simPair{rows, pos, in(tensor.F32, 8)}, []any{rope}},
		{ops.GetRows, "", out(tensor.F32, 64, 5), []*simPair{x, idx}, nil},
		{ops.Cpy, "f16", out(tensor.F16, 64, 48, 2), []*simPair{a}, nil},
		{ops.Cont, "", out(tensor.F32, 64, 48, 2), []*simPair{a}, nil},
		{ops.FlashAttnExt, "", out(tensor.F32, 16, 4, 9), []*simPair{in(tensor.F32, 16, 9, 4), in(tensor.F16, 16, 48, 2), in(tensor.F16, 16, 48, 2), in(tensor.F16, 48, 9)},
			[]any{ops.FlashAttnParams{Scale: 0.25}}},
		{ops.MulMatID, "", out(tensor.F32, 40, 5, 1), []*simPair{in(tensor.F16, 64, 40, 8), in(tensor.F32, 64, 1, 1), idx}, nil},
		{ops.ArgSort, "", out(tensor.I32, 16, 48, 2), []*simPair{rows}, []any{ops.ArgSortParams{Order: 1}}},
		{ops.TopK, "", out(tensor.I32, 4, 48, 2), []*simPair{rows}, []any{ops.TopKParams{K: 4}}},
		{ops.SumRows, "", out(tensor.F32, 1, 48, 2), []*simPair{a}, nil},
	}
	stepped := map[ops.Op]bool{}
	for _, st := range steps {
		stepped[st.op] = true
	}
	for _, op := range ops.All() {
		if op.Info().Kernel != "" && !stepped[op] {
			t.Errorf("op %s (kernel %s) has no step in TestSimMatchesCPU", op, op.Info().Kernel)
		}
	}
	call := func(k engine.Kernels, st step, pick func(*simPair) *tensor.Tensor) {
		args := []reflect.Value{reflect.ValueOf(pick(st.dst))}
		for _, p := range st.srcs {
			var t *tensor.Tensor
			if p != nil {
				t = pick(p)
			}
			args = append(args, reflect.ValueOf(t))
		}
		for _, v := range st.params {
			args = append(args, reflect.ValueOf(v))
		}
		reflect.ValueOf(k).MethodByName(st.op.Info().Kernel).Call(args)
	}
	for _, st := range steps {
		call(c, st, func(p *simPair) *tensor.Tensor { return &p.host })
		call(s, st, func(p *simPair) *tensor.Tensor { return &p.dev })
	}
	s.Synchronize()
	for _, st := range steps {
		if got := st.dst.get(s); !bytes.Equal(got.Data, st.dst.host.Data) {
			t.Errorf("%s %s: the simulated device's result differs from the CPU's", st.op, st.variant)
		}
	}
}

// TestSimRejectsHostMemory: a kernel given a host tensor (a missing copy)
// panics where it is launched.
func TestSimRejectsHostMemory(t *testing.T) {
	s := sim.New(3, 1)
	defer s.Close()
	h := tensor.NewTensor(tensor.F32, [4]int{4, 1, 1, 1})
	mem, _ := s.Alloc(h.Span())
	d := tensor.Tensor{Type: h.Type, Ne: h.Ne, Nb: h.Nb, Data: mem}
	defer func() {
		r := recover()
		if msg, _ := r.(string); !strings.Contains(msg, "outside sim3's memory") {
			t.Fatalf("got %v, want a panic about host memory", r)
		}
	}()
	s.Relu(&d, &h)
}

// TestSimStreams chains two devices and the host with events and async
// copies many times; run it under -race.
func TestSimStreams(t *testing.T) {
	s0, s1 := sim.New(0, 1), sim.New(1, 1)
	defer s0.Close()
	defer s1.Close()
	ne := [4]int{256, 4, 1, 1}
	alloc := func(s *sim.Backend) tensor.Tensor {
		h := tensor.NewTensor(tensor.F32, ne)
		mem, err := s.Alloc(h.Span())
		if err != nil {
			t.Fatal(err)
		}
		return tensor.Tensor{Type: tensor.F32, Ne: ne, Nb: tensor.ContiguousStrides(tensor.F32, ne), Data: mem}
	}
	a0, b0, a1, b1 := alloc(s0), alloc(s0), alloc(s1), alloc(s1)
	host := tensor.NewTensor(tensor.F32, ne)
	ev0, ev1 := s0.NewEvent(), s1.NewEvent()
	for it := 0; it < 200; it++ {
		in := tensor.NewTensor(tensor.F32, ne)
		for i := range in.F32s() {
			in.F32s()[i] = float32(it + i)
		}
		s0.Synchronize()
		s0.SetTensor(&a0, &in)
		s0.Scale(&b0, &a0, ops.ScaleParams{S: 2}) // b0 = 2·in
		s1.WaitEvent(ev1)                         // s1 done with a1 (no-op on its own queue)
		if !s0.CopyTensorAsync(s1, &a1, &b0) {
			t.Fatal("sim to sim copy refused")
		}
		ev0.Record()
		s1.WaitEvent(ev0)
		s1.Add(&b1, &a1, &a1) // b1 = 4·in
		s1.GetTensorAsync(&host, &b1)
		ev1.Record()
		ev1.Synchronize()
		for i, v := range host.F32s() {
			if want := 4 * float32(it+i); v != want {
				t.Fatalf("iteration %d: element %d = %g, want %g", it, i, v, want)
			}
		}
	}
	if when := ev1.When(); when.IsZero() {
		t.Error("event has no completion time")
	}
}

// TestSimOffload: like ggml-cuda's offload_op, by get_op_batch_size.
func TestSimOffload(t *testing.T) {
	d := backend.Sim(0)
	for _, tc := range []struct {
		op   ops.Op
		ne   [4]int64
		want bool
	}{
		{ops.MulMat, [4]int64{4096, 32, 1, 1}, true},
		{ops.MulMat, [4]int64{4096, 31, 1, 1}, false},
		{ops.GetRows, [4]int64{4096, 512, 1, 1}, false},
		{ops.Rope, [4]int64{128, 32, 8, 1}, false}, // batch is ne[2]
		{ops.Rope, [4]int64{128, 4, 32, 1}, true},
		{ops.Add, [4]int64{4096, 8, 4, 1}, true}, // rows
	} {
		if got := d.OffloadOp(&backend.OpQuery{Op: tc.op, Ne: tc.ne}, d.OffloadMinBatch); got != tc.want {
			t.Errorf("offload %s %v = %v, want %v", tc.op, tc.ne, got, tc.want)
		}
	}
	if d.BufferType.Host || !d.Async || d.Device != "GPU" || d.SupportsBufferType(backend.CPUBufferType) || !d.SupportsBufferType(d.BufferType) {
		t.Errorf("sim0 is not a discrete GPU: %+v", d)
	}
}

// TestSimKernelFault: a kernel that panics on the device's worker (an
// index outside its table) does not take the program down: the device
// reports it through Err, skips its later work and still completes its
// events, so that nothing waits forever.
func TestSimKernelFault(t *testing.T) {
	s := sim.New(0, 1)
	defer s.Close()
	r := rand.New(rand.NewPCG(2, 3))
	table := simUpload(t, s, simHost(r, tensor.F32, [4]int{4, 3, 1, 1}))
	idx := tensor.NewTensor(tensor.I32, [4]int{2, 1, 1, 1})
	copy(idx.I32s(), []int32{1, 3})
	ids := simUpload(t, s, idx)
	rows := simUpload(t, s, tensor.NewTensor(tensor.F32, [4]int{4, 2, 1, 1}))
	s.GetRows(&rows.dev, &table.dev, &ids.dev)
	s.Relu(&rows.dev, &rows.dev)
	e := s.NewEvent()
	e.Record()
	done := make(chan struct{})
	go func() { e.Synchronize(); s.Synchronize(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("waiting on a failed device hangs")
	}
	var ke *engine.KernelError
	if err := s.Err(); !errors.As(err, &ke) || !strings.Contains(err.Error(), "index 3 is not a row") {
		t.Fatalf("Err() = %v, want the get_rows KernelError", err)
	}
}
