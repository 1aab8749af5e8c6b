package rpc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/graphc/graphc/runtime/rpc/rpctest"
)

func TestClientAgainstServer(t *testing.T) {
	s := rpctest.Start(t)
	c, err := Dial(s.Endpoint, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if n, err := c.DeviceCount(); err != nil || n != 1 {
		t.Fatalf("DeviceCount = %d, %v; want 1", n, err)
	}
	free, total, err := c.DeviceMemory(0)
	if err != nil || total == 0 || free > total {
		t.Fatalf("DeviceMemory = %d, %d, %v", free, total, err)
	}
	align, err := c.Alignment(0)
	if err != nil || align == 0 || align&(align-1) != 0 {
		t.Fatalf("Alignment = %d, %v", align, err)
	}
	if _, err := c.MaxSize(0); err != nil {
		t.Fatal(err)
	}
	remote, size, err := c.AllocBuffer(0, 4096)
	if err != nil || size < 4096 {
		t.Fatalf("AllocBuffer = %x, %d, %v", remote, size, err)
	}
	base, err := c.BufferBase(remote)
	if err != nil || base == 0 {
		t.Fatalf("BufferBase = %x, %v", base, err)
	}
	if err := c.BufferClear(remote, 7); err != nil {
		t.Fatal(err)
	}
	// A 256-byte u8-like f32 row at offset 128 of the buffer.
	tn := wireTensor{ID: 1, Type: 0, Buffer: remote, Data: base + 128, Ne: [4]uint32{64, 1, 1, 1}, Nb: [4]uint32{4, 256, 256, 256}}
	got, err := c.GetTensor(&tn, 0, 256)
	if err != nil || !bytes.Equal(got, bytes.Repeat([]byte{7}, 256)) {
		t.Fatalf("GetTensor after BufferClear(7) = %v, %v", got[:8], err)
	}
	data := make([]byte, 256)
	for i := range data {
		data[i] = byte(i)
	}
	if _, err := c.SetTensor(&tn, 0, data); err != nil {
		t.Fatal(err)
	}
	got, err = c.GetTensor(&tn, 0, 256)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("GetTensor after SetTensor = %v, %v", got[:8], err)
	}
	dst := tn
	dst.ID, dst.Data = 2, base+1024
	if ok, err := c.CopyTensor(&tn, &dst); err != nil || !ok {
		t.Fatalf("CopyTensor = %v, %v", ok, err)
	}
	if got, err = c.GetTensor(&dst, 0, 256); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("GetTensor of the copy = %v, %v", got[:8], err)
	}
	if err := c.FreeBuffer(remote); err != nil {
		t.Fatal(err)
	}
	tr := c.Traffic()
	if tr.RoundTrips < 10 || tr.Sent == 0 || tr.Received == 0 {
		t.Errorf("Traffic = %+v", tr)
	}
}

// TestClientLargeSetTensor offers data over the hash threshold by hash
// first; the server, without a cache directory, asks for the data.
func TestClientLargeSetTensor(t *testing.T) {
	s := rpctest.Start(t)
	c, err := Dial(s.Endpoint, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n := hashThreshold + 4096
	remote, _, err := c.AllocBuffer(0, uint64(n))
	if err != nil {
		t.Fatal(err)
	}
	base, err := c.BufferBase(remote)
	if err != nil {
		t.Fatal(err)
	}
	tn := wireTensor{ID: 1, Buffer: remote, Data: base, Ne: [4]uint32{uint32(n / 4), 1, 1, 1}, Nb: [4]uint32{4, uint32(n), uint32(n), uint32(n)}}
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i * 7)
	}
	cached, err := c.SetTensor(&tn, 0, data)
	if err != nil || cached {
		t.Fatalf("SetTensor = cached %v, %v; want the data sent", cached, err)
	}
	got, err := c.GetTensor(&tn, 0, uint64(n))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("GetTensor: %v", err)
	}
}

func TestDialNoServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ep := l.Addr().String()
	l.Close()
	_, err = Dial(ep, 2*time.Second)
	if err == nil || !strings.Contains(err.Error(), ep) {
		t.Fatalf("Dial of a closed port: %v; want an error naming %s", err, ep)
	}
}

// fakeServer accepts one connection and answers it with handle.
func fakeServer(t *testing.T, handle func(c net.Conn)) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		handle(c)
	}()
	return l.Addr().String()
}

func readRequest(c net.Conn) (command, []byte, error) {
	var hdr [9]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return 0, nil, err
	}
	p := make([]byte, binary.LittleEndian.Uint64(hdr[1:]))
	_, err := io.ReadFull(c, p)
	return command(hdr[0]), p, err
}

func reply(c net.Conn, p []byte) {
	c.Write(append(binary.LittleEndian.AppendUint64(nil, uint64(len(p))), p...))
}

func TestDialVersionMismatch(t *testing.T) {
	for _, v := range [][3]byte{{4, 0, 0}, {6, 0, 0}, {5, 2, 0}} {
		ep := fakeServer(t, func(c net.Conn) {
			readRequest(c)
			reply(c, append([]byte{v[0], v[1], v[2], 0}, make([]byte, connCapsSize)...))
		})
		_, err := Dial(ep, 2*time.Second)
		if err == nil || !strings.Contains(err.Error(), "5.1.0") || !strings.Contains(err.Error(), string('0'+v[0])+"."+string('0'+v[1])) {
			t.Errorf("server %v: Dial = %v; want an error naming both versions", v, err)
		}
	}
	// An older minor version is compatible.
	ep := fakeServer(t, func(c net.Conn) {
		readRequest(c)
		reply(c, append([]byte{5, 0, 3, 0}, make([]byte, connCapsSize)...))
		time.Sleep(time.Second)
	})
	c, err := Dial(ep, 2*time.Second)
	if err != nil {
		t.Fatalf("server 5.0.3: %v", err)
	}
	c.Close()
}

// TestSilentServer: a server that accepts and never answers is an error
// within the timeout, not a hang.
func TestSilentServer(t *testing.T) {
	ep := fakeServer(t, func(c net.Conn) { time.Sleep(5 * time.Second) })
	start := time.Now()
	_, err := Dial(ep, 300*time.Millisecond)
	if err == nil || time.Since(start) > 3*time.Second {
		t.Fatalf("Dial of a silent server: %v after %v", err, time.Since(start))
	}
}

// TestBrokenClientStaysBroken: after a malformed reply every call fails
// with the first error.
func TestBrokenClientStaysBroken(t *testing.T) {
	ep := fakeServer(t, func(c net.Conn) {
		readRequest(c)
		reply(c, append([]byte{5, 1, 0, 0}, make([]byte, connCapsSize)...))
		readRequest(c)
		reply(c, []byte{1, 2, 3}) // DEVICE_COUNT answers 4 bytes
		time.Sleep(time.Second)
	})
	c, err := Dial(ep, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.DeviceCount()
	if !errors.Is(err, errMalformed) {
		t.Fatalf("DeviceCount = %v; want a malformed reply", err)
	}
	if _, err2 := c.Alignment(0); err2 != err {
		t.Fatalf("after a malformed reply: %v; want %v", err2, err)
	}
}

func FuzzReply(f *testing.F) {
	f.Add([]byte{4, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}, 4)
	f.Add([]byte{28, 0, 0, 0, 0, 0, 0, 0, 5, 1, 0, 0}, helloReplySize)
	f.Add([]byte{255, 255, 255, 255, 255, 255, 255, 255}, 8)
	f.Add([]byte{}, 0)
	f.Fuzz(func(t *testing.T, b []byte, want int) {
		if want < 0 || want > 1<<16 {
			return
		}
		p, err := readReply(bytes.NewReader(b), want)
		if err != nil {
			return
		}
		if len(p) != want || len(b) < 8+want || binary.LittleEndian.Uint64(b) != uint64(want) {
			t.Fatalf("accepted %d bytes from %x for want %d", len(p), b, want)
		}
		if want == helloReplySize {
			h, err := decodeHello(p)
			if err == nil && (h.Major != ProtoMajor || h.Minor > ProtoMinor) {
				t.Fatalf("accepted version %v", h)
			}
		}
	})
}
