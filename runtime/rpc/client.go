package rpc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// DefaultTimeout bounds every read and write of a Client made by Dial with
// timeout 0, and the wait for a reply, which includes the server computing
// the graphs sent before it.
const DefaultTimeout = 60 * time.Second

// chunk is the most bytes read or written under one deadline: a large
// tensor moves as long as it keeps moving.
const chunk = 1 << 20

// Client is one connection to a ggml RPC server. Requests are serialized:
// ggml's server answers one at a time, in order. After an I/O error or a
// malformed reply the stream's framing is lost, so the client is broken
// for good and every later call returns the first error.
type Client struct {
	endpoint string
	timeout  time.Duration

	mu   sync.Mutex
	conn net.Conn
	err  error
	st   Traffic
	// lastGraph is, per device, the GRAPH_COMPUTE payload the server holds:
	// it keeps one graph per device, and an identical one is replayed with
	// GRAPH_RECOMPUTE instead of sent again.
	lastGraph map[uint32][]byte
}

// Traffic counts what a client moved: payload and framing bytes in each
// direction, and round trips (requests whose reply was waited for).
type Traffic struct {
	Sent, Received int64
	RoundTrips     int64
}

// Dial connects to a ggml RPC server at endpoint ("host:port") and says
// HELLO, checking the server's protocol version.
func Dial(endpoint string, timeout time.Duration) (*Client, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if _, _, err := net.SplitHostPort(endpoint); err != nil {
		return nil, fmt.Errorf("rpc endpoint %q: want host:port: %v", endpoint, err)
	}
	conn, err := net.DialTimeout("tcp", endpoint, timeout)
	if err != nil {
		return nil, fmt.Errorf("rpc server %s: %v (is ggml's rpc-server running there? see docs/rpc.md)", endpoint, err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetNoDelay(true) // requests are small and each waits for its reply
	}
	c := &Client{endpoint: endpoint, timeout: timeout, conn: conn}
	// Zero connection capabilities: plain TCP, no transport upgrade.
	p, err := c.call(cmdHello, make([]byte, connCapsSize), helloReplySize)
	if err != nil {
		conn.Close()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			// ggml's server accepts one client at a time and leaves the
			// next connected, unanswered, until the first disconnects.
			return nil, fmt.Errorf("%w (ggml's rpc-server serves one client at a time: is another client, another program, connected to %s? this one waits up to $GRAPHC_RPC_TIMEOUT for it to leave)", err, endpoint)
		}
		return nil, err // call names the server
	}
	if _, err := decodeHello(p); err != nil {
		conn.Close()
		return nil, fmt.Errorf("rpc server %s: %w", endpoint, err)
	}
	return c, nil
}

// Endpoint is the server's address as given to Dial.
func (c *Client) Endpoint() string { return c.endpoint }

// Err returns the error that broke the client, or nil.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Traffic returns what the client moved so far.
func (c *Client) Traffic() Traffic {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st
}

// Close closes the connection; the server then frees every buffer the
// client allocated.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = errors.New("client closed")
	}
	return c.conn.Close()
}

// abort closes the connection with a reset, not a FIN, after a failed
// request. A request that timed out may still be answered (by a server
// that was computing, or serving another client and now gets to this
// one), and ggml's server dies of SIGPIPE when its reply's second write
// meets a connection closed normally; a reset fails its first write,
// which it survives, dropping the connection.
func (c *Client) abort() {
	if tc, ok := c.conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.conn.Close()
}

// call sends a request and, when want >= 0, reads its reply of exactly
// want bytes. The commands ggml's server answers nothing (SET_TENSOR,
// GRAPH_COMPUTE, GRAPH_RECOMPUTE) pass want < 0.
func (c *Client) call(cmd command, payload []byte, want int) ([]byte, error) {
	return c.callParts(cmd, [][]byte{payload}, want)
}

func (c *Client) callParts(cmd command, parts [][]byte, want int) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	p, err := c.exchange(cmd, parts, want)
	if err != nil {
		c.err = fmt.Errorf("rpc server %s: %s: %w", c.endpoint, cmd, err)
		c.abort()
		return nil, c.err
	}
	return p, nil
}

func (c *Client) exchange(cmd command, parts [][]byte, want int) ([]byte, error) {
	size := 0
	for _, p := range parts {
		size += len(p)
	}
	hdr := make([]byte, 9, 9+size)
	hdr[0] = byte(cmd)
	binary.LittleEndian.PutUint64(hdr[1:], uint64(size))
	if size <= chunk { // one write for a small request
		for _, p := range parts {
			hdr = append(hdr, p...)
		}
		parts = nil
	}
	if err := c.write(hdr); err != nil {
		return nil, err
	}
	for _, p := range parts {
		if err := c.write(p); err != nil {
			return nil, err
		}
	}
	c.st.Sent += int64(9 + size)
	if want < 0 {
		return nil, nil
	}
	c.st.RoundTrips++
	p, err := readReply(deadlineReader{c}, want)
	if err != nil {
		return nil, err
	}
	c.st.Received += int64(8 + want)
	return p, nil
}

// write writes b in chunks, each under a fresh deadline.
func (c *Client) write(b []byte) error {
	for len(b) > 0 {
		n := min(len(b), chunk)
		c.conn.SetWriteDeadline(time.Now().Add(c.timeout))
		if _, err := c.conn.Write(b[:n]); err != nil {
			return timeoutHint(err, c.timeout)
		}
		b = b[n:]
	}
	return nil
}

// deadlineReader reads from the client's connection, each read under a
// fresh deadline of at most chunk bytes.
type deadlineReader struct{ c *Client }

func (r deadlineReader) Read(p []byte) (int, error) {
	r.c.conn.SetReadDeadline(time.Now().Add(r.c.timeout))
	n, err := r.c.conn.Read(p[:min(len(p), chunk)])
	if err != nil && err != io.EOF {
		err = timeoutHint(err, r.c.timeout)
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF // the server closed the connection: it refused the request or died
	}
	return n, err
}

func timeoutHint(err error, d time.Duration) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("no progress for %v: %w", d, err)
	}
	return err
}

func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// DeviceCount is the number of devices the server serves.
func (c *Client) DeviceCount() (int, error) {
	p, err := c.call(cmdDeviceCount, nil, 4)
	if err != nil {
		return 0, err
	}
	return int(binary.LittleEndian.Uint32(p)), nil
}

// DeviceMemory returns device dev's free and total memory in bytes.
func (c *Client) DeviceMemory(dev uint32) (free, total uint64, err error) {
	p, err := c.call(cmdGetDeviceMemory, le32(dev), 16)
	if err != nil {
		return 0, 0, err
	}
	v := u64s(p, 2)
	return v[0], v[1], nil
}

// Alignment is the alignment of device dev's buffers.
func (c *Client) Alignment(dev uint32) (uint64, error) {
	p, err := c.call(cmdGetAlignment, le32(dev), 8)
	if err != nil {
		return 0, err
	}
	return u64s(p, 1)[0], nil
}

// MaxSize is the largest buffer device dev allocates.
func (c *Client) MaxSize(dev uint32) (uint64, error) {
	p, err := c.call(cmdGetMaxSize, le32(dev), 8)
	if err != nil {
		return 0, err
	}
	return u64s(p, 1)[0], nil
}

// AllocBuffer allocates a buffer of size bytes on device dev and returns
// the server's handle of it and its size. The server's memory not
// sufficing is an error of its own; the client stays usable.
func (c *Client) AllocBuffer(dev uint32, size uint64) (remote, got uint64, err error) {
	req := binary.LittleEndian.AppendUint64(le32(dev), size)
	p, err := c.call(cmdAllocBuffer, req, 16)
	if err != nil {
		return 0, 0, err
	}
	v := u64s(p, 2)
	if v[0] == 0 {
		return 0, 0, fmt.Errorf("rpc server %s: device %d cannot allocate %d bytes", c.endpoint, dev, size)
	}
	return v[0], v[1], nil
}

// BufferBase is the address of the first byte of a buffer, as tensors'
// Data name it.
func (c *Client) BufferBase(remote uint64) (uint64, error) {
	p, err := c.call(cmdBufferGetBase, binary.LittleEndian.AppendUint64(nil, remote), 8)
	if err != nil {
		return 0, err
	}
	return u64s(p, 1)[0], nil
}

// FreeBuffer frees a buffer.
func (c *Client) FreeBuffer(remote uint64) error {
	_, err := c.call(cmdFreeBuffer, binary.LittleEndian.AppendUint64(nil, remote), 0)
	return err
}

// BufferClear sets every byte of a buffer to value.
func (c *Client) BufferClear(remote uint64, value byte) error {
	_, err := c.call(cmdBufferClear, append(binary.LittleEndian.AppendUint64(nil, remote), value), 0)
	return err
}

// SetTensor writes data at offset bytes into t's memory. Data over ggml's
// hash threshold is first offered by hash; a server that has it cached
// (started with -c) copies it from its cache and reports whether it did.
func (c *Client) SetTensor(t *wireTensor, offset uint64, data []byte) (cached bool, err error) {
	head := binary.LittleEndian.AppendUint64(t.append(nil), offset)
	if len(data) > hashThreshold {
		p, err := c.call(cmdSetTensorHash, binary.LittleEndian.AppendUint64(head, fnvHash(data)), 1)
		if err != nil {
			return false, err
		}
		if p[0] != 0 {
			return true, nil
		}
	}
	// SET_TENSOR has no reply: a rejected write closes the connection,
	// which the next request sees.
	_, err = c.callParts(cmdSetTensor, [][]byte{head, data}, -1)
	return false, err
}

// GetTensor reads size bytes at offset bytes into t's memory.
func (c *Client) GetTensor(t *wireTensor, offset, size uint64) ([]byte, error) {
	req := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(t.append(nil), offset), size)
	if size > 1<<40 {
		return nil, fmt.Errorf("rpc: GET_TENSOR of %d bytes", size)
	}
	return c.call(cmdGetTensor, req, int(size))
}

// CopyTensor copies src into dst, both in buffers of this server, and
// reports whether the server's backend could.
func (c *Client) CopyTensor(src, dst *wireTensor) (bool, error) {
	p, err := c.call(cmdCopyTensor, dst.append(src.append(nil)), 1)
	if err != nil {
		return false, err
	}
	return p[0] != 0, nil
}

// GraphCompute has device dev compute a graph: nodes are the ids of the
// tensors to compute, in order; tensors describes them and everything they
// read. There is no reply: the next request's reply comes once the graph is
// computed, and a graph the server rejects closes the connection. A graph
// byte for byte the one the device computed last (the same split at the
// same dims and pipeline slot, evaluation after evaluation) is replayed
// with GRAPH_RECOMPUTE: 4 bytes on the wire instead of ~300 per tensor.
func (c *Client) GraphCompute(dev uint32, nodes []uint64, tensors []wireTensor) error {
	b := make([]byte, 0, 12+8*len(nodes)+tensorSize*len(tensors))
	b = binary.LittleEndian.AppendUint32(b, dev)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(nodes)))
	for _, id := range nodes {
		b = binary.LittleEndian.AppendUint64(b, id)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(tensors)))
	for i := range tensors {
		b = tensors[i].append(b)
	}
	c.mu.Lock()
	same := bytes.Equal(c.lastGraph[dev], b)
	c.mu.Unlock()
	if same {
		return c.GraphRecompute(dev)
	}
	_, err := c.call(cmdGraphCompute, b, -1)
	c.mu.Lock()
	if c.lastGraph == nil {
		c.lastGraph = map[uint32][]byte{}
	}
	if err == nil {
		c.lastGraph[dev] = b
	} else {
		delete(c.lastGraph, dev)
	}
	c.mu.Unlock()
	return err
}

// GraphRecompute has device dev compute again the last graph it was sent.
func (c *Client) GraphRecompute(dev uint32) error {
	_, err := c.call(cmdGraphRecompute, le32(dev), -1)
	return err
}
