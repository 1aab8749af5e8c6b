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
