// Package rpctest starts ggml's RPC server for tests: $GRAPHC_RPC_SERVER,
// or rpc-server on $PATH, built from the ggml commit the protocol is read
// from (d99724f2) or a compatible one. Tests that need it skip, saying how
// to get it, where it is absent.
package rpctest

import (
	"context"
	"errors"
	"testing"

	"github.com/graphc/graphc/runtime/rpc/rpcserver"
)

// Binary returns the server binary's path, or "" and why it is missing.
func Binary() (string, string) {
	p, err := rpcserver.Find()
	if err != nil {
		return "", err.Error()
	}
	return p, ""
}

// Server is a running ggml RPC server.
type Server = rpcserver.Server

// Start starts a server on a free loopback port, waits until it listens,
// and kills it when the test ends. It skips the test when the binary is
// missing.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := rpcserver.Find()
	if errors.Is(err, rpcserver.ErrNoBinary) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	s, err := rpcserver.Start(context.Background(), bin, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Kill)
	return s
}

// StartAt starts bin on endpoint ("" for a free loopback port) and waits
// until it listens. The caller kills it.
func StartAt(bin, endpoint string) (*Server, error) {
	return rpcserver.Start(context.Background(), bin, endpoint)
}
