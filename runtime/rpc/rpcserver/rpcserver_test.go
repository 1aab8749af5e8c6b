package rpcserver

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func binaryOrSkip(t *testing.T) string {
	t.Helper()
	bin, err := Find()
	if errors.Is(err, ErrNoBinary) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestCancelKills: the context's end (graphc's Ctrl-C) kills the server
// and frees its port.
func TestCancelKills(t *testing.T) {
	bin := binaryOrSkip(t)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx, bin, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Kill()
	if !strings.HasPrefix(s.Endpoint, "127.0.0.1:") || s.Pid() <= 0 {
		t.Fatalf("endpoint %q, pid %d", s.Endpoint, s.Pid())
	}
	cancel()
	select {
	case <-s.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("server alive 5 s after the context ended")
	}
	if c, err := net.DialTimeout("tcp", s.Endpoint, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections", s.Endpoint)
	}
	s.Kill() // a second kill does nothing
}

// TestStartCanceled: a context that has ended starts nothing.
func TestStartCanceled(t *testing.T) {
	bin := binaryOrSkip(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if s, err := Start(ctx, bin, ""); err == nil {
		s.Kill()
		t.Fatal("started a server with a canceled context")
	}
}

func TestFindAbsent(t *testing.T) {
	t.Setenv(EnvBinary, filepath.Join(t.TempDir(), "nothing"))
	if _, err := Find(); err == nil || !strings.Contains(err.Error(), EnvBinary) {
		t.Errorf("a wrong $%s: %v", EnvBinary, err)
	}
	t.Setenv(EnvBinary, "")
	t.Setenv("PATH", t.TempDir())
	_, err := Find()
	if !errors.Is(err, ErrNoBinary) || !strings.Contains(err.Error(), "-DGGML_RPC=ON") {
		t.Errorf("no binary anywhere: %v", err)
	}
}
