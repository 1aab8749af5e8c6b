package cpu

import (
	"fmt"
	"sort"
	"sync"
	"time"
	"unsafe"

	"github.com/graphc/graphc/runtime"
)

var (
	_ runtime.Kernels = (*Sim)(nil)
	_ runtime.Backend = (*Sim)(nil)
)

// Sim is a simulated discrete device, "sim<n>": what a GPU is to the
// scheduler and to generated code, on any machine. It has
//
//   - its own memory, buffer type "SIM<n>": allocations of its own that the
//     host reaches only through the device's copies. Alloc hands out an
//     address range that stands for the device memory, like a device
//     pointer: on Unix it is reserved without access, so host code that
//     reads or writes device memory directly faults at once, and a kernel
//     given host memory (a missing copy) panics;
//   - its own worker goroutine and queue: kernel launches and async copies
//     are queued and return at once; events record and wait on positions in
//     the queue, including other devices' queues;
//   - the CPU kernels underneath, so its results are bit for bit the CPU
//     backend's for the same thread count.
type Sim struct {
	n    int
	name string
	bt   runtime.BufferType
	k    *Backend // the kernels; used by the worker goroutine only

	mu        sync.Mutex
	cond      *sync.Cond // signalled when work is queued or completed
	queue     []simOp
	head      int
	queued    uint64 // ops ever queued; op number i (from 1) is done when completed >= i
	completed uint64
	closed    bool
	stopped   chan struct{}

	memMu sync.RWMutex
	mem   []simAlloc // by address of their handles
}

// simAlloc is one device allocation: the address range the host sees and
// the bytes behind it.
type simAlloc struct {
	handle []byte
	data   []byte
	free   func()
}

type simOpKind uint8

const (
	simKernel simOpKind = iota // a Kernels call
	simGet                     // device → host tensor
	simCopyTo                  // device → another device's memory
	simMark                    // an event's record
	simWait                    // wait for another device's queue
)

// simOp is one queued operation. A kernel is a closure over its tensors,
// translated to device memory when it is queued, so that the queue needs no
// case per op. simGet's and simCopyTo's dst is host memory or the other
// device's memory, their a this device's.
type simOp struct {
	kind    simOpKind
	kernel  func(k *Backend) // simKernel
	dst, a  runtime.Tensor   // simGet, simCopyTo
	to      *Sim             // simCopyTo: the destination device
	ev      *simEvent        // simMark
	waitFor *Sim             // simWait: until waitFor has completed waitSeq ops
	waitSeq uint64
}

// NewSim starts simulated device n, computing with the given number of
// threads (the CPU backend's rule: <= 0 means every core).
func NewSim(n, threads int) *Sim {
	s := &Sim{n: n, name: fmt.Sprintf("sim%d", n), k: New(threads), stopped: make(chan struct{})}
	s.bt = SimDescription(n).BufferType
	s.cond = sync.NewCond(&s.mu)
	go s.run()
	return s
}

func (s *Sim) Name() string                   { return s.name }
func (s *Sim) BufferType() runtime.BufferType { return s.bt }
func (s *Sim) Async() bool                    { return true }

// Alloc allocates size zeroed bytes of device memory and returns their
// handle.
func (s *Sim) Alloc(size int) ([]byte, error) {
	if size < 0 {
		return nil, fmt.Errorf("%s: alloc of %d bytes", s.name, size)
	}
	if size == 0 {
		return nil, nil
	}
	handle, free, err := reserveHandle(size)
	if err != nil {
		return nil, fmt.Errorf("%s: alloc of %d bytes: %v", s.name, size, err)
	}
	a := simAlloc{handle: handle, data: runtime.NewBuffer(size), free: free}
	s.memMu.Lock()
	i := sort.Search(len(s.mem), func(i int) bool { return addr(s.mem[i].handle) > addr(handle) })
	s.mem = append(s.mem, simAlloc{})
	copy(s.mem[i+1:], s.mem[i:])
	s.mem[i] = a
	s.memMu.Unlock()
	return handle, nil
}

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// dev returns t with its Data in device memory: the bytes behind the
// handle range t.Data covers. A tensor outside the device's memory is a
// bug in the caller (a missing copy).
func (s *Sim) dev(t *runtime.Tensor) runtime.Tensor {
	d := *t
	if len(t.Data) == 0 {
		d.Data = nil
		return d
	}
	p := addr(t.Data)
	s.memMu.RLock()
	defer s.memMu.RUnlock()
	i := sort.Search(len(s.mem), func(i int) bool { return addr(s.mem[i].handle) > p }) - 1
	if i >= 0 {
		a := &s.mem[i]
		off := int(p - addr(a.handle))
		if off+len(t.Data) <= len(a.handle) {
			d.Data = a.data[off : off+len(t.Data)]
			return d
		}
	}
	panic(fmt.Sprintf("BUG: %s: a %s%v tensor outside %s's memory was given to it (host memory, or another device's: a missing copy)", s.name, t.Type, t.Ne, s.name))
}

// push queues op and returns its number.
func (s *Sim) push(op simOp) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		panic(fmt.Sprintf("BUG: use of closed %s", s.name))
	}
	s.queue = append(s.queue, op)
	s.queued++
	s.cond.Broadcast()
	return s.queued
}

func (s *Sim) run() {
	defer close(s.stopped)
	for {
		s.mu.Lock()
		for s.head == len(s.queue) && !s.closed {
			s.cond.Wait()
		}
		if s.head == len(s.queue) {
			s.mu.Unlock()
			return
		}
		op := s.queue[s.head]
		s.queue[s.head] = simOp{}
		s.head++
		switch {
		case s.head == len(s.queue):
			s.queue, s.head = s.queue[:0], 0
		case s.head >= 1024 && 2*s.head >= len(s.queue): // a queue never empty stays small
			n := copy(s.queue, s.queue[s.head:])
			clear(s.queue[n:])
			s.queue, s.head = s.queue[:n], 0
		}
		s.mu.Unlock()

		s.exec(&op)

		s.mu.Lock()
		if op.kind == simMark {
			op.ev.when = time.Now()
		}
		s.completed++
		s.cond.Broadcast()
		s.mu.Unlock()
	}
}

// exec runs one op on the worker goroutine.
func (s *Sim) exec(op *simOp) {
	switch op.kind {
	case simKernel:
		op.kernel(s.k)
	case simGet, simCopyTo:
		runtime.Copy(&op.dst, &op.a)
	case simMark:
	case simWait:
		op.waitFor.waitFor(op.waitSeq)
	default:
		panic(fmt.Sprintf("BUG: %s: op kind %d", s.name, op.kind))
	}
}

// waitFor blocks until op number seq of s's queue is done.
func (s *Sim) waitFor(seq uint64) {
	s.mu.Lock()
	for s.completed < seq {
		s.cond.Wait()
	}
	s.mu.Unlock()
}

// Kernels: queued.

// on translates a kernel's tensor to device memory when the kernel is
// queued, so that a tensor outside the device's memory panics where the
// caller is; nil (an optional source left out) stays nil.
func (s *Sim) on(t *runtime.Tensor) *runtime.Tensor {
	if t == nil {
		return nil
	}
	d := s.dev(t)
	return &d
}

func (s *Sim) launch(kernel func(k *Backend)) { s.push(simOp{kind: simKernel, kernel: kernel}) }

func (s *Sim) MulMat(dst, a, x *runtime.Tensor) {
	dst, a, x = s.on(dst), s.on(a), s.on(x)
	s.launch(func(k *Backend) { k.MulMat(dst, a, x) })
}
func (s *Sim) Add(dst, a, x *runtime.Tensor) {
	dst, a, x = s.on(dst), s.on(a), s.on(x)
	s.launch(func(k *Backend) { k.Add(dst, a, x) })
}
func (s *Sim) Sub(dst, a, x *runtime.Tensor) {
	dst, a, x = s.on(dst), s.on(a), s.on(x)
	s.launch(func(k *Backend) { k.Sub(dst, a, x) })
}
func (s *Sim) Mul(dst, a, x *runtime.Tensor) {
	dst, a, x = s.on(dst), s.on(a), s.on(x)
	s.launch(func(k *Backend) { k.Mul(dst, a, x) })
}
func (s *Sim) Div(dst, a, x *runtime.Tensor) {
	dst, a, x = s.on(dst), s.on(a), s.on(x)
	s.launch(func(k *Backend) { k.Div(dst, a, x) })
}
func (s *Sim) Scale(dst, a *runtime.Tensor, v float32) {
	dst, a = s.on(dst), s.on(a)
	s.launch(func(k *Backend) { k.Scale(dst, a, v) })
}
func (s *Sim) Relu(dst, a *runtime.Tensor) {
	dst, a = s.on(dst), s.on(a)
	s.launch(func(k *Backend) { k.Relu(dst, a) })
}
func (s *Sim) Gelu(dst, a *runtime.Tensor) {
	dst, a = s.on(dst), s.on(a)
	s.launch(func(k *Backend) { k.Gelu(dst, a) })
}
func (s *Sim) Silu(dst, a *runtime.Tensor) {
	dst, a = s.on(dst), s.on(a)
	s.launch(func(k *Backend) { k.Silu(dst, a) })
}
func (s *Sim) RMSNorm(dst, a *runtime.Tensor, eps float32) {
	dst, a = s.on(dst), s.on(a)
	s.launch(func(k *Backend) { k.RMSNorm(dst, a, eps) })
}
func (s *Sim) Norm(dst, a *runtime.Tensor, eps float32) {
	dst, a = s.on(dst), s.on(a)
	s.launch(func(k *Backend) { k.Norm(dst, a, eps) })
}
func (s *Sim) SoftMax(dst, a, mask *runtime.Tensor, scale, maxBias float32) {
	dst, a, mask = s.on(dst), s.on(a), s.on(mask)
	s.launch(func(k *Backend) { k.SoftMax(dst, a, mask, scale, maxBias) })
}
func (s *Sim) Rope(dst, a, pos *runtime.Tensor, p runtime.RopeParams) {
	dst, a, pos = s.on(dst), s.on(a), s.on(pos)
	s.launch(func(k *Backend) { k.Rope(dst, a, pos, p) })
}
func (s *Sim) GetRows(dst, table, idx *runtime.Tensor) {
	dst, table, idx = s.on(dst), s.on(table), s.on(idx)
	s.launch(func(k *Backend) { k.GetRows(dst, table, idx) })
}
func (s *Sim) Cpy(dst, src *runtime.Tensor) {
	dst, src = s.on(dst), s.on(src)
	s.launch(func(k *Backend) { k.Cpy(dst, src) })
}

// Copies.

// SetTensor copies host tensor src into dst, in device memory, now.
func (s *Sim) SetTensor(dst, src *runtime.Tensor) {
	d := s.dev(dst)
	runtime.Copy(&d, src)
}

// GetTensor copies src, in device memory, into host tensor dst now.
func (s *Sim) GetTensor(dst, src *runtime.Tensor) {
	d := s.dev(src)
	runtime.Copy(dst, &d)
}

// GetTensorAsync queues the copy of src into host tensor dst.
func (s *Sim) GetTensorAsync(dst, src *runtime.Tensor) {
	s.push(simOp{kind: simGet, dst: *dst, a: s.dev(src)})
}

// CopyTensorAsync queues the copy of src into dst on another simulated
// device; it cannot copy to other kinds of backends.
func (s *Sim) CopyTensorAsync(to runtime.Backend, dst, src *runtime.Tensor) bool {
	t, ok := to.(*Sim)
	if !ok {
		return false
	}
	s.push(simOp{kind: simCopyTo, dst: t.dev(dst), a: s.dev(src), to: t})
	return true
}

// Events.

// Synchronize blocks until every queued op is done.
func (s *Sim) Synchronize() {
	s.mu.Lock()
	target := s.queued
	for s.completed < target {
		s.cond.Wait()
	}
	s.mu.Unlock()
}

// NewEvent returns an event of this device.
func (s *Sim) NewEvent() runtime.Event { return &simEvent{s: s} }

// WaitEvent makes the ops queued from now on wait for e.
func (s *Sim) WaitEvent(e runtime.Event) {
	se, ok := e.(*simEvent)
	if !ok {
		// Events of synchronous backends are complete once recorded.
		e.Synchronize()
		return
	}
	if se.s == s {
		return // one queue runs in order
	}
	se.s.mu.Lock()
	seq := se.seq
	se.s.mu.Unlock()
	s.push(simOp{kind: simWait, waitFor: se.s, waitSeq: seq})
}

// simEvent is a position in a Sim's queue.
type simEvent struct {
	s    *Sim
	seq  uint64    // the number of its last record's op; 0: never recorded
	when time.Time // when that op ran
}

func (e *simEvent) Record() {
	s := e.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		panic(fmt.Sprintf("BUG: use of closed %s", s.name))
	}
	s.queue = append(s.queue, simOp{kind: simMark, ev: e})
	s.queued++
	e.seq = s.queued
	s.cond.Broadcast()
}

func (e *simEvent) Synchronize() {
	s := e.s
	s.mu.Lock()
	seq := e.seq
	for s.completed < seq {
		s.cond.Wait()
	}
	s.mu.Unlock()
}

func (e *simEvent) Done() bool {
	e.s.mu.Lock()
	defer e.s.mu.Unlock()
	return e.s.completed >= e.seq
}

func (e *simEvent) When() time.Time {
	e.s.mu.Lock()
	defer e.s.mu.Unlock()
	return e.when
}

// Close finishes the queued work, stops the worker and the kernels' threads
// and frees the device memory.
func (s *Sim) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.cond.Broadcast()
	s.mu.Unlock()
	<-s.stopped
	s.k.Close()
	s.memMu.Lock()
	for _, a := range s.mem {
		if a.free != nil {
			a.free()
		}
	}
	s.mem = nil
	s.memMu.Unlock()
}
