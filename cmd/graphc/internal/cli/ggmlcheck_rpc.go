package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/ggmltrace"
	"github.com/graphc/graphc/runtime/rpc/rpcserver"
)

// rpcRun is ggml-check -run -rpc's report: ggml's own plan of a trace with
// its RPC devices on real ggml rpc-servers, as when the trace was recorded,
// compared with what ggml recorded.
type rpcRun struct {
	// Backends maps the trace's backends, in order, to the ones run;
	// Endpoints are the servers rpc0, rpc1, … were served by.
	Backends  []string `json:"backends"`
	Endpoints []string `json:"endpoints"`
	// MaxDiffGGML is the largest difference from ggml's recorded output,
	// absolute, relative for values above 1; Tolerance is -run's.
	MaxDiffGGML float64 `json:"max_diff_ggml"`
	Tolerance   float64 `json:"tolerance"`
	// BytesCopied is what the run reported copying between backends;
	// GGMLBytesCopied what ggml moved in the recorded evaluation (of an
	// expert weight read by MUL_MAT_ID, only the experts the batch used).
	BytesCopied     int64 `json:"bytes_copied"`
	GGMLBytesCopied int64 `json:"ggml_bytes_copied"`
}

// rpcTolerance is what -rpc allows: -run's, since the CPU's share of the
// graph is graphc's kernels either way.
const rpcTolerance = 1e-4

// runTraceRPC runs ggml's own plan of the trace with its RPC devices on
// ggml rpc-servers started for the run.
func runTraceRPC(ctx context.Context, tr *ggmltrace.Trace) (*rpcRun, error) {
	run, err := runTraceOn(ctx, tr, ggmlOnRPC)
	if err != nil {
		return nil, err
	}
	return &rpcRun{
		Backends: run.backends, Endpoints: run.endpoints,
		MaxDiffGGML: diffFromGGML(tr, run.values), Tolerance: rpcTolerance,
		BytesCopied: run.bytesCopied, GGMLBytesCopied: tr.Result.BytesMoved(),
	}, nil
}

// summary is the rpc run in the words of ggml-check's summary line.
func (r *rpcRun) summary(tr *ggmltrace.Trace) string {
	on := make([]string, len(r.Backends))
	k := 0
	for i, b := range r.Backends {
		on[i] = b
		if strings.HasPrefix(b, "rpc") {
			on[i] = fmt.Sprintf("%s (rpc-server %s)", b, r.Endpoints[k])
			k++
		}
	}
	return fmt.Sprintf("ggml's plan on %s: output %s within %.3g of ggml's, %d bytes copied per evaluation (ggml's %d)",
		strings.Join(on, ", "), tr.Output.Tensor, r.MaxDiffGGML, r.BytesCopied, r.GGMLBytesCopied)
}

// check reports an rpc run outside its tolerance or copying other than
// ggml did.
func (r *rpcRun) check(file string, tr *ggmltrace.Trace) error {
	if r.MaxDiffGGML > r.Tolerance || r.MaxDiffGGML != r.MaxDiffGGML {
		return &compiler.UserError{Msg: fmt.Sprintf("%s: ggml's plan on %s: output %s differs from ggml's by up to %g (tolerance %g, relative above 1)",
			file, strings.Join(r.Backends, ", "), tr.Output.Tensor, r.MaxDiffGGML, r.Tolerance)}
	}
	if r.BytesCopied != r.GGMLBytesCopied {
		return &compiler.UserError{Msg: fmt.Sprintf("%s: ggml's plan on %s copied %d bytes per evaluation, ggml %d",
			file, strings.Join(r.Backends, ", "), r.BytesCopied, r.GGMLBytesCopied)}
	}
	return nil
}

// startRPCServers starts one ggml rpc-server on a free loopback port for
// each rpc<N> of backends, in order. kill kills those started, by pid; it
// is to be called however the run ends, errors included. ctx's end (Ctrl-C)
// kills them too.
func startRPCServers(ctx context.Context, backends []string) (servers []*rpcserver.Server, kill func(), err error) {
	kill = func() {
		for _, s := range servers {
			s.Kill()
		}
	}
	n := 0
	for _, b := range backends {
		if strings.HasPrefix(b, "rpc") {
			n++
		}
	}
	if n == 0 {
		return nil, kill, nil
	}
	bin, err := rpcserver.Find()
	if err != nil {
		return nil, kill, &compiler.UserError{Msg: "ggml-check -rpc: " + err.Error()}
	}
	for range n {
		s, err := rpcserver.Start(ctx, bin, "")
		if err != nil {
			return servers, kill, &compiler.UserError{Msg: "ggml-check -rpc: " + err.Error()}
		}
		servers = append(servers, s)
	}
	return servers, kill, nil
}
