package passes_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/passes"
	"github.com/graphc/graphc/tensor"
)

// plan_memory's golden cases: small graphs built in Go, scheduled by hand
// (backends, splits and copies set here, not by the scheduling passes, so
// that these files change only when memory planning does), planned with
// the default strategy (want.ir) and with ggml's (ggml.ir), with the
// per-buffer comparison of every strategy (want.notes). The files are
// testdata/plan_memory/<case>.txtar; see testdata/plan_memory/README.

// memCase is one golden case.
type memCase struct {
	name string
	doc  string
	opts memOptions
	// build declares the graph (b.out expands it); on maps tensor names to
	// the backend computing them (default: the last backend).
	build func(b *builder) (on map[string]string)
}

// memOptions are the target, printed as JSON in the golden file.
type memOptions struct {
	// Backends in priority order: "cpu" (host, alignment 32), "gpu" (own
	// buffer type), "blas" (shares the CPU's buffer type), "uma" (own
	// buffer type, reads the CPU's directly).
	Backends []string `json:"backends"`
	NCopies  int      `json:"n_copies,omitempty"`
	// MaxSize limits each buffer type's chunks, by backend name.
	MaxSize  map[string]int64 `json:"max_size,omitempty"`
	Strategy string           `json:"strategy,omitempty"`
}

func memBackend(name string, maxSize int64) *ir.Backend {
	b := &ir.Backend{Name: name, BufferType: name, Alignment: 32, MaxSize: maxSize}
	switch name {
	case "cpu":
		b.Host = true
	case "blas":
		b.BufferType, b.Host = "cpu", true
	case "uma":
		b.Reads = []string{"cpu"}
	case "gpu":
	default:
		panic("no backend " + name)
	}
	return b
}

// handSchedule assigns backends (views where their source lives, leafs on
// the backend named in on or the last), cuts a split wherever the backend
// changes, and gives each split a copy of every source its backend cannot
// read, made once per backend and read instead of the original (as
// split_graph does); with NCopies > 1 it adds the pipeline copies.
func handSchedule(g *ir.Graph, on map[string]string) {
	last := len(g.Backends) - 1
	backendOf := func(t *ir.Tensor) int {
		if name, ok := on[t.Name]; ok {
			for i, be := range g.Backends {
				if be.Name == name {
					return i
				}
			}
			panic("no backend " + name)
		}
		return last
	}
	for _, t := range g.Leafs {
		t.Backend = backendOf(t)
	}
	for _, t := range g.Nodes {
		t.Backend = backendOf(t)
		if _, ok := on[t.Name]; !ok && t.Op.IsView() {
			t.Backend = t.ViewSrc.Backend
		}
	}
	passes.CutSplits(g, true)
}

// plan builds the case's graph, schedules it and plans its memory with
// strategy (the case's own when empty).
func (c *memCase) plan(t *testing.T, strategy string) (*ir.Graph, *passes.Context, error) {
	t.Helper()
	b := &builder{t: t, g: ir.NewGraph("test.g")}
	for _, name := range c.opts.Backends {
		b.g.Backends = append(b.g.Backends, memBackend(name, c.opts.MaxSize[name]))
	}
	b.g.NCopies = max(c.opts.NCopies, 1)
	on := c.build(b)
	handSchedule(b.g, on)
	if strategy == "" {
		strategy = c.opts.Strategy
	}
	b.g.MemoryStrategy = strategy
	pc := &passes.Context{Debug: 1}
	err := passes.PlanMemory(b.g, pc)
	return b.g, pc, err
}

func TestPlanMemory(t *testing.T) {
	names := map[string]bool{}
	for _, c := range memCases {
		names[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			opts, _ := json.Marshal(c.opts)
			ar := &archive{comment: fmt.Sprintf("%s\n%s\n", strings.TrimSpace(c.doc), opts)}
			g, pc, err := c.plan(t, "")
			if err != nil {
				ar.add("want.err", err.Error()+"\n")
			} else {
				ar.add("want.ir", g.Format())
				var notes strings.Builder
				for _, d := range pc.Diags {
					fmt.Fprintf(&notes, "%s\n", d.Msg)
				}
				ar.add("want.notes", notes.String())
				if c.opts.Strategy == "" {
					gg, _, err := c.plan(t, passes.StrategyGGML)
					if err != nil {
						t.Fatal(err)
					}
					ar.add("ggml.ir", gg.Format())
				}
			}
			got := ar.format()
			path := filepath.Join("testdata", "plan_memory", c.name+".txtar")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v\nrun: go test ./passes -run 'TestPlanMemory/%s' -update", err, c.name)
			}
			if !bytes.Equal(want, got) {
				t.Errorf("%s differs (-want +got):\n%s\nrun: go test ./passes -run 'TestPlanMemory/%s' -update", path, cmp.Diff(string(want), string(got)), c.name)
			}
		})
	}
	if *update {
		return
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "plan_memory", "*.txtar"))
	var stale []string
	for _, f := range files {
		if !names[strings.TrimSuffix(filepath.Base(f), ".txtar")] {
			stale = append(stale, f)
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("golden files without a case: %v", stale)
	}
}

func f32(b *builder, name string, ne ...int64) *ir.Tensor { return b.input(name, tensor.F32, ne...) }

var memCases = []memCase{
	{
		name: "chain",
		doc: `A chain on the CPU: the input is allocated first; mul_mat needs new
memory, then add, relu and scale each take over their dying source in
place; the output is never freed.`,
		opts: memOptions{Backends: []string{"cpu"}},
		build: func(b *builder) map[string]string {
			x := f32(b, "x", 16, 4)
			h := b.mulMat("mm", b.weight("", "w", 16, 32), x)
			h = b.add("add", h, b.weight("", "bias", 32))
			h = b.unary(ops.Relu, "relu", h)
			b.out(b.op(ops.Scale, "scale", ir.Args{Params: ops.ScaleParams{S: 0.5}}, h))
			return nil
		},
	},
	{
		name: "inplace_refused",
		doc: `In-place reuse only where ggml allows it: a reuses the input x,
which dies there; a1 gets new memory, a having another consumer; o2 too,
b being an output; s reuses o2, not r (another layout); mm cannot run in
place; e reuses its second source d (its first is a weight).`,
		opts: memOptions{Backends: []string{"cpu"}},
		build: func(b *builder) map[string]string {
			x := f32(b, "x", 8, 8)
			a := b.unary(ops.Relu, "a", x)
			a1 := b.unary(ops.Silu, "a1", a)
			a2 := b.add("a2", a1, a)
			out := b.unary(ops.Gelu, "b", a2)
			out.Output = true
			b.g.Outputs = append(b.g.Outputs, out)
			o2 := b.unary(ops.Relu, "o2", out)
			r := b.unary(ops.Relu, "r", f32(b, "row", 8))
			sum := b.add("s", o2, r)
			mm := b.mulMat("mm", sum, sum)
			d := b.unary(ops.Relu, "d", mm)
			b.out(b.add("e", b.weight("", "w", 8, 8), d))
			return nil
		},
	},
	{
		name: "views",
		doc: `Views take no memory and keep their source alive until their own
consumers are done. ggml-alloc never reuses memory through a view
(Kcur's rope gets new memory); graphc's greedy strategies let rope take
over the reshaped matmul, so the best plan is smaller.`,
		opts: memOptions{Backends: []string{"cpu"}},
		build: func(b *builder) map[string]string {
			x := f32(b, "x", 64, 8)
			pos := b.input("pos", tensor.I32, 8)
			k := b.mulMat("Kcur", b.weight("", "wk", 64, 64), x)
			k3 := b.op(ops.Reshape, "Kcur_3d", ir.Args{Ne: dims([]int64{16, 4, 8})}, k)
			r := b.op(ops.Rope, "Kcur_rope", ir.Args{Params: ops.RopeParams{NDims: 16, FreqBase: 10000, FreqScale: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}}, k3, pos)
			p := b.op(ops.Permute, "k", ir.Args{Params: ops.PermuteParams{Axes: [4]int{0, 2, 1, 3}}}, r)
			q := b.mulMat("Qcur", b.weight("", "wq", 64, 64), x)
			q3 := b.op(ops.Reshape, "Qcur_3d", ir.Args{Ne: dims([]int64{16, 4, 8})}, q)
			qp := b.op(ops.Permute, "q", ir.Args{Params: ops.PermuteParams{Axes: [4]int{0, 2, 1, 3}}}, q3)
			kq := b.mulMat("kq", p, qp)
			b.out(b.op(ops.SoftMax, "kq_soft_max", ir.Args{Params: ops.SoftMaxParams{Scale: 0.25}}, kq))
			return nil
		},
	},
	{
		name: "attention",
		doc: `A llama attention block on the CPU (K written into the KV cache with
a cpy into a state view, K and V read through views of the cache): the
state and its views take no compute memory.`,
		opts: memOptions{Backends: []string{"cpu"}},
		build: func(b *builder) map[string]string {
			attention(b, "", "")
			return nil
		},
	},
	{
		name: "two_backends",
		doc: `The MLP with layer 0 on a GPU: one buffer per buffer type; the
GPU split copies mlp_in in at its start, the CPU split copies fc0_relu;
mlp_in dies once copied, so its CPU memory is reused.`,
		opts: memOptions{Backends: []string{"gpu", "cpu"}},
		build: func(b *builder) map[string]string {
			mlp(b, "gpu", "", 32, 4)
			return map[string]string{"fc0.weight": "gpu", "fc0.bias": "gpu", "fc0_mm": "gpu", "fc0_add": "gpu", "fc0_relu": "gpu"}
		},
	},
	{
		name: "shared_buffer_type",
		doc: `BLAS shares the CPU's buffer type: its matmul and the CPU's nodes
share one buffer, reported under BLAS (the first backend of the type),
and no copies are needed.`,
		opts: memOptions{Backends: []string{"blas", "cpu"}},
		build: func(b *builder) map[string]string {
			mlp(b, "", "", 64, 32)
			return map[string]string{"fc1_mm": "blas", "fc2_mm": "blas"}
		},
	},
	{
		name: "n_copies",
		doc: `Pipeline parallelism (n_copies 3): every copy of a split input and
every version of a graph input is live for the whole evaluation, so no
other tensor may share their memory.`,
		opts: memOptions{Backends: []string{"gpu", "cpu"}, NCopies: 3},
		build: func(b *builder) map[string]string {
			mlp(b, "gpu", "", 32, 4)
			return map[string]string{"fc0.weight": "gpu", "fc0.bias": "gpu", "fc0_mm": "gpu", "fc0_add": "gpu", "fc0_relu": "gpu"}
		},
	},
	{
		name: "chunks",
		doc: `A CPU whose buffers hold at most 2048 bytes: the plan is split into
chunks (ggml's vbuffer), a tensor larger than the limit getting a chunk
of its own; offsets are per chunk ([cpu#1+0] is chunk 1).`,
		opts: memOptions{Backends: []string{"cpu"}, MaxSize: map[string]int64{"cpu": 2048}},
		build: func(b *builder) map[string]string {
			x := f32(b, "x", 64, 4)
			h := b.mulMat("up", b.weight("", "w_up", 64, 256), x)
			g := b.unary(ops.Silu, "gate", b.mulMat("gate_mm", b.weight("", "w_gate", 64, 256), x))
			h = b.op(ops.Mul, "par", ir.Args{}, g, h)
			h = b.mulMat("down", b.weight("", "w_down", 256, 64), h)
			b.out(b.add("res", h, x))
			return nil
		},
	},
	{
		name: "bounded_dims",
		doc: `n_tokens <= 32 is a bounded dim: every size is planned at the bound,
so the same offsets serve any n_tokens up to 32.`,
		opts: memOptions{Backends: []string{"cpu"}},
		build: func(b *builder) map[string]string {
			d := &ir.Dim{Name: "n_tokens", Bound: 32, Bounded: true}
			b.g.Dims = append(b.g.Dims, d)
			n := ir.DimRef(d)
			x := mustLeaf(b.g.NewLeaf(ir.KindInput, "x", tensor.F32, []*ir.Expr{ir.Const(16), n}, b.pos()))
			h := b.mulMat("mm", b.weight("", "w", 16, 16), x)
			h = b.unary(ops.Relu, "relu", h)
			b.out(b.add("res", h, x))
			return nil
		},
	},
	{
		name: "fragmentation",
		doc: `ggml-alloc places each tensor when its node comes: the input at 0,
mm0 above it; mm1 fits neither in the input's freed 256 bytes nor in mm0,
which it reads, so it goes on top (3328 bytes). Placing the largest
first over the known lifetimes puts mm1 at 0 and the others around it:
3072 bytes, the lower bound.`,
		opts: memOptions{Backends: []string{"cpu"}},
		build: func(b *builder) map[string]string {
			x := f32(b, "x", 16, 4)
			h := b.mulMat("mm0", b.weight("", "w0", 16, 64), x)
			h = b.mulMat("mm1", b.weight("", "w1", 64, 128), h)
			b.out(b.mulMat("mm2", b.weight("", "w2", 128, 16), h))
			return nil
		},
	},
	{
		name: "unknown_strategy",
		doc:  `An unknown strategy is the user's error.`,
		opts: memOptions{Backends: []string{"cpu"}, Strategy: "first_fit"},
		build: func(b *builder) map[string]string {
			b.out(b.unary(ops.Relu, "r", f32(b, "x", 4)))
			return nil
		},
	},
}
