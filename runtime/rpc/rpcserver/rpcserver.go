// Package rpcserver starts and kills ggml's RPC server (rpc-server, built
// from ggml with -DGGML_RPC=ON) on loopback, for the tests of runtime/rpc
// (through runtime/rpc/rpctest) and for `graphc ggml-check -run -rpc`,
// which run graphs on real servers without a cluster.
//
// A server is a child process killed by its pid, never by name: other
// servers on the machine (a user's, another test's) are not ours to end.
package rpcserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// EnvBinary names the environment variable that, when set, is the
// server binary's path.
const EnvBinary = "GRAPHC_RPC_SERVER"

// ErrNoBinary is wrapped by Find's error when no server binary is found,
// so that tests can skip where the binary is absent and fail otherwise.
var ErrNoBinary = errors.New("no ggml rpc-server")

// Find returns the server binary: $GRAPHC_RPC_SERVER, else rpc-server
// or ggml-rpc-server on $PATH.
func Find() (string, error) {
	if p := os.Getenv(EnvBinary); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("$%s=%s: %w", EnvBinary, p, err)
		}
		return p, nil
	}
	for _, name := range []string{"rpc-server", "ggml-rpc-server"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w on $PATH: build ggml (commit d99724f2) with -DGGML_RPC=ON and put its rpc-server on $PATH, or set $%s to it", ErrNoBinary, EnvBinary)
}

// Server is a running ggml RPC server that this process started.
type Server struct {
	// Endpoint is where it listens, host:port.
	Endpoint string

	cmd    *exec.Cmd
	log    *syncBuffer
	exited chan struct{}
	once   sync.Once
}

// startTimeout bounds the wait for a new server to listen; ggml's server
// listens within milliseconds, so this only stops a wedged start from
// hanging the caller.
const startTimeout = 20 * time.Second

// Start starts bin on endpoint ("" for a free loopback port) with one
// compute thread and waits until it listens. The server is killed when ctx
// ends (Ctrl-C in graphc), or by Kill; callers defer Kill so that errors
// kill it too.
func Start(ctx context.Context, bin, endpoint string) (*Server, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if endpoint != "" {
		return start(ctx, bin, endpoint)
	}
	// A free port found by listening and closing can be taken by someone
	// else before the server binds it; the server then exits at once and a
	// new port is tried.
	var err error
	for range 3 {
		var ep string
		if ep, err = freeLoopbackPort(); err != nil {
			return nil, err
		}
		var s *Server
		if s, err = start(ctx, bin, ep); err == nil || ctx.Err() != nil {
			return s, err
		}
	}
	return nil, err
}

func freeLoopbackPort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func start(ctx context.Context, bin, endpoint string) (*Server, error) {
	host, port, err := net.SplitHostPort(endpoint)
	if err != nil {
		return nil, err
	}
	if _, err := strconv.Atoi(port); err != nil {
		return nil, fmt.Errorf("endpoint %s: port %q is not a number", endpoint, port)
	}
	s := &Server{Endpoint: endpoint, log: &syncBuffer{}, exited: make(chan struct{})}
	s.cmd = exec.Command(bin, "-H", host, "-p", port, "-t", "1")
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting ggml rpc-server %s: %w", bin, err)
	}
	go func() { s.cmd.Wait(); close(s.exited) }()
	go func() {
		select {
		case <-ctx.Done():
			s.Kill()
		case <-s.exited:
		}
	}()
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("ggml rpc-server on %s exited: %s", endpoint, s.log.String())
		case <-ctx.Done():
			s.Kill()
			return nil, ctx.Err()
		default:
		}
		// The server drops a connection closed before HELLO and accepts
		// the next client, so a probe costs nothing.
		if c, err := net.DialTimeout("tcp", endpoint, time.Second); err == nil {
			c.Close()
			// Let the server notice the probe's close and go back to
			// accept before the first real client dials.
			time.Sleep(50 * time.Millisecond)
			return s, nil
		}
		if time.Now().After(deadline) {
			s.Kill()
			return nil, fmt.Errorf("ggml rpc-server on %s did not listen within %v: %s", endpoint, startTimeout, s.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Kill kills the server by its pid and waits (a few seconds at most) until
// it is gone. Killing a server twice, or one that died, does nothing.
func (s *Server) Kill() {
	s.once.Do(func() {
		s.cmd.Process.Kill() // SIGKILL: the server has nothing to save
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
		}
	})
}

// Pid is the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Exited is closed once the server process is gone.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// Log is what the server printed on stdout and stderr.
func (s *Server) Log() string { return s.log.String() }

// syncBuffer is the server's output, written by exec's copying goroutine
// while Log may read it.
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
