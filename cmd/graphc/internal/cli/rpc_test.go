package cli

import (
	"math"
	"net"
	"strings"
	"testing"

	"github.com/graphc/graphc/runtime/rpc/rpctest"
)

// TestRunLlamaOnRPC runs the llama example with two layers on each of two
// ggml rpc-servers and wants the CPU-only logits within 1e-5.
func TestRunLlamaOnRPC(t *testing.T) {
	needGo(t)
	s0, s1 := rpctest.Start(t), rpctest.Start(t)
	want, _ := runOutputs(t, "../../../../examples/llama/llama.g")
	got, _ := runOutputs(t, "-backends", "rpc0,rpc1,cpu",
		"-ot", `blk\.[01]\.=rpc0`, "-ot", `cache_._l[01]=rpc0`, "-ot", `blk\.[23]\.=rpc1`, "-ot", `cache_._l[23]=rpc1`,
		"-rpc", s0.Endpoint+","+s1.Endpoint, "../../../../examples/llama/llama.g")
	w, g := want["result_output"], got["result_output"]
	if len(w) == 0 || len(g) != len(w) {
		t.Fatalf("%d logits on rpc, %d on the cpu", len(g), len(w))
	}
	worst := 0.0
	for i := range w {
		worst = max(worst, math.Abs(g[i]-w[i]))
	}
	if worst > 1e-5 {
		t.Errorf("rpc logits differ from the cpu's by up to %g", worst)
	}
	t.Logf("rpc logits within %g of the cpu's", worst)
}

// TestRunRPCServerAbsent: no server at the endpoint is an error naming it.
func TestRunRPCServerAbsent(t *testing.T) {
	needGo(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ep := l.Addr().String()
	l.Close()
	code, _, stderr := runCLI("run", "-backends", "rpc0,cpu", "-ngl", "2", "-rpc", ep, "../../../../examples/llama/llama.g")
	if code == 0 || !strings.Contains(stderr, "rpc0") || !strings.Contains(stderr, ep) {
		t.Fatalf("exit %d, stderr %q; want an error naming rpc0 and %s", code, stderr, ep)
	}
}
