// Package rpc is backend kind rpc<N>: a device on another host (or another
// process) served by ggml's RPC server, ggml-org/ggml's
// src/ggml-rpc/ggml-rpc.cpp, spoken to in pure Go over TCP.
//
// Client speaks the protocol (version 5.1.0, ggml commit d99724f2): one
// request and, for most commands, one reply at a time, with a deadline on
// every read and write so that a dead server is an error, never a hang.
// Backend records the kernels of a split as a ggml graph and sends it as one
// GRAPH_COMPUTE when something must see its results; its memory is the
// server's, reached through the address-range handles Alloc returns.
//
// Endpoints are bound at run time, not in the plan: rpc<N> is the N-th of
// the endpoints given to SetEndpoints (the -rpc flag of graphc run and of
// generated programs) or else listed in $GRAPHC_RPC, comma-separated.
package rpc

// Notes for whoever works on this next.
//
// Servers for tests and for `graphc ggml-check -run -rpc` are started and
// killed (by pid, also when a context ends) by package rpcserver;
// rpctest only adds testing.TB's skip and cleanup. examples/llamarpc is
// the Model-level test bed: pipelined llama over two servers, servers
// killed between and during evaluations, a server busy with another
// client.
//
// ggml's server serves one client at a time: a second connection is
// accepted by the kernel and left unanswered, so a second program's HELLO
// waits (Dial's error then says so). It dies of SIGPIPE when its reply
// meets a connection the client closed normally after giving up, so a
// failed request closes with a reset (Client.abort); keep it that way.
// Backends of one process share a connection per endpoint (pool), which is
// why two Models in one process never meet that limit.
//
// Backend.Describe is ggml's name, RPC<device on the server>[endpoint], so
// rpc1's errors read "rpc1 (RPC0[host:port])": the 0 is the server's
// device, not ours.
//
// Unexplained, seen in examples/llamarpc's statistics with four copies in
// flight: a split on rpc0 reports wire bytes in 0 round trips and the split
// on rpc1 a compute time of 0s. Events complete when a later reply is read,
// so a split's time and round trips can land on another split's; the
// totals are right, the per-split attribution has not been checked.
//
// No recorded trace has two RPC devices; ggml-check -rpc's two-server path
// is tested with llama on rpc0 and rpc1 (cmd/graphc/internal/cli
// TestRPCServersTwoDevices). A trace recorded with two servers would test
// it against ggml itself.
