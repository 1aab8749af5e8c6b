package llamavulkan

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/examples/llama"
	"github.com/graphc/graphc/passes"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/tensor"
)

// gpu is the device the package is generated for. scripts/cuda-check
// regenerates it for cuda0 in a copy of the tree, this line changed.
const gpu = "vulkan0"

// config is the go:generate line's.
func config(t testing.TB) compiler.Config {
	cfg := compiler.Config{Backends: []string{gpu, "cpu"}, Options: passes.Options{NCopies: 4}, Verify: true}
	for _, o := range []string{`blk\.[01]\.=cpu`, `cache_._l[01]=cpu`, `blk\.[23]\.=` + gpu, `cache_._l[23]=` + gpu, `output=` + gpu} {
		r, err := compiler.ParseOverride(o)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Placement.Overrides = append(cfg.Placement.Overrides, r)
	}
	return cfg
}

func TestGeneratedUpToDate(t *testing.T) {
	src, err := os.ReadFile("../llama/llama.g")
	if err != nil {
		t.Fatal(err)
	}
	want, err := compiler.GenerateFile("../llama/llama.g", src, ".", "llamavulkan", false, config(t))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("llama_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("stale generated files; run go generate ./examples/...")
	}
}

// howToGetVulkan is how a Debian/Ubuntu machine without a GPU gets ggml's
// Vulkan backend and a Vulkan device (Mesa's lavapipe).
const howToGetVulkan = "apt-get install mesa-vulkan-drivers libvulkan1; " +
	"cd /tmp && npm pack @node-llama-cpp/linux-x64-vulkan@3.22.1 && tar xzf node-llama-cpp-linux-x64-vulkan-3.22.1.tgz; " +
	"export GRAPHC_GGML_PATH=/tmp/package/bins/linux-x64-vulkan GGML_VK_VISIBLE_DEVICES=0; or run .ci/run, which does this"

// tolerance is how far the logits may be from the CPU-only package's:
// the device's layers are ggml-vulkan's kernels, which sum in another
// order (lavapipe: 8.5e-6).
const tolerance = 1e-4

// models returns this package's model on vulkan0 and the CPU-only llama
// example's, with the conformance traces' weights and KV cache, or skips
// where ggml's libraries or the device are missing.
func models(t testing.TB) (*Model, *llama.Model) {
	t.Helper()
	weights := map[string]tensor.Tensor{}
	for k, w := range Weights {
		x := tensor.NewTensor(w.Type, w.Ne)
		tensor.Fill(&x, tensor.GGMLFill(k))
		weights[w.Name] = x
	}
	m, err := New(weights, 1)
	if err != nil {
		if os.Getenv("GRAPHC_REQUIRE_GGML") != "" {
			t.Fatal(err)
		}
		t.Skipf("%v\n(%s)", err, howToGetVulkan)
	}
	cpu, err := llama.New(weights, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	t.Cleanup(cpu.Close)
	for k, s := range States {
		x := tensor.NewTensor(s.Type, s.Ne)
		tensor.Fill(&x, tensor.GGMLFill(len(Weights)+k))
		if err := m.WriteState(s.Name, x); err != nil {
			t.Fatal(err)
		}
		if err := cpu.WriteState(s.Name, x); err != nil {
			t.Fatal(err)
		}
	}
	return m, cpu
}

// batch is a batch of tokens whose first goes to KV cache slot pos.
func batch(tokens []int32, pos int) *Inputs {
	positions, mask := engine.CausalBatch(len(tokens), pos)
	return &Inputs{Dims: Dims{NTokens: len(tokens), NKV: pos + len(tokens)}, InpTokens: tokens, InpPos: positions, KQMask: mask}
}

func (in *Inputs) cpu() *llama.Inputs {
	return &llama.Inputs{Dims: llama.Dims{NTokens: in.NTokens, NKV: in.NKV}, InpTokens: in.InpTokens, InpPos: in.InpPos, KQMask: in.KQMask}
}

// steps is a generation: a prompt of 5 tokens, then one token at a time.
func steps() []*Inputs {
	ins := []*Inputs{batch([]int32{1, 7, 3, 99, 42}, 0)}
	for pos := 5; pos < 16; pos++ {
		ins = append(ins, batch([]int32{int32(pos*37) % 128}, pos))
	}
	return ins
}

// within fails t when got is farther than tolerance from want anywhere,
// and returns the largest difference.
func within(t *testing.T, what string, got, want tensor.Tensor) float64 {
	t.Helper()
	if got.Ne != want.Ne {
		t.Fatalf("%s: shape %v, cpu %v", what, got.Ne, want.Ne)
	}
	worst := 0.0
	g, w := got.F32s(), want.F32s()
	for i := range w {
		d := math.Abs(float64(g[i]) - float64(w[i]))
		if !(d <= tolerance) {
			t.Fatalf("%s: element %d = %g, cpu %g (tolerance %g)", what, i, g[i], w[i], tolerance)
		}
		worst = max(worst, d)
	}
	return worst
}

// TestPipelined submits four generations in a row before waiting for any
// of them, as llamapipe's test does: up to four evaluations are in
// flight, each on its own pipeline slot, and each result is the CPU's.
// At the dims' bounds an evaluation must copy the plan's bytes.
func TestPipelined(t *testing.T) {
	m, cpu := models(t)
	var ins []*Inputs
	for g := 0; g < 4; g++ {
		ins = append(ins, steps()...)
	}
	var pending []*Pending
	inFlight := 0
	for _, in := range ins {
		p, err := m.Submit(in)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Done() {
			inFlight++
		}
		pending = append(pending, p)
	}
	if inFlight == 0 {
		t.Error("every evaluation was done when Submit returned: nothing was pipelined")
	}
	worst := 0.0
	for k, in := range ins {
		want, err := cpu.Eval(in.cpu())
		if err != nil {
			t.Fatal(err)
		}
		got, err := pending[k].Wait()
		if err != nil {
			t.Fatal(err)
		}
		worst = max(worst, within(t, fmt.Sprintf("step %d", k), got.ResultOutput, want.ResultOutput))
	}
	t.Logf("%d of %d evaluations still computing when Submit returned; logits within %.3g of the cpu's", inFlight, len(ins), worst)

	src, _ := os.ReadFile("../llama/llama.g")
	res, err := compiler.Compile("../llama/llama.g", src, config(t))
	if err != nil {
		t.Fatal(err)
	}
	tokens := make([]int32, MaxNTokens)
	for k := range tokens {
		tokens[k] = int32(k * 11)
	}
	if _, err := m.Eval(batch(tokens, MaxNKV-MaxNTokens)); err != nil {
		t.Fatal(err)
	}
	st := m.Stats()
	if want := res.Graph.BytesCopiedPerEval(); st.BytesCopied != want {
		t.Errorf("copied %d bytes, the plan %d", st.BytesCopied, want)
	}
}
