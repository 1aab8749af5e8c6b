package cli

import (
	"context"
	"encoding/json"
	"math"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphc/graphc/ggmltrace"
	"github.com/graphc/graphc/runtime/rpc/rpctest"
)

// needRPCServer skips a test where ggml's rpc-server is absent.
func needRPCServer(t *testing.T) {
	t.Helper()
	if bin, why := rpctest.Binary(); bin == "" {
		t.Skip(why)
	}
}

// refused reports whether nothing listens at endpoint any more.
func refused(endpoint string) bool {
	c, err := net.DialTimeout("tcp", endpoint, time.Second)
	if err == nil {
		c.Close()
	}
	return err != nil
}

// TestGGMLCheckRPC runs ggml's own plan of every trace recorded with an
// RPC device on real ggml rpc-servers: the output must be ggml's recorded
// one within 1e-4 and the bytes copied per evaluation ggml's, and the
// servers must be gone when ggml-check returns.
func TestGGMLCheckRPC(t *testing.T) {
	needGo(t)
	needRPCServer(t)
	traces, _ := filepath.Glob("../../../../ggmltrace/testdata/*.json")
	ran := 0
	for _, path := range traces {
		tr, err := ggmltrace.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		nRPC := 0
		for _, b := range tr.Backends {
			if b.Kind == "RPC" {
				nRPC++
			}
		}
		if nRPC == 0 {
			continue
		}
		ran++
		t.Run(strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
			for _, b := range tr.Backends {
				if b.Kind == "BLAS" {
					blasOrSkip(t)
				}
			}
			code, out, stderr := runCLI("ggml-check", "-run", "-rpc", "-json", path)
			var r ggmlCheckReport
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("exit %d: %v\n%s\n%s", code, err, out, stderr)
			}
			m := r.RPC
			if m == nil {
				t.Fatalf("exit %d, no rpc run in the report\n%s", code, stderr)
			}
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			t.Logf("on %v at %v: max diff from ggml %g, %d bytes copied", m.Backends, m.Endpoints, m.MaxDiffGGML, m.BytesCopied)
			if len(m.Endpoints) != nRPC {
				t.Errorf("%d servers for %d RPC devices", len(m.Endpoints), nRPC)
			}
			if m.MaxDiffGGML > 1e-4 || math.IsNaN(m.MaxDiffGGML) {
				t.Errorf("output differs from ggml's by %g", m.MaxDiffGGML)
			}
			if m.BytesCopied != tr.Result.BytesMoved() {
				t.Errorf("copied %d bytes per evaluation, ggml %d", m.BytesCopied, tr.Result.BytesMoved())
			}
			for _, ep := range m.Endpoints {
				if !refused(ep) {
					t.Errorf("the rpc-server at %s still listens after ggml-check returned", ep)
				}
			}
		})
	}
	if ran == 0 {
		t.Fatal("no trace has an RPC device")
	}
}

// TestGGMLCheckRPCNeedsRun: -rpc without -run is a usage error, as -sim's.
func TestGGMLCheckRPCNeedsRun(t *testing.T) {
	code, _, stderr := runCLI("ggml-check", "-rpc", "../../../../ggmltrace/testdata/mlp.json")
	if code != ExitUsage || !strings.Contains(stderr, "-rpc") || !strings.Contains(stderr, "-run") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestRPCServersTwoDevices: no recorded trace has two RPC devices, so the
// path ggml-check -rpc takes for one with two (a server per rpc<N>, in
// order, the endpoints given to the generated program with -rpc, killed at
// the end) runs the llama example split over rpc0 and rpc1 instead, and
// wants the cpu's logits.
func TestRPCServersTwoDevices(t *testing.T) {
	needGo(t)
	needRPCServer(t)
	servers, kill, err := startRPCServers(context.Background(), []string{"rpc0", "sim0", "rpc1", "cpu"})
	defer kill()
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 2 || servers[0].Endpoint == servers[1].Endpoint {
		t.Fatalf("servers %v; want two, on different ports", servers)
	}
	want, _ := runOutputs(t, "../../../../examples/llama/llama.g")
	got, _ := runOutputs(t, "-backends", "rpc0,rpc1,cpu",
		"-ot", `blk\.[01]\.=rpc0`, "-ot", `cache_._l[01]=rpc0`, "-ot", `blk\.[23]\.=rpc1`, "-ot", `cache_._l[23]=rpc1`,
		"-rpc", servers[0].Endpoint+","+servers[1].Endpoint, "../../../../examples/llama/llama.g")
	w, g := want["result_output"], got["result_output"]
	if len(w) == 0 || len(g) != len(w) {
		t.Fatalf("%d logits on rpc, %d on the cpu", len(g), len(w))
	}
	for i := range w {
		if d := math.Abs(g[i] - w[i]); d > 1e-5 {
			t.Fatalf("logit %d: %g on rpc0 and rpc1, %g on the cpu", i, g[i], w[i])
		}
	}
	kill()
	for _, s := range servers {
		if !refused(s.Endpoint) {
			t.Errorf("the rpc-server at %s (pid %d) still listens after kill", s.Endpoint, s.Pid())
		}
	}
}
