package codegen_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphc/graphc/codegen"
	"github.com/graphc/graphc/compiler"
)

// chainModel is a model of 2*layers+1 nodes: a relu, then layers of
// x = add(mul(x, w), b), each with its own two weights, as a deep model's
// layers have.
func chainModel(layers int) string {
	return fmt.Sprintf(`dim n_embd = 64
dim n_tok <= 8
input inp: f32[n_embd, n_tok] fill cos(i * 0.01)
x = relu(inp)
for l in 0..%d {
  weight w.{l}: f32[n_embd]
  weight b.{l}: f32[n_embd]
  x = add(mul(x, w.{l}), b.{l})
}
output x
`, layers)
}

// buildChain generates the chain of the given layers as a main package,
// builds it in a module of its own that uses this checkout of graphc, and
// returns its source and binary sizes and the time go build took.
func buildChain(t *testing.T, layers int) (src, bin int64, took time.Duration) {
	t.Helper()
	res, err := compiler.Compile("chain.g", []byte(chainModel(layers)), compiler.Config{})
	if err != nil {
		t.Fatal(err)
	}
	code, err := codegen.Generate(res.Graph, codegen.Options{PkgName: "main", Main: true, Source: "chain.g"})
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string][]byte{
		"go.mod":       fmt.Appendf(nil, "module chain\n\ngo 1.26\n\nrequire github.com/graphc/graphc v0.0.0\n\nreplace github.com/graphc/graphc => %s\n", root),
		"go.sum":       sum,
		"chain_gen.go": code,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(dir, "chain")
	cmd := exec.Command("go", "build", "-mod=mod", "-o", exe, ".")
	cmd.Dir = dir
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build of %d layers: %v\n%s", layers, err, out)
	}
	took = time.Since(start)
	fi, err := os.Stat(exe)
	if err != nil {
		t.Fatal(err)
	}
	// The program must run too: its splits are cut into chunk methods.
	if out, err := exec.Command(exe, "-json").CombinedOutput(); err != nil || !strings.HasPrefix(string(out), `{"outputs":[{"name":`) {
		t.Fatalf("running %d layers: %v\n%.500s", layers, err, out)
	}
	return int64(len(code)), fi.Size(), took
}

// TestGeneratedCodeScales builds a 10k-node model and wants its source and
// binary to grow by bounded bytes per node over a 3-node one. One method
// per split made the binary quadratic (159 MB at 10k nodes, against 9 MB
// with chunk methods); sizes are asserted, build times only reported,
// since they depend on the machine.
func TestGeneratedCodeScales(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 10k-node model")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool")
	}
	const (
		layers            = 5000 // 10001 nodes
		maxSourcePerNode  = 1024
		maxBinaryPerNode  = 2048
		nodes, smallNodes = 2*layers + 1, 3
	)
	smallSrc, smallBin, smallTook := buildChain(t, 1)
	src, bin, took := buildChain(t, layers)
	srcPer := (src - smallSrc) / (nodes - smallNodes)
	binPer := (bin - smallBin) / (nodes - smallNodes)
	t.Logf("%d nodes: %d bytes of source, %d of binary, go build %v", smallNodes, smallSrc, smallBin, smallTook.Round(time.Millisecond))
	t.Logf("%d nodes: %d bytes of source, %d of binary, go build %v", nodes, src, bin, took.Round(time.Millisecond))
	t.Logf("per node: %d bytes of source, %d of binary", srcPer, binPer)
	if srcPer > maxSourcePerNode {
		t.Errorf("%d bytes of source per node, want at most %d", srcPer, maxSourcePerNode)
	}
	if binPer > maxBinaryPerNode {
		t.Errorf("%d bytes of binary per node, want at most %d", binPer, maxBinaryPerNode)
	}
}
