package rpc

import (
	"strings"
	"testing"
	"time"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/rpc/rpctest"
	"github.com/graphc/graphc/tensor"
)

func TestNewServerAbsent(t *testing.T) {
	SetEndpoints([]string{"127.0.0.1:1"})
	defer SetEndpoints(nil)
	_, err := New(0, 1)
	if err == nil || !strings.Contains(err.Error(), "rpc0") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("New with no server: %v; want an error naming rpc0 and the endpoint", err)
	}
	if _, err := New(1, 1); err == nil || !strings.Contains(err.Error(), "no endpoint") {
		t.Fatalf("New(1) with one endpoint: %v", err)
	}
}

// upload puts host tensor h in b's memory.
func upload(t *testing.T, b *Backend, h *tensor.Tensor) *tensor.Tensor {
	mem, err := b.Alloc(h.Span())
	if err != nil {
		t.Fatal(err)
	}
	d := &tensor.Tensor{Type: h.Type, Ne: h.Ne, Nb: h.Nb, Data: mem}
	b.SetTensor(d, h)
	return d
}

// addOnce computes a + a into dst on b and returns the host result.
func addOnce(b *Backend, dst, a *tensor.Tensor) tensor.Tensor {
	b.Add(dst, a, a)
	e := b.NewEvent()
	e.Record()
	e.Synchronize()
	out := tensor.NewTensor(a.Type, a.Ne)
	b.GetTensor(&out, dst)
	return out
}

// TestServerKilledBetween: a server killed between evaluations makes the
// next one fail quickly, with the endpoint in the error; a new backend
// works once a server is back.
func TestServerKilledBetween(t *testing.T) {
	s := rpctest.Start(t)
	b := newTestBackend(t, s.Endpoint)
	h := filled(tensor.F32, ne(64, 4), 1)
	a, dst := upload(t, b, &h), upload(t, b, &h)
	if out := addOnce(b, dst, a); out.F32s()[1] != 2*h.F32s()[1] || b.Err() != nil {
		t.Fatalf("before the kill: %v, %v", out.F32s()[1], b.Err())
	}
	s.Kill()
	start := time.Now()
	addOnce(b, dst, a)
	err := b.Err()
	if err == nil || !strings.Contains(err.Error(), s.Endpoint) {
		t.Fatalf("after the kill: Err = %v; want an error naming %s", err, s.Endpoint)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the failure took %v", d)
	}
	// Later calls are skipped, events complete.
	b.Synchronize()

	s2 := rpctest.Start(t)
	b2 := newTestBackend(t, s2.Endpoint)
	a2, dst2 := upload(t, b2, &h), upload(t, b2, &h)
	if out := addOnce(b2, dst2, a2); out.F32s()[1] != 2*h.F32s()[1] || b2.Err() != nil {
		t.Fatalf("a new backend on a new server: %v, %v", out.F32s()[1], b2.Err())
	}
}

// TestServerKilledDuring: a server killed while it computes a long graph
// is an error within a bounded time, not a hang.
func TestServerKilledDuring(t *testing.T) {
	if testing.Short() {
		t.Skip("computes for seconds")
	}
	s := rpctest.Start(t)
	b := newTestBackend(t, s.Endpoint)
	w := filled(tensor.F32, ne(1024, 1024), 1)
	x := filled(tensor.F32, ne(1024, 64), 2)
	wd, xd := upload(t, b, &w), upload(t, b, &x)
	out := upload(t, b, &tensor.Tensor{Type: tensor.F32, Ne: ne(1024, 64), Nb: tensor.ContiguousStrides(tensor.F32, ne(1024, 64)), Data: make([]byte, 1024*64*4)})
	for range 200 { // about 13 G multiply-adds: seconds on one thread
		b.MulMat(out, wd, xd, ops.MulMatParams{})
	}
	done := make(chan struct{})
	go func() { b.Synchronize(); close(done) }()
	time.Sleep(300 * time.Millisecond)
	select {
	case <-done:
		t.Skip("the server computed the graph before it could be killed")
	default:
	}
	s.Kill()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Synchronize still waiting 5 s after the server was killed")
	}
	if err := b.Err(); err == nil {
		t.Fatal("no error after the server was killed while computing")
	}
}

// TestBusyServer: ggml's server serves one client at a time and leaves
// the next unanswered. A client that gives up waiting says the server may
// be busy, and the server survives answering it later (a connection
// closed normally would kill it with SIGPIPE): the next client is served.
func TestBusyServer(t *testing.T) {
	s := rpctest.Start(t)
	first, err := Dial(s.Endpoint, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Dial(s.Endpoint, 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "another client") || !strings.Contains(err.Error(), s.Endpoint) {
		t.Fatalf("a second client of a busy server: %v; want an error saying %s may be busy", err, s.Endpoint)
	}
	first.Close()
	time.Sleep(300 * time.Millisecond) // the server answers the abandoned HELLO
	select {
	case <-s.Exited():
		t.Fatalf("the server died answering the client that gave up:\n%s", s.Log())
	default:
	}
	c, err := Dial(s.Endpoint, 5*time.Second)
	if err != nil {
		t.Fatalf("after the first client left: %v", err)
	}
	c.Close()
}

// TestGraphReplayed: the same split graph again is replayed with
// GRAPH_RECOMPUTE (a few bytes) and computes the same; a changed graph is
// sent whole.
func TestGraphReplayed(t *testing.T) {
	s := rpctest.Start(t)
	b := newTestBackend(t, s.Endpoint)
	h := filled(tensor.F32, ne(256, 16), 1)
	a, dst := upload(t, b, &h), upload(t, b, &h)
	sent := func(f func()) int64 {
		before, _ := b.Traffic()
		f()
		after, _ := b.Traffic()
		return after - before
	}
	var first, again tensor.Tensor
	full := sent(func() { first = addOnce(b, dst, a) })
	replay := sent(func() { again = addOnce(b, dst, a) })
	if b.Err() != nil || string(first.Data) != string(again.Data) {
		t.Fatalf("replayed graph: %v, results equal %v", b.Err(), string(first.Data) == string(again.Data))
	}
	// Both move the result back (16 KiB); the replay saves the graph's
	// tensors (~300 bytes each, three of them).
	if full-replay < 600 {
		t.Errorf("a replayed graph moved %d bytes, the first %d: no GRAPH_RECOMPUTE", replay, full)
	}
	other := upload(t, b, &h)
	if out := addOnce(b, other, a); out.F32s()[3] != 2*h.F32s()[3] || b.Err() != nil {
		t.Fatalf("a changed graph after a replay: %v, %v", out.F32s()[3], b.Err())
	}
}
