package ggml

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/internal/ggmlapi"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/tensor"
)

var (
	_ engine.Kernels = (*Backend)(nil)
	_ engine.Backend = (*Backend)(nil)
)

// Backend is one ggml device as generated code drives it. Its memory is
// ggml buffers of the device's buffer type; Alloc hands out address ranges
// with no access standing for them, as runtime/sim does, and a gtensor's
// place in a range is its place in the buffer. Kernels are recorded and
// sent as one ggml graph when something needs their results (an event, a
// synchronization, a copy out); a graph is built once per distinct
// recording (the same kernels on the same shapes at the same places) and
// reused after.
//
// A failed graph computation, or a kernel the device does not support, is
// the backend's failure for good (Err): later kernels and copies are
// skipped and events complete.
type Backend struct {
	a    *api
	name string // graphc's: "vulkan0"
	dev  ggmlapi.Device
	info DeviceInfo
	be   ggmlapi.Backend
	buft ggmlapi.BufType
	bt   backend.BufferType

	mem engine.DeviceMemory[allocation]

	rec    []launch
	key    []byte
	graphs map[string]*builtGraph

	mu      sync.Mutex // err, sent, acked, pinned: Event.Synchronize may come from any goroutine
	err     error
	sent    uint64 // submissions: graphs and asynchronous copies
	acked   uint64 // submissions known complete
	pinned  []*runtime.Pinner
	pending []func() // host-side work of asynchronous copies, after completion
	// waiting are the events recorded while their work was in flight,
	// stamped when the device is next known past them: the scheduler's
	// statistics read When of events it never synchronized.
	waiting []*event
}

// allocation is one ggml buffer: the buffer and its base address, and a
// byte gtensor spanning it for raw copies.
type allocation struct {
	buf   ggmlapi.Buffer
	base  uintptr
	ctx   ggmlapi.Context
	whole ggmlapi.Tensor
}

// maxGraphs bounds the graphs kept: shapes that change every evaluation
// (a position-dependent view) would otherwise grow the cache forever.
const maxGraphs = 256

// Open opens ggml device devName ("Vulkan0", "CUDA0", "Metal", "CPU") as
// graphc backend name, whose plan expects memory of buffer type want.
func Open(name, devName string, want backend.BufferType) (*Backend, error) {
	a, err := lib()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var names []string
	var dev ggmlapi.Device
	for i := range a.DevCount() {
		d := a.DevGet(i)
		n := a.DevName(d)
		names = append(names, n)
		if n == devName {
			dev = d
		}
	}
	if dev == 0 {
		found := "none"
		if len(names) > 0 {
			found = strings.Join(names, ", ")
		}
		hint := ""
		if strings.HasPrefix(devName, "Vulkan") {
			hint = " (ggml's Vulkan backend skips CPU-type devices such as lavapipe unless $GGML_VK_VISIBLE_DEVICES lists them)"
		}
		return nil, fmt.Errorf("%s: ggml has no device %s; devices found: %s%s", name, devName, found, hint)
	}
	be := a.DevInit(dev, 0)
	if be == 0 {
		return nil, fmt.Errorf("%s: ggml could not initialize device %s (%s)", name, devName, a.DevDescription(dev))
	}
	b := &Backend{a: a, name: name, dev: dev, info: a.describe(dev), be: be, buft: a.DevBufferType(dev), graphs: map[string]*builtGraph{}}
	b.bt = want
	b.bt.Host = false // the plan's handles are never host memory, whatever the device's
	b.bt.Alignment = int64(a.BuftAlignment(b.buft))
	if m := a.BuftMaxSize(b.buft); m > 0 && m < 1<<62 {
		b.bt.MaxSize = int64(m)
	}
	return b, nil
}

func (b *Backend) Name() string                   { return b.name }
func (b *Backend) BufferType() backend.BufferType { return b.bt }
func (b *Backend) Async() bool                    { return true }

// Device describes the ggml device behind the backend.
func (b *Backend) Device() DeviceInfo { return b.info }

// Err returns the failure that stopped the backend, or nil.
func (b *Backend) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// fail records err as the backend's failure; events complete from now on.
func (b *Backend) fail(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		b.err = fmt.Errorf("%s (%s): %w", b.name, b.info.Name, err)
	}
}

// Alloc allocates a ggml buffer of size zeroed bytes and returns its
// handle.
func (b *Backend) Alloc(size int) ([]byte, error) {
	if size < 0 {
		return nil, fmt.Errorf("%s: alloc of %d bytes", b.name, size)
	}
	if size == 0 {
		return nil, nil
	}
	a := b.a
	buf := a.BuftAllocBuffer(b.buft, uintptr(size))
	if buf == 0 {
		return nil, fmt.Errorf("%s: %s could not allocate %d bytes of %s (free %d of %d)", b.name, b.info.Name, size, b.info.BufferType, b.info.Free, b.info.Total)
	}
	a.BufferClear(buf, 0)
	al := allocation{buf: buf, base: a.BufferBase(buf)}
	al.ctx = a.InitContext(a.TensorOver()+256, true)
	al.whole = a.NewTensor1d(al.ctx, ggmlTypeI8, int64(size))
	if st := a.TensorAlloc(buf, al.whole, al.base); st != 0 {
		a.Free(al.ctx)
		a.BufferFree(buf)
		return nil, fmt.Errorf("%s: placing a gtensor in a new buffer failed (ggml status %d)", b.name, st)
	}
	handle, err := b.mem.Add(size, al)
	if err != nil {
		a.Free(al.ctx)
		a.BufferFree(buf)
		return nil, fmt.Errorf("%s: alloc of %d bytes: %v", b.name, size, err)
	}
	return handle, nil
}

// locate returns the allocation holding t and t's offset in it. A gtensor
// outside the backend's memory is a bug in the caller (a missing copy).
func (b *Backend) locate(t *tensor.Tensor) (int, uintptr) {
	i, off := b.mem.Locate(b.name, t)
	return i, uintptr(off)
}

// Copies.

// SetTensor queues the write of host gtensor src into dst, in the
// device's memory, after the work recorded so far, with the device's
// asynchronous set (ggml falls back to a synchronous one where the device
// has none). src is copied to a staging buffer first, kept until the
// backend knows the write complete: the caller may reuse src at once, as
// it does its inputs. A dst with gaps between its elements is read first,
// now, so that the gaps keep their bytes.
func (b *Backend) SetTensor(dst, src *tensor.Tensor) {
	if b.Err() != nil {
		return
	}
	b.flush()
	i, off := b.locate(dst)
	al := b.mem.At(i)
	span := dst.Span()
	if span == 0 {
		return
	}
	staging := tensor.Tensor{Type: dst.Type, Ne: dst.Ne, Nb: dst.Nb, Data: tensor.NewBuffer(span)}
	if dst.Contiguous() && src.Contiguous() && src.Type == dst.Type && src.Ne == dst.Ne {
		copy(staging.Data, src.Data[:span])
	} else {
		if !dst.Contiguous() {
			b.Synchronize()
			b.a.TensorGet(al.whole, unsafe.Pointer(unsafe.SliceData(staging.Data)), off, uintptr(span))
		}
		tensor.Copy(&staging, src)
	}
	pin := new(runtime.Pinner)
	pin.Pin(unsafe.SliceData(staging.Data))
	b.a.TensorSetAsync(b.be, al.whole, unsafe.Pointer(unsafe.SliceData(staging.Data)), off, uintptr(span))
	b.mu.Lock()
	b.sent++
	b.pinned = append(b.pinned, pin)
	b.mu.Unlock()
}

// GetTensor computes what was recorded, waits for the device, then reads
// src into host gtensor dst. After a failure dst is left as it was.
func (b *Backend) GetTensor(dst, src *tensor.Tensor) {
	b.Synchronize()
	if b.Err() != nil {
		return
	}
	i, off := b.locate(src)
	al := b.mem.At(i)
	span := src.Span()
	if span == 0 {
		return
	}
	if dst.Contiguous() && src.Contiguous() && src.Type == dst.Type && src.Ne == dst.Ne {
		b.a.TensorGet(al.whole, unsafe.Pointer(unsafe.SliceData(dst.Data)), off, uintptr(span))
		runtime.KeepAlive(dst.Data)
		return
	}
	tmp := tensor.Tensor{Type: src.Type, Ne: src.Ne, Nb: src.Nb, Data: tensor.NewBuffer(span)}
	b.a.TensorGet(al.whole, unsafe.Pointer(unsafe.SliceData(tmp.Data)), off, uintptr(span))
	tensor.Copy(dst, &tmp)
}

// GetTensorAsync queues the read of src into host gtensor dst after the
// work recorded so far, with the device's asynchronous get (ggml falls
// back to a synchronous one where the device has none). dst is pinned
// until the backend knows the copy complete.
func (b *Backend) GetTensorAsync(dst, src *tensor.Tensor) {
	if b.Err() != nil {
		return
	}
	b.flush()
	i, off := b.locate(src)
	al := b.mem.At(i)
	span := src.Span()
	if span == 0 {
		return
	}
	target := dst.Data
	direct := dst.Contiguous() && src.Contiguous() && src.Type == dst.Type && src.Ne == dst.Ne
	if !direct {
		target = tensor.NewBuffer(span)
	}
	pin := new(runtime.Pinner)
	pin.Pin(unsafe.SliceData(target))
	b.a.TensorGetAsync(b.be, al.whole, unsafe.Pointer(unsafe.SliceData(target)), off, uintptr(span))
	b.mu.Lock()
	b.sent++
	b.pinned = append(b.pinned, pin)
	if !direct {
		tmp := tensor.Tensor{Type: src.Type, Ne: src.Ne, Nb: src.Nb, Data: target}
		b.pending = append(b.pending, func() { tensor.Copy(dst, &tmp) })
	}
	b.mu.Unlock()
}

// CopyTensorAsync queues the copy of src into dst, in the memory of to,
// another ggml backend, with ggml_backend_tensor_copy_async after the
// work recorded so far on both: the devices' own copy where ggml has one
// (CUDA to CUDA), else ggml's fallback through the host, which waits for
// both devices. ggml copies whole tensors of one layout: any other pair,
// or a backend of another kind, reports false and the caller copies
// through the host.
func (b *Backend) CopyTensorAsync(to engine.Backend, dst, src *tensor.Tensor) bool {
	tb, ok := to.(interface{ ggmlBackend() *Backend })
	if !ok || b.Err() != nil {
		return false
	}
	t := tb.ggmlBackend()
	if t.a.API != b.a.API || t.Err() != nil || !src.Contiguous() || !dst.Contiguous() || src.Type != dst.Type || src.Ne != dst.Ne {
		return false
	}
	b.flush()
	t.flush()
	si, soff := b.locate(src)
	di, doff := t.locate(dst)
	a := b.a
	ctx := a.InitContext(a.TensorOver()*2+256, true)
	if ctx == 0 {
		return false
	}
	n := int64(src.Span())
	s := a.NewTensor1d(ctx, ggmlTypeI8, n)
	d := a.NewTensor1d(ctx, ggmlTypeI8, n)
	if a.TensorAlloc(b.mem.At(si).buf, s, b.mem.At(si).base+soff) != 0 || a.TensorAlloc(t.mem.At(di).buf, d, t.mem.At(di).base+doff) != 0 {
		a.Free(ctx)
		return false
	}
	a.TensorCopyAsync(b.be, t.be, s, d)
	b.mu.Lock()
	b.sent++
	// The copy may still read the tensors' descriptions: freed once done.
	b.pending = append(b.pending, func() { a.Free(ctx) })
	b.mu.Unlock()
	return true
}

// ggmlBackend lets CopyTensorAsync find the ggml backend inside the kinds'
// types (vulkan.Backend, cuda.Backend), which embed it.
func (b *Backend) ggmlBackend() *Backend { return b }

// Events. Like runtime/rpc's, an event is a position in the backend's
// stream of submissions, complete once the device is known to be past it;
// ggml_backend_synchronize makes it known. This keeps no ggml event per
// graphc event, which the scheduler makes per split and evaluation.

// Synchronize computes what was recorded and waits for the device.
func (b *Backend) Synchronize() {
	b.flush()
	b.mu.Lock()
	seq := b.sent
	b.mu.Unlock()
	b.ack(seq)
}

// ack waits for the device when submission seq is not known complete.
func (b *Backend) ack(seq uint64) {
	b.mu.Lock()
	if b.acked >= seq {
		b.mu.Unlock()
		return
	}
	sent := b.sent
	b.mu.Unlock()
	b.a.Synchronize(b.be)
	b.mu.Lock()
	pins, pending := b.pinned, b.pending
	b.pinned, b.pending = nil, nil
	b.acked = max(b.acked, sent)
	now := time.Now()
	kept := b.waiting[:0]
	for _, e := range b.waiting {
		if e.seq <= b.acked {
			e.when = now
		} else {
			kept = append(kept, e)
		}
	}
	clear(b.waiting[len(kept):])
	b.waiting = kept
	b.mu.Unlock()
	for _, f := range pending {
		f()
	}
	for _, p := range pins {
		p.Unpin()
	}
}

// NewEvent returns an event of this backend.
func (b *Backend) NewEvent() engine.Event { return &event{b: b} }

// WaitEvent: an event of this backend orders nothing (one stream); one of
// another backend is waited for here, on the host, since everything this
// backend does later is issued from the host after this call.
func (b *Backend) WaitEvent(e engine.Event) {
	if be, ok := e.(*event); ok && be.b == b {
		return
	}
	e.Synchronize()
}

type event struct {
	b    *Backend
	seq  uint64
	when time.Time
}

// Record computes what was recorded and marks the position after it.
func (e *event) Record() {
	e.b.flush()
	e.b.mu.Lock()
	defer e.b.mu.Unlock()
	e.seq = e.b.sent
	if e.seq <= e.b.acked {
		e.when = time.Now()
		return
	}
	e.when = time.Time{}
	e.b.waiting = append(e.b.waiting, e)
}

func (e *event) Synchronize() {
	e.b.mu.Lock()
	seq := e.seq
	e.b.mu.Unlock()
	e.b.ack(seq)
}

func (e *event) Done() bool {
	e.b.mu.Lock()
	defer e.b.mu.Unlock()
	return e.seq <= e.b.acked
}

func (e *event) When() time.Time {
	e.b.mu.Lock()
	defer e.b.mu.Unlock()
	return e.when
}

// Close waits for the device and frees its graphs, buffers and backend.
func (b *Backend) Close() {
	if b.be == 0 {
		return
	}
	b.Synchronize()
	b.dropGraphs()
	b.mem.Release(func(al *allocation) {
		b.a.Free(al.ctx)
		b.a.BufferFree(al.buf)
	})
	b.a.BackendFree(b.be)
	b.be = 0
}
