package compiler

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphc/graphc/backend/libs"
	"github.com/graphc/graphc/ggmltrace"
	"github.com/graphc/graphc/passes"
)

// TestBLASUpgrades checks that BLAS takes the big matrix products of a
// model (ggml's 3.upg) and nothing else.
func TestBLASUpgrades(t *testing.T) {
	src, err := os.ReadFile("testdata/blas_mlp.g")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Compile("blas_mlp.g", src, Config{Backends: []string{"blas", "cpu"}, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	blasOps := 0
	for _, n := range res.Graph.Nodes {
		if res.Graph.Backends[n.Backend].Name == "blas" {
			if n.Op.String() != "mul_mat" {
				t.Errorf("%s %s on blas", n.Name, n.Op)
			}
			blasOps++
		}
	}
	if blasOps < 2 {
		t.Errorf("%d matrix products on blas, want the big ones", blasOps)
	}
}

// TestDropUnavailableBLAS: without OpenBLAS, graphc run plans without blas
// and says so; compile keeps it.
func TestDropUnavailableBLAS(t *testing.T) {
	t.Setenv(libs.OpenBLASEnv, filepath.Join(t.TempDir(), "libopenblas.so.0"))
	src, err := os.ReadFile("testdata/blas_mlp.g")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Compile("blas_mlp.g", src, Config{Backends: []string{"blas", "cpu"}, Verify: true, ThisMachine: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Graph.Backends) != 1 || res.Graph.Backends[0].Name != "cpu" {
		t.Errorf("target %v, want cpu alone", res.Graph.Backends)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "backend blas dropped") || !strings.Contains(res.Warnings[0], libs.OpenBLASEnv) {
		t.Errorf("warnings %q", res.Warnings)
	}
	res, err = Compile("blas_mlp.g", src, Config{Backends: []string{"blas", "cpu"}, Verify: true})
	if err != nil || len(res.Graph.Backends) != 2 || len(res.Warnings) != 0 {
		t.Errorf("compile for another machine: %v, %d backends, warnings %q", err, len(res.Graph.Backends), res.Warnings)
	}
}

// TestDescriptionsMatchTraces asks graphc's descriptions of the backends
// that stand in for the traces' (sim<N> for ggml's RPC GPU, blas for BLAS,
// cpu) about every traced node: they must answer supports_op as ggml did.
// (offload_op differs on purpose: ggml's RPC backend never offloads, the
// simulated devices do as CUDA.)
func TestDescriptionsMatchTraces(t *testing.T) {
	traces, _ := filepath.Glob("../ggmltrace/testdata/*.json")
	for _, path := range traces {
		tr, err := ggmltrace.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		g, _, _, err := tr.Graph()
		if err != nil {
			t.Fatal(err)
		}
		var mine []*passes.Backend
		sims := 0
		for _, b := range tr.Backends {
			name := "cpu"
			switch {
			case b.Kind == "BLAS":
				name = "blas"
			case b.DeviceType == "GPU":
				name = fmt.Sprintf("sim%d", sims)
				sims++
			}
			target, err := Target([]string{name, "cpu"}, 0)
			if name == "cpu" {
				target, err = Target([]string{"cpu"}, 0)
			}
			if err != nil {
				t.Fatal(err)
			}
			mine = append(mine, target[0])
		}
		for i, n := range tr.Nodes {
			node := g.Nodes[i]
			for k, b := range tr.Backends {
				want, ok := n.SupportsOp[b.Name]
				if !ok {
					continue
				}
				if got := mine[k].SupportsOp(node); got != want {
					t.Errorf("%s: %s %s: %s says supports_op %v, ggml's %s %v", tr.Case, n.Name, n.Op, mine[k].Name, got, b.Name, want)
				}
			}
		}
	}
}
