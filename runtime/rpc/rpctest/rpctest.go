// Package rpctest starts ggml's RPC server for tests: the binary built from
// the ggml commit the protocol is read from, at ../shared/ggml/ggml-rpc-server
// next to the repository (or $GRAPHC_RPC_SERVER). Tests that need it skip,
// saying how to get it, where it is absent.
package rpctest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Binary returns the server binary's path, or "" and why it is missing.
func Binary() (string, string) {
	if p := os.Getenv("GRAPHC_RPC_SERVER"); p != "" {
		return p, ""
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err.Error()
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "..", "shared", "ggml", "ggml-rpc-server")
			if _, err := os.Stat(p); err != nil {
				return "", fmt.Sprintf("no ggml rpc-server at %s: build ggml (commit d99724f2) with -DGGML_RPC=ON and put its rpc-server there, or set GRAPHC_RPC_SERVER", p)
			}
			return p, ""
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", "no go.mod above the working directory"
		}
		dir = up
	}
}

// Server is a running ggml RPC server.
type Server struct {
	Endpoint string
	cmd      *exec.Cmd
	stderr   *syncBuffer
	exited   chan struct{}
	once     sync.Once
}

// Start starts a server on a free loopback port, waits until it listens,
// and kills it when the test ends. It skips the test when the binary is
// missing.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, why := Binary()
	if bin == "" {
		t.Skip(why)
	}
	s, err := StartAt(bin, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Kill)
	return s
}

// StartAt starts bin on endpoint ("" for a free loopback port) and waits
// until it listens. The caller kills it.
func StartAt(bin, endpoint string) (*Server, error) {
	if endpoint == "" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		endpoint = l.Addr().String()
		l.Close()
	}
	host, port, err := net.SplitHostPort(endpoint)
	if err != nil {
		return nil, err
	}
	if _, err := strconv.Atoi(port); err != nil {
		return nil, fmt.Errorf("endpoint %s: port %q", endpoint, port)
	}
	s := &Server{Endpoint: endpoint, stderr: &syncBuffer{}}
	s.cmd = exec.Command(bin, "-H", host, "-p", port, "-t", "1")
	s.cmd.Stdout, s.cmd.Stderr = s.stderr, s.stderr
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	s.exited = make(chan struct{})
	go func() { s.cmd.Wait(); close(s.exited) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("ggml rpc-server on %s exited: %s", endpoint, s.stderr.String())
		default:
		}
		// A probe connection closed before HELLO is dropped by the server,
		// which then accepts the next client.
		if c, err := net.DialTimeout("tcp", endpoint, time.Second); err == nil {
			c.Close()
			time.Sleep(50 * time.Millisecond)
			return s, nil
		}
		if time.Now().After(deadline) {
			s.Kill()
			return nil, fmt.Errorf("ggml rpc-server on %s did not listen within 20 s: %s", endpoint, s.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Kill kills the server by its pid and waits for it to go.
func (s *Server) Kill() {
	s.once.Do(func() {
		s.cmd.Process.Signal(syscall.SIGKILL)
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
		}
	})
}

// Log is what the server printed.
func (s *Server) Log() string { return s.stderr.String() }

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
