package rpc

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/tensor"
)

var (
	_ engine.Kernels = (*Backend)(nil)
	_ engine.Backend = (*Backend)(nil)
)

var (
	endpointsMu  sync.Mutex
	endpointsSet []string
)

// SetEndpoints binds rpc<N> to endpoints[N] for the backends made from now
// on, overriding $GRAPHC_RPC.
func SetEndpoints(endpoints []string) {
	endpointsMu.Lock()
	defer endpointsMu.Unlock()
	endpointsSet = append([]string{}, endpoints...)
}

// UseEndpoints binds rpc<N> to the N-th endpoint of a comma-separated
// list, the -rpc flag of generated programs.
func UseEndpoints(list string) error {
	eps := ParseEndpoints(list)
	if len(eps) == 0 {
		return fmt.Errorf("-rpc %q: want host:port[,host:port…]", list)
	}
	SetEndpoints(eps)
	return nil
}

// ParseEndpoints splits a comma-separated endpoint list, as the -rpc flag
// and $GRAPHC_RPC give it.
func ParseEndpoints(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// Endpoints returns the endpoints rpc<N> are bound to.
func Endpoints() []string {
	endpointsMu.Lock()
	defer endpointsMu.Unlock()
	if endpointsSet != nil {
		return append([]string{}, endpointsSet...)
	}
	return ParseEndpoints(os.Getenv(backend.RPCEndpointsEnv))
}

// Backend is device 0 of the ggml RPC server at the N-th endpoint,
// "rpc<N>". Kernels are recorded into a ggml graph, sent as one
// GRAPH_COMPUTE when something needs their results (an event, a
// synchronization, a copy out); events are positions in the stream of
// graphs sent, complete once a later reply shows the server past them.
// Memory is the server's: Alloc returns an address range that stands for a
// remote buffer and has no access, as runtime/sim's does.
//
// A failed request (the server gone, a reply malformed, a deadline passed)
// is the backend's failure for good (Err): later kernels and copies are
// skipped and events complete, so that nothing waits on a dead server. A
// new backend, with a new connection, works once the server is back.
type Backend struct {
	n        int
	name     string
	dev      uint32
	endpoint string
	bt       backend.BufferType
	c        *Client

	mu       sync.Mutex // err, sent, acked, waiting, traffic: Event.Synchronize may come from any goroutine
	err      error
	sent     uint64   // graphs sent
	acked    uint64   // graphs known computed
	waiting  []*event // recorded, not yet known complete
	traffic  Traffic
	g        graph
	mem      engine.DeviceMemory[allocation]
	maxAlloc uint64
}

// allocation is one remote buffer: the server's names for the buffer and
// its first byte.
type allocation struct {
	remote uint64
	base   uint64
}

// New connects to the N-th endpoint. threads is the server's to choose
// (rpc-server -t).
func New(n, threads int) (*Backend, error) {
	eps := Endpoints()
	name := fmt.Sprintf("rpc%d", n)
	if n >= len(eps) {
		return nil, fmt.Errorf("%s: no endpoint for it: %d given (give -rpc host:port[,host:port…] or set %s; rpc<N> is the N-th)", name, len(eps), backend.RPCEndpointsEnv)
	}
	ep := eps[n]
	c, err := connect(ep)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	b := &Backend{n: n, name: name, endpoint: ep, c: c, bt: backend.RPC(n).BufferType}
	fail := func(err error) (*Backend, error) {
		release(c)
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if cnt, err := c.DeviceCount(); err != nil {
		return fail(err)
	} else if cnt < 1 {
		return fail(fmt.Errorf("rpc server %s serves no device", ep))
	}
	align, err := c.Alignment(b.dev)
	if err != nil {
		return fail(err)
	}
	if b.maxAlloc, err = c.MaxSize(b.dev); err != nil {
		return fail(err)
	}
	b.bt.Alignment = int64(align)
	b.bt.MaxSize = int64(min(b.maxAlloc, 1<<62))
	return b, nil
}

// timeout is $GRAPHC_RPC_TIMEOUT (a Go duration) or DefaultTimeout.
func timeout() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("GRAPHC_RPC_TIMEOUT")); err == nil && d > 0 {
		return d
	}
	return DefaultTimeout
}

func (b *Backend) Name() string                   { return b.name }
func (b *Backend) BufferType() backend.BufferType { return b.bt }
func (b *Backend) Async() bool                    { return true }

// Describe names the device as ggml does, RPC<dev>[endpoint].
func (b *Backend) Describe() string { return fmt.Sprintf("RPC%d[%s]", b.dev, b.endpoint) }

// Traffic is what this backend's requests moved.
func (b *Backend) Traffic() (bytes, roundTrips int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.traffic.Sent + b.traffic.Received, b.traffic.RoundTrips
}

// Err returns the failure that stopped the backend, or nil.
func (b *Backend) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// do runs one request (or a few) on the client, counting its traffic, and
// makes its error the backend's failure.
func (b *Backend) do(f func(c *Client) error) error {
	b.mu.Lock()
	err := b.err
	b.mu.Unlock()
	if err != nil {
		return err
	}
	before := b.c.Traffic()
	err = f(b.c)
	after := b.c.Traffic()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.traffic.Sent += after.Sent - before.Sent
	b.traffic.Received += after.Received - before.Received
	b.traffic.RoundTrips += after.RoundTrips - before.RoundTrips
	if err != nil && b.err == nil {
		b.err = fmt.Errorf("%s (%s): %w", b.name, b.Describe(), err)
		b.acked = b.sent // nothing more will complete: events must not wait
		b.completeWaiting(time.Now())
	}
	return err
}

// Alloc allocates a remote buffer of size zeroed bytes and returns its
// handle.
func (b *Backend) Alloc(size int) ([]byte, error) {
	if size < 0 {
		return nil, fmt.Errorf("%s: alloc of %d bytes", b.name, size)
	}
	if size == 0 {
		return nil, nil
	}
	var a allocation
	err := b.do(func(c *Client) error {
		var err error
		if a.remote, _, err = c.AllocBuffer(b.dev, uint64(size)); err != nil {
			return err
		}
		if a.base, err = c.BufferBase(a.remote); err != nil {
			return err
		}
		return c.BufferClear(a.remote, 0) // ggml-cpu's buffers come uninitialized
	})
	if err != nil {
		return nil, err
	}
	handle, err := b.mem.Add(size, a)
	if err != nil {
		return nil, fmt.Errorf("%s: alloc of %d bytes: %v", b.name, size, err)
	}
	return handle, nil
}

// wire describes t, whose Data is a range of one of the backend's
// handles, as the server knows it. A tensor outside the backend's memory
// is a bug in the caller (a missing copy); one too large for the
// protocol's 32-bit shapes and strides is an error.
func (b *Backend) wire(t *tensor.Tensor) (wireTensor, error) {
	w := wireTensor{Type: uint32(t.Type)}
	for i := range 4 {
		if t.Ne[i] < 0 || t.Ne[i] > math32 || t.Nb[i] < 0 || t.Nb[i] > math32 {
			return w, fmt.Errorf("a %s%v tensor with strides %v: ggml's RPC protocol carries shapes and strides as 32-bit numbers", t.Type, t.Ne, t.Nb)
		}
		w.Ne[i], w.Nb[i] = uint32(t.Ne[i]), uint32(t.Nb[i])
	}
	if len(t.Data) == 0 {
		return w, nil
	}
	i, off := b.mem.Locate(b.name, t)
	a := b.mem.At(i)
	w.Buffer, w.Data = a.remote, a.base+uint64(off)
	return w, nil
}

const math32 = 1<<32 - 1

// fail records err as the backend's failure.
func (b *Backend) fail(err error) {
	b.do(func(*Client) error { return err })
}

// launch records op as a node computing dst from the op's operands (nil:
// an optional one left out), with the op_params params, the op's unary
// sub-op added.
func (b *Backend) launch(op ops.Op, params [16]int32, dst *tensor.Tensor, srcs ...*tensor.Tensor) {
	if b.Err() != nil {
		return
	}
	info := op.Info()
	if info.Unary >= 0 {
		params[0] = info.Unary // ggml_unary_impl stores the sub-op there
	}
	node, err := b.wire(dst)
	if err != nil {
		b.fail(err)
		return
	}
	node.Op, node.OpParams = uint32(info.GGMLOp), params
	// ggml's backends skip nodes without the flag ggml_build_forward sets.
	node.Flags = flagCompute
	for i, s := range srcs {
		if s == nil {
			continue
		}
		leaf, err := b.wire(s)
		if err != nil {
			b.fail(err)
			return
		}
		node.Src[i] = b.g.add(leaf)
	}
	b.g.nodes = append(b.g.nodes, b.g.add(node))
}

// flush sends the recorded graph.
func (b *Backend) flush() {
	if len(b.g.nodes) == 0 {
		return
	}
	err := b.do(func(c *Client) error { return c.GraphCompute(b.dev, b.g.nodes, b.g.tensors) })
	b.g.reset()
	if err == nil {
		b.mu.Lock()
		b.sent++
		b.mu.Unlock()
	}
}

// ack waits until the server is past graph seq: the reply to a request sent
// after it comes once it is computed.
func (b *Backend) ack(seq uint64) {
	b.mu.Lock()
	if b.acked >= seq || b.err != nil {
		b.mu.Unlock()
		return
	}
	sent := b.sent
	b.mu.Unlock()
	if b.do(func(c *Client) error { _, err := c.DeviceCount(); return err }) != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.acked = max(b.acked, sent)
	b.completeWaiting(time.Now())
}

// completeWaiting stamps the events now known complete; b.mu is held.
func (b *Backend) completeWaiting(now time.Time) {
	keep := b.waiting[:0]
	for _, e := range b.waiting {
		if e.seq <= b.acked {
			e.when = now
		} else {
			keep = append(keep, e)
		}
	}
	clear(b.waiting[len(keep):])
	b.waiting = keep
}

// Kernels: recorded.

// Copies.

// SetTensor writes host tensor src into dst, in remote memory, now. A dst
// with gaps between its elements is read first so that the gaps keep
// their bytes.
func (b *Backend) SetTensor(dst, src *tensor.Tensor) {
	w, err := b.wire(dst)
	if err != nil {
		b.fail(err)
		return
	}
	span := dst.Span()
	tmp := tensor.Tensor{Type: dst.Type, Ne: dst.Ne, Nb: dst.Nb, Data: tensor.NewBuffer(span)}
	b.do(func(c *Client) error {
		if !dst.Contiguous() {
			old, err := c.GetTensor(&w, 0, uint64(span))
			if err != nil {
				return err
			}
			copy(tmp.Data, old)
		}
		tensor.Copy(&tmp, src)
		_, err := c.SetTensor(&w, 0, tmp.Data)
		return err
	})
}

// GetTensor sends the recorded kernels, then reads src, in remote memory,
// into host tensor dst. After a failure dst is left as it was.
func (b *Backend) GetTensor(dst, src *tensor.Tensor) {
	b.flush()
	w, err := b.wire(src)
	if err != nil {
		b.fail(err)
		return
	}
	var data []byte
	if b.do(func(c *Client) error { data, err = c.GetTensor(&w, 0, uint64(src.Span())); return err }) != nil {
		return
	}
	tensor.Copy(dst, &tensor.Tensor{Type: src.Type, Ne: src.Ne, Nb: src.Nb, Data: data})
}

// GetTensorAsync is GetTensor: the server answers after the work sent
// before, so the copy is complete when it returns.
func (b *Backend) GetTensorAsync(dst, src *tensor.Tensor) { b.GetTensor(dst, src) }

// CopyTensorAsync copies src into dst, on another rpc backend of the same
// server, with COPY_TENSOR; between servers (or to other kinds) it reports
// false and the caller copies through the host.
func (b *Backend) CopyTensorAsync(to engine.Backend, dst, src *tensor.Tensor) bool {
	t, ok := to.(*Backend)
	if !ok || t.c != b.c {
		return false
	}
	b.flush()
	t.flush()
	ws, err := b.wire(src)
	if err != nil {
		b.fail(err)
		return true
	}
	wd, err := t.wire(dst)
	if err != nil {
		b.fail(err)
		return true
	}
	copied := true
	b.do(func(c *Client) error { copied, err = c.CopyTensor(&ws, &wd); return err })
	return copied
}

// Events.

// Synchronize sends the recorded kernels and waits until the server has
// computed everything sent.
func (b *Backend) Synchronize() {
	b.flush()
	b.mu.Lock()
	seq := b.sent
	b.mu.Unlock()
	b.ack(seq)
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

// event is a position in the backend's stream of graphs.
type event struct {
	b    *Backend
	seq  uint64
	when time.Time // when it was known complete
}

// Record sends the recorded kernels and marks the position after them.
func (e *event) Record() {
	b := e.b
	b.flush()
	b.mu.Lock()
	defer b.mu.Unlock()
	e.seq = b.sent
	if e.seq <= b.acked {
		e.when = time.Now()
		return
	}
	e.when = time.Time{}
	b.waiting = append(b.waiting, e)
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

// Close frees the remote buffers and closes the connection; the server
// frees anything left when the connection closes anyway.
func (b *Backend) Close() {
	if b.c == nil {
		return
	}
	b.mem.Release(func(a *allocation) {
		if b.Err() == nil {
			b.do(func(c *Client) error { return c.FreeBuffer(a.remote) })
		}
	})
	release(b.c)
	b.c = nil
}

// pool shares one connection per endpoint among its backends: ggml's
// server serves one client at a time, and COPY_TENSOR copies only between
// buffers of one connection.
var pool = struct {
	sync.Mutex
	conns map[string]*pooled
}{conns: map[string]*pooled{}}

type pooled struct {
	c    *Client
	refs int
}

// connect returns the endpoint's shared client, dialing a new one when
// there is none or the last one broke.
func connect(ep string) (*Client, error) {
	pool.Lock()
	defer pool.Unlock()
	if p := pool.conns[ep]; p != nil && p.c.Err() == nil {
		p.refs++
		return p.c, nil
	}
	c, err := Dial(ep, timeout())
	if err != nil {
		return nil, err
	}
	pool.conns[ep] = &pooled{c: c, refs: 1}
	return c, nil
}

// release drops a reference to c, closing it with the last one.
func release(c *Client) {
	pool.Lock()
	defer pool.Unlock()
	p := pool.conns[c.endpoint]
	if p == nil || p.c != c {
		c.Close() // replaced after it broke
		return
	}
	if p.refs--; p.refs == 0 {
		delete(pool.conns, c.endpoint)
		c.Close()
	}
}
