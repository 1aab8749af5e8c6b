package passes_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/passes"
	"github.com/graphc/graphc/tensor"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// A goldenCase is a small graph, built in Go (there is no DSL lowering in
// these tests), planned for a fake target through one pass. Its golden file
// testdata/<pass>/<name>.txtar holds the description and options, the graph
// before the passes (input.ir), after them (want.ir), and the pass's debug
// notes (want.notes) or its error (want.err).
type goldenCase struct {
	name string
	doc  string
	opts caseOptions
	// build declares the graph; expand its outputs with b.out.
	build func(b *builder)
}

// caseOptions are the target and planning options of a case, printed as
// JSON in the golden file's comment.
type caseOptions struct {
	// Backends in priority order, from the presets in fakeBackend; the
	// last should be "cpu".
	Backends []string `json:"backends"`
	// Reject lists, per backend, ops (DSL names) or node names it does not
	// support.
	Reject    map[string][]string `json:"reject,omitempty"`
	NCopies   int                 `json:"n_copies,omitempty"`
	OpOffload bool                `json:"op_offload,omitempty"`
	Regions   bool                `json:"regions,omitempty"`
	NoPack    bool                `json:"no_pack,omitempty"`
}

// fakeBackend returns a preset backend:
//
//	gpu, gpu1  discrete GPUs: own buffer type, not host memory, every op;
//	           they want (OffloadOp) mul_mat and add with ne[1] >= 32
//	uma        an integrated GPU: own buffer type, also reads "cpu" buffers
//	blas       shares the CPU's host buffer type; supports mul_mat when
//	           ne0, ne1 and src1's ne0 are >= 32 (ggml-blas), views and leaves
//	cpu        host memory, every op; packs q4_0 and q8_0 weights for
//	           mul_mat and groups their products as runtime/cpu's
//	           description does
//	sim0       the simulated device's own description (backend.Sim): a
//	           discrete GPU offloading by ggml-cuda's batch rule
func fakeBackend(name string, reject []string) *passes.Backend {
	if name == "sim0" {
		return passes.FromDescription(backend.Sim(0), []backend.BufferType{backend.CPU.BufferType}, 0)
	}
	rejected := func(t *ir.Tensor) bool {
		return slices.Contains(reject, t.Op.String()) || slices.Contains(reject, t.Name)
	}
	all := func(t *ir.Tensor) bool { return !rejected(t) }
	b := &passes.Backend{Backend: ir.Backend{Name: name, BufferType: name, Alignment: 32}, Device: "GPU", SupportsOp: all}
	switch name {
	case "gpu", "gpu1":
		b.OffloadOp = func(t *ir.Tensor) bool {
			return (t.Op == ops.MulMat || t.Op == ops.Add) && t.Ne[1].AtBounds() >= 32
		}
	case "uma":
		b.SupportsBufferType = func(bt string) bool { return bt == "uma" || bt == "cpu" }
	case "blas":
		b.BufferType, b.Host, b.Device = "cpu", true, "ACCEL"
		b.SupportsOp = func(t *ir.Tensor) bool {
			if rejected(t) {
				return false
			}
			if t.IsLeaf() || t.Op.IsView() {
				return true
			}
			return t.Op == ops.MulMat && t.Ne[0].AtBounds() >= 32 && t.Ne[1].AtBounds() >= 32 && t.Src[1].Ne[0].AtBounds() >= 32
		}
	case "cpu":
		b.Host, b.Device, b.Parts = true, "CPU", true
		b.PackWeight = func(t *ir.Tensor) int64 { return backend.CPU.PackWeight(passes.Query(t)) }
		b.GroupProducts = backend.CPU.GroupProducts
	default:
		panic("no fake backend " + name)
	}
	return b
}

// builder declares test graphs tersely; every error is fatal.
type builder struct {
	t    *testing.T
	g    *ir.Graph
	line int
}

func (b *builder) pos() ir.Pos {
	b.line++
	return ir.Pos{File: "test.g", Line: b.line, Col: 1}
}

func dims(ne []int64) []*ir.Expr {
	out := make([]*ir.Expr, len(ne))
	for i, n := range ne {
		out[i] = ir.Const(n)
	}
	return out
}

// weight declares an f32 weight in the buffer of backend on ("" = the last).
func (b *builder) weight(on, name string, ne ...int64) *ir.Tensor {
	t := mustLeaf(b.g.NewLeaf(ir.KindWeight, name, tensor.F32, dims(ne), b.pos()))
	t.Placement = on
	return t
}

// typed declares a weight of type dt in the buffer of backend on.
func (b *builder) typed(on, name string, dt tensor.DType, ne ...int64) *ir.Tensor {
	t := mustLeaf(b.g.NewLeaf(ir.KindWeight, name, dt, dims(ne), b.pos()))
	t.Placement = on
	return t
}

// state declares an f16 state (KV cache) in the buffer of backend on.
func (b *builder) state(on, name string, ne ...int64) *ir.Tensor {
	t := mustLeaf(b.g.NewLeaf(ir.KindState, name, tensor.F16, dims(ne), b.pos()))
	t.Placement = on
	return t
}

func (b *builder) input(name string, dt tensor.DType, ne ...int64) *ir.Tensor {
	return mustLeaf(b.g.NewLeaf(ir.KindInput, name, dt, dims(ne), b.pos()))
}

// leaf declares a leaf in the compute buffer: neither input nor weight.
func (b *builder) leaf(name string, ne ...int64) *ir.Tensor {
	return mustLeaf(b.g.NewLeaf(ir.KindNode, name, tensor.F32, dims(ne), b.pos()))
}

func (b *builder) op(op ops.Op, name string, args ir.Args, srcs ...*ir.Tensor) *ir.Tensor {
	b.t.Helper()
	t, err := b.g.NewOp(op, name, srcs, args, b.pos())
	if err != nil {
		b.t.Fatalf("%s: %v", name, err)
	}
	return t
}

func (b *builder) mulMat(name string, w, x *ir.Tensor) *ir.Tensor {
	return b.op(ops.MulMat, name, ir.Args{}, w, x)
}
func (b *builder) add(name string, x, y *ir.Tensor) *ir.Tensor {
	return b.op(ops.Add, name, ir.Args{}, x, y)
}
func (b *builder) unary(op ops.Op, name string, x *ir.Tensor) *ir.Tensor {
	return b.op(op, name, ir.Args{}, x)
}

// on asks for node t to run on backend name (a user override).
func (b *builder) on(name string, t *ir.Tensor) *ir.Tensor { t.Placement = name; return t }

// out marks t as an output and expands the graph order from it.
func (b *builder) out(t *ir.Tensor) {
	t.Output = true
	b.g.Outputs = append(b.g.Outputs, t)
	b.g.Expand(t)
}

// root expands the graph order from t without making it an output (a
// write into state).
func (b *builder) root(t *ir.Tensor) { b.g.Expand(t) }

// plan builds c's graph and target and runs the pipeline through pass
// with ir.Verify after each pass and debug notes on.
func (c *goldenCase) plan(t *testing.T, pass string) (g *ir.Graph, pc *passes.Context, input string, err error) {
	t.Helper()
	b := &builder{t: t, g: ir.NewGraph("test.g")}
	c.build(b)
	input = b.g.Format()
	pc = &passes.Context{Options: passes.Options{NCopies: c.opts.NCopies, OpOffload: c.opts.OpOffload, Regions: c.opts.Regions, NoPack: c.opts.NoPack}, Debug: 1}
	for _, name := range c.opts.Backends {
		pc.Backends = append(pc.Backends, fakeBackend(name, c.opts.Reject[name]))
	}
	err = passes.Run(b.g, pc, true, pass)
	return b.g, pc, input, err
}

// runGolden runs each case through pass and compares with (or, under
// -update, rewrites) testdata/<pass>/<case>.txtar.
func runGolden(t *testing.T, pass string, cases []goldenCase) {
	names := map[string]bool{}
	for _, c := range cases {
		if names[c.name] {
			t.Fatalf("two cases named %s", c.name)
		}
		names[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			g, pc, input, err := c.plan(t, pass)
			opts, _ := json.Marshal(c.opts)
			ar := &archive{comment: fmt.Sprintf("%s\n%s\n", strings.TrimSpace(c.doc), opts)}
			ar.add("input.ir", input)
			if err != nil {
				ar.add("want.err", err.Error()+"\n")
			} else {
				ar.add("want.ir", g.Format())
				var notes strings.Builder
				for _, d := range pc.Diags {
					if d.Pass == pass {
						fmt.Fprintf(&notes, "%s: %s\n", d.Pos, d.Msg)
					}
				}
				ar.add("want.notes", notes.String())
			}
			got := ar.format()
			path := filepath.Join("testdata", pass, c.name+".txtar")
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
				t.Fatalf("%v\nrun: go test ./passes -run '%s/%s' -update", err, t.Name()[:strings.Index(t.Name(), "/")], c.name)
			}
			if !bytes.Equal(want, got) {
				t.Errorf("%s differs (-want +got):\n%s\nrun: go test ./passes -run '%s' -update", path, cmp.Diff(string(want), string(got)), t.Name())
			}
		})
	}
	if *update {
		return
	}
	// Every golden file belongs to a case.
	files, _ := filepath.Glob(filepath.Join("testdata", pass, "*.txtar"))
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

// archive writes the txtar format of golang.org/x/tools/txtar (a comment,
// then "-- name --" sections), which graphc does not depend on yet: the
// golden files are compared byte for byte, so only writing is needed.
type archive struct {
	comment string
	files   []string
}

func (a *archive) add(name, data string) {
	if data != "" && !strings.HasSuffix(data, "\n") {
		data += "\n"
	}
	a.files = append(a.files, "-- "+name+" --\n"+data)
}

func (a *archive) format() []byte { return []byte(a.comment + strings.Join(a.files, "")) }

// mustLeaf is NewLeaf's tensor, for tests whose shapes are valid.
func mustLeaf(t *ir.Tensor, err error) *ir.Tensor {
	if err != nil {
		panic(err)
	}
	return t
}
