package engine

import (
	"errors"
	"sync"
	"time"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/tensor"
)

// Backend is a backend as generated code drives it: memory of its buffer
// type, copies in and out of that memory, and an ordered stream of work with
// events, mirroring ggml's ggml_backend interface (buffers, set/get/cpy
// tensor, synchronize, event record/wait/synchronize).
//
// Kernels are launched by calling the concrete backend's Kernels methods
// (generated code holds each backend by its own type). On an asynchronous
// backend (Async) a launch queues the op and returns; the ops of one backend
// run in launch order, and events order them against other backends and the
// host. On a synchronous backend the op is done when the call returns.
//
// A Backend's methods are called by one goroutine at a time, except that
// Event.Synchronize may be called from any goroutine.
type Backend interface {
	// Name is the backend's name in targets: "cpu", "sim0", "blas", ….
	Name() string
	// BufferType is the memory the backend computes in.
	BufferType() backend.BufferType
	// Async reports whether kernel launches and async copies are queued.
	Async() bool

	// Alloc returns size zeroed bytes of the backend's buffer type. When
	// the type is not host memory the slice is an address range in the
	// backend's memory, like a device pointer: host code may slice it to
	// describe tensors (At) but must never read or write it; only the
	// backend's kernels and copies touch it.
	Alloc(size int) ([]byte, error)

	// SetTensor copies host tensor src into dst, which lives in this
	// backend's memory (ggml_backend_tensor_set), and returns once src
	// may be reused. An asynchronous backend may queue the write after
	// its queued work (ggml_backend_tensor_set_async, from a copy of src):
	// its later kernels and copies see it. It does not wait for queued
	// work otherwise: the caller orders it with events.
	SetTensor(dst, src *tensor.Tensor)
	// GetTensor copies src, in this backend's memory, into host tensor dst
	// and returns when done (ggml_backend_tensor_get); like SetTensor it
	// does not wait for queued work.
	GetTensor(dst, src *tensor.Tensor)
	// GetTensorAsync queues the copy of src, in this backend's memory, into
	// host tensor dst after the work queued so far
	// (ggml_backend_tensor_get_async). dst must not be touched until an
	// event recorded afterwards has completed.
	GetTensorAsync(dst, src *tensor.Tensor)
	// CopyTensorAsync queues, after the work queued so far on this backend,
	// the copy of src (in this backend's memory) into dst, which lives in
	// the memory of backend to, and reports whether it could; on false
	// nothing was queued and the caller copies synchronously. Like ggml's
	// CUDA cpy_tensor_async the copy runs on the source's stream, so that
	// later work of this backend cannot overwrite src before it is read;
	// the caller makes backend to wait for it with an event.
	CopyTensorAsync(to Backend, dst, src *tensor.Tensor) bool

	// Synchronize blocks until all queued work is done.
	Synchronize()
	// NewEvent returns an event of this backend.
	NewEvent() Event
	// WaitEvent makes the work queued on this backend from now on wait
	// until e's recorded work is done (ggml_backend_event_wait); e may
	// belong to another backend. A synchronous backend blocks the caller.
	WaitEvent(e Event)

	// Err returns the first failure of work the backend ran on a
	// goroutine of its own (a kernel that panicked there), or nil. After a
	// failure the backend skips its later kernels and copies but still
	// completes its events, so that nothing waits forever; its memory is
	// then undefined.
	Err() error

	// Close stops the backend's workers; it must be idle.
	Close()
}

// Event marks a point in a backend's stream of work (ggml_backend_event).
type Event interface {
	// Record marks the work queued on the event's backend so far
	// (ggml_backend_event_record). Recording again moves the mark.
	Record()
	// Synchronize blocks until the recorded work is done
	// (ggml_backend_event_synchronize).
	Synchronize()
	// Done reports, without blocking, whether the recorded work is done
	// (cudaEventQuery).
	Done() bool
	// When is the time the recorded work completed; valid after
	// Synchronize.
	When() time.Time
}

// NewHostBackend adapts a synchronous backend that computes in host memory
// of buffer type bt (the CPU, BLAS) to Backend: its kernels run on the
// caller's goroutine and are done when they return, so its events are
// complete as soon as they are recorded and its copies are memory copies.
// Closing it does nothing: the caller closes the kernels' backend.
func NewHostBackend(name string, bt backend.BufferType) Backend {
	return &hostBackend{name: name, bt: bt}
}

type hostBackend struct {
	name string
	bt   backend.BufferType
}

func (h *hostBackend) Name() string                   { return h.name }
func (h *hostBackend) BufferType() backend.BufferType { return h.bt }
func (h *hostBackend) Async() bool                    { return false }

func (h *hostBackend) Alloc(size int) ([]byte, error) {
	if size < 0 {
		return nil, errors.New("negative size")
	}
	return tensor.NewBuffer(size), nil
}

func (h *hostBackend) SetTensor(dst, src *tensor.Tensor)      { tensor.Copy(dst, src) }
func (h *hostBackend) GetTensor(dst, src *tensor.Tensor)      { tensor.Copy(dst, src) }
func (h *hostBackend) GetTensorAsync(dst, src *tensor.Tensor) { tensor.Copy(dst, src) }
func (h *hostBackend) CopyTensorAsync(Backend, *tensor.Tensor, *tensor.Tensor) bool {
	return false
}
func (h *hostBackend) Synchronize()      {}
func (h *hostBackend) NewEvent() Event   { return &hostEvent{} }
func (h *hostBackend) WaitEvent(e Event) { e.Synchronize() }

// Err is nil: a host backend's kernels fail on the caller's goroutine,
// where Sched.Recover sees them.
func (h *hostBackend) Err() error { return nil }

func (h *hostBackend) Close() {}

// hostEvent is an event of a synchronous backend: its work is done when it
// is recorded.
type hostEvent struct {
	mu   sync.Mutex
	when time.Time
}

func (e *hostEvent) Record() {
	e.mu.Lock()
	e.when = time.Now()
	e.mu.Unlock()
}

func (e *hostEvent) Synchronize() {}
func (e *hostEvent) Done() bool   { return true }

func (e *hostEvent) When() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.when
}
