package sim

import (
	"fmt"
	"sync"
	"time"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/tensor"
)

var (
	_ engine.Kernels = (*Backend)(nil)
	_ engine.Backend = (*Backend)(nil)
)

// Backend is a simulated discrete device, "sim<n>": what a GPU is to the
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
type Backend struct {
	n    int
	name string
	bt   backend.BufferType
	k    *cpu.Backend // the kernels; used by the worker goroutine only

	mu        sync.Mutex
	cond      *sync.Cond // signalled when work is queued or completed
	queue     []queuedOp
	head      int
	queued    uint64 // ops ever queued; op number i (from 1) is done when completed >= i
	completed uint64
	closed    bool
	stopped   chan struct{}
	// err is the first panic of a queued op; once set, the worker skips
	// kernels and copies (marks and waits still run, so events complete).
	err error

	memMu sync.RWMutex
	mem   engine.DeviceMemory[[]byte] // each allocation's bytes behind its handle
}

type opKind uint8

const (
	opKernel opKind = iota // a Kernels call
	opGet                  // device → host tensor
	opCopyTo               // device → another device's memory
	opMark                 // an event's record
	opWait                 // wait for another device's queue
)

// queuedOp is one queued operation. A kernel is a closure over its tensors,
// translated to device memory when it is queued, so that the queue needs no
// case per op. opGet's and opCopyTo's dst is host memory or the other
// device's memory, their a this device's.
type queuedOp struct {
	kind    opKind
	kernel  func(k *cpu.Backend) // opKernel
	dst, a  tensor.Tensor        // opGet, opCopyTo
	to      *Backend             // opCopyTo: the destination device
	ev      *event               // opMark
	waitFor *Backend             // opWait: until waitFor has completed waitSeq ops
	waitSeq uint64
}

// New starts simulated device n, computing with the given number of
// threads (the CPU backend's rule: <= 0 means every core).
func New(n, threads int) *Backend {
	s := &Backend{n: n, name: fmt.Sprintf("sim%d", n), k: cpu.New(threads), stopped: make(chan struct{})}
	s.bt = backend.Sim(n).BufferType
	s.cond = sync.NewCond(&s.mu)
	go s.run()
	return s
}

func (s *Backend) Name() string                   { return s.name }
func (s *Backend) BufferType() backend.BufferType { return s.bt }
func (s *Backend) Async() bool                    { return true }

// Alloc allocates size zeroed bytes of device memory and returns their
// handle.
func (s *Backend) Alloc(size int) ([]byte, error) {
	if size < 0 {
		return nil, fmt.Errorf("%s: alloc of %d bytes", s.name, size)
	}
	if size == 0 {
		return nil, nil
	}
	s.memMu.Lock()
	handle, err := s.mem.Add(size, tensor.NewBuffer(size))
	s.memMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%s: alloc of %d bytes: %v", s.name, size, err)
	}
	return handle, nil
}

// dev returns t with its Data in device memory: the bytes behind the
// handle range t.Data covers. A tensor outside the device's memory is a
// bug in the caller (a missing copy).
func (s *Backend) dev(t *tensor.Tensor) tensor.Tensor {
	d := *t
	if len(t.Data) == 0 {
		d.Data = nil
		return d
	}
	s.memMu.RLock()
	defer s.memMu.RUnlock()
	i, off := s.mem.Locate(s.name, t)
	d.Data = (*s.mem.At(i))[off : off+len(t.Data)]
	return d
}

// push queues op and returns its number.
func (s *Backend) push(op queuedOp) uint64 {
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

func (s *Backend) run() {
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
		s.queue[s.head] = queuedOp{}
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
		if op.kind == opMark {
			op.ev.when = time.Now()
		}
		s.completed++
		s.cond.Broadcast()
		s.mu.Unlock()
	}
}

// exec runs one op on the worker goroutine. A panic there would end the
// program, so it becomes the device's failure instead (Err).
func (s *Backend) exec(op *queuedOp) {
	if op.kind == opKernel || op.kind == opGet || op.kind == opCopyTo {
		s.mu.Lock()
		failed := s.err != nil
		s.mu.Unlock()
		if failed {
			return
		}
		defer func() {
			if r := recover(); r != nil {
				err, ok := r.(error)
				if !ok {
					err = fmt.Errorf("%v", r)
				}
				s.mu.Lock()
				s.err = err
				s.mu.Unlock()
			}
		}()
	}
	switch op.kind {
	case opKernel:
		op.kernel(s.k)
	case opGet, opCopyTo:
		tensor.Copy(&op.dst, &op.a)
	case opMark:
	case opWait:
		op.waitFor.waitFor(op.waitSeq)
	default:
		panic(fmt.Sprintf("BUG: %s: op kind %d", s.name, op.kind))
	}
}

// waitFor blocks until op number seq of s's queue is done.
func (s *Backend) waitFor(seq uint64) {
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
func (s *Backend) on(t *tensor.Tensor) *tensor.Tensor {
	if t == nil {
		return nil
	}
	d := s.dev(t)
	return &d
}

func (s *Backend) launch(kernel func(k *cpu.Backend)) {
	s.push(queuedOp{kind: opKernel, kernel: kernel})
}

// Copies.

// SetTensor copies host tensor src into dst, in device memory, now.
func (s *Backend) SetTensor(dst, src *tensor.Tensor) {
	d := s.dev(dst)
	tensor.Copy(&d, src)
}

// GetTensor copies src, in device memory, into host tensor dst now.
func (s *Backend) GetTensor(dst, src *tensor.Tensor) {
	d := s.dev(src)
	tensor.Copy(dst, &d)
}

// GetTensorAsync queues the copy of src into host tensor dst.
func (s *Backend) GetTensorAsync(dst, src *tensor.Tensor) {
	s.push(queuedOp{kind: opGet, dst: *dst, a: s.dev(src)})
}

// CopyTensorAsync queues the copy of src into dst on another simulated
// device; it cannot copy to other kinds of backends.
func (s *Backend) CopyTensorAsync(to engine.Backend, dst, src *tensor.Tensor) bool {
	t, ok := to.(*Backend)
	if !ok {
		return false
	}
	s.push(queuedOp{kind: opCopyTo, dst: t.dev(dst), a: s.dev(src), to: t})
	return true
}

// Events.

// Synchronize blocks until every queued op is done.
func (s *Backend) Synchronize() {
	s.mu.Lock()
	target := s.queued
	for s.completed < target {
		s.cond.Wait()
	}
	s.mu.Unlock()
}

// Err returns the first failure of a queued kernel or copy.
func (s *Backend) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// NewEvent returns an event of this device.
func (s *Backend) NewEvent() engine.Event { return &event{s: s} }

// WaitEvent makes the ops queued from now on wait for e.
func (s *Backend) WaitEvent(e engine.Event) {
	se, ok := e.(*event)
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
	s.push(queuedOp{kind: opWait, waitFor: se.s, waitSeq: seq})
}

// event is a position in a Backend's queue.
type event struct {
	s    *Backend
	seq  uint64    // the number of its last record's op; 0: never recorded
	when time.Time // when that op ran
}

func (e *event) Record() {
	s := e.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		panic(fmt.Sprintf("BUG: use of closed %s", s.name))
	}
	s.queue = append(s.queue, queuedOp{kind: opMark, ev: e})
	s.queued++
	e.seq = s.queued
	s.cond.Broadcast()
}

func (e *event) Synchronize() {
	s := e.s
	s.mu.Lock()
	seq := e.seq
	for s.completed < seq {
		s.cond.Wait()
	}
	s.mu.Unlock()
}

func (e *event) Done() bool {
	e.s.mu.Lock()
	defer e.s.mu.Unlock()
	return e.s.completed >= e.seq
}

func (e *event) When() time.Time {
	e.s.mu.Lock()
	defer e.s.mu.Unlock()
	return e.when
}

// Close finishes the queued work, stops the worker and the kernels' threads
// and frees the device memory.
func (s *Backend) Close() {
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
	s.mem.Release(func(*[]byte) {})
	s.memMu.Unlock()
}
