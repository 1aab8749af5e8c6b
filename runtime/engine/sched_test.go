package engine_test

import (
	"errors"
	"testing"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/runtime/sim"
	"github.com/graphc/graphc/tensor"
)

// chain is a hand-written plan over sim0, sim1 and the cpu, the way
// generated code drives Sched: the cpu scales the input, sim0 adds it to
// itself, sim1 scales again, the cpu adds one; every split copies its input
// from the previous backend (host→device, device→device, device→host).
type chain struct {
	s        *engine.Sched
	sim0     *sim.Backend
	sim1     *sim.Backend
	host     *cpu.Backend
	nCopies  int
	ne       [4]int
	bufs     [3][]byte // per backend
	one      tensor.Tensor
	slotSize int
}

const (
	bSim0 = 0
	bSim1 = 1
	bCPU  = 2
)

func newChain(t *testing.T, nCopies int) *chain {
	c := &chain{sim0: sim.New(0, 1), sim1: sim.New(1, 1), host: cpu.New(1), nCopies: nCopies, ne: [4]int{64, 3, 1, 1}}
	t.Cleanup(func() {
		c.s.Synchronize()
		c.sim0.Close()
		c.sim1.Close()
		c.host.Close()
	})
	bts := []backend.BufferType{backend.Sim(0).BufferType, backend.Sim(1).BufferType, backend.CPUBufferType}
	splits := []engine.SplitInfo{
		{Backend: bCPU, Nodes: 1, First: "a", Last: "a"},
		{Backend: bSim0, Inputs: 1, Nodes: 1, First: "b", Last: "b"},
		{Backend: bSim1, Inputs: 1, Nodes: 1, First: "c", Last: "c"},
		{Backend: bCPU, Inputs: 1, Nodes: 1, First: "d", Last: "d"},
	}
	var err error
	c.s, err = engine.NewSched([]engine.Backend{c.sim0, c.sim1, engine.NewHostBackend("cpu", backend.CPUBufferType)}, bts, splits, nCopies)
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.NewTensor(tensor.F32, c.ne)
	c.slotSize = x.Span()
	// Per backend: per slot an input copy, then one node.
	for b := range c.bufs {
		if c.bufs[b], err = c.s.Backend(b).Alloc((nCopies + 2) * c.slotSize); err != nil {
			t.Fatal(err)
		}
	}
	c.one = tensor.NewTensor(tensor.F32, [4]int{1, 1, 1, 1})
	c.one.F32s()[0] = 1
	return c
}

func (c *chain) at(b, k int) *tensor.Tensor {
	t := tensor.At(c.bufs[b], k*c.slotSize, tensor.F32, c.ne, tensor.ContiguousStrides(tensor.F32, c.ne))
	return &t
}

// eval issues one evaluation of in on slot k mod nCopies, its output in
// into's memory where that holds it.
func (c *chain) eval(k int, in []float32, into []byte) (*engine.Flight, tensor.Tensor) {
	slot := k % c.nCopies
	s := c.s
	s.Begin(slot)
	// graph input: version slot of the cpu's input
	copy(c.at(bCPU, slot).F32s(), in)

	s.BeginSplit(0)
	s.Compute(0)
	a := c.at(bCPU, c.nCopies)
	c.host.Scale(a, c.at(bCPU, slot), ops.ScaleParams{S: 2})
	s.EndSplit(0)

	s.BeginSplit(1)
	s.CopyInput(1, bCPU, c.at(bSim0, slot), a, false)
	s.Compute(1)
	b := c.at(bSim0, c.nCopies)
	c.sim0.Add(b, c.at(bSim0, slot), c.at(bSim0, slot))
	s.Inspect(bSim0, "b", *b)
	s.EndSplit(1)

	s.BeginSplit(2)
	s.CopyInput(2, bSim0, c.at(bSim1, slot), b, false)
	s.Compute(2)
	cc := c.at(bSim1, c.nCopies)
	c.sim1.Scale(cc, c.at(bSim1, slot), ops.ScaleParams{S: 3})
	s.EndSplit(2)

	s.BeginSplit(3)
	s.CopyInput(3, bSim1, c.at(bCPU, c.nCopies+1), cc, false)
	s.Compute(3)
	d := c.at(bCPU, c.nCopies)
	c.host.Add(d, c.at(bCPU, c.nCopies+1), &c.one)
	s.EndSplit(3)
	out := s.Output(bCPU, d, into)
	return s.End(), out
}

func TestSchedChain(t *testing.T) {
	for _, nCopies := range []int{1, 2, 4} {
		c := newChain(t, nCopies)
		var last []byte
		for k := 0; k < 50; k++ {
			in := make([]float32, 64*3)
			for i := range in {
				in[i] = float32(k*1000 + i)
			}
			// Odd evaluations get the last output's memory for theirs;
			// every fourth, too little of it.
			var into []byte
			switch k % 4 {
			case 1:
				into = last
			case 3:
				into = last[: len(last)-4 : len(last)-4]
			}
			f, out := c.eval(k, in, into)
			f.Wait()
			if reused := len(out.Data) > 0 && cap(into) > 0 && &out.Data[0] == &into[:1][0]; reused != (k%4 == 1) {
				t.Fatalf("n_copies %d, evaluation %d: output in the memory given: %v", nCopies, k, reused)
			}
			last = out.Data
			for i, v := range out.F32s() {
				if want := 12*in[i] + 1; v != want {
					t.Fatalf("n_copies %d, evaluation %d: element %d = %g, want %g", nCopies, k, i, v, want)
				}
			}
			st := c.s.Stats()
			if st.BytesCopied != 3*64*3*4 || st.Copies != 3 || len(st.Splits) != 4 || st.Splits[2].Backend != "sim1" {
				t.Fatalf("stats %+v", st)
			}
		}
	}
}

// TestSchedCallbackStops: a callback that stops the evaluation makes
// Recover return ErrStopped, and the scheduler goes on.
func TestSchedCallbackStops(t *testing.T) {
	c := newChain(t, 2)
	var seen []float32
	c.s.SetEvalCallback(func(name string, x *tensor.Tensor, ask bool) bool {
		if ask {
			return name == "b"
		}
		seen = append(seen, x.F32s()[1])
		return false
	})
	in := make([]float32, 64*3)
	in[1] = 5
	err := func() (err error) {
		defer c.s.Recover(&err)
		c.eval(0, in, nil)
		return nil
	}()
	if !errors.Is(err, engine.ErrStopped) || len(seen) != 1 || seen[0] != 20 {
		t.Fatalf("err %v, inspected %v (want b[1] = 20)", err, seen)
	}
	c.s.SetEvalCallback(nil)
	f, out := c.eval(1, in, nil)
	f.Wait()
	if got := out.F32s()[1]; got != 61 {
		t.Errorf("after a stop: %g, want 61", got)
	}
}

func TestNewSchedChecksMemory(t *testing.T) {
	s0 := sim.New(0, 1)
	defer s0.Close()
	want := []backend.BufferType{backend.Sim(1).BufferType}
	if _, err := engine.NewSched([]engine.Backend{s0}, want, nil, 1); err == nil {
		t.Error("sim0 accepted for a plan made for SIM1")
	}
}
