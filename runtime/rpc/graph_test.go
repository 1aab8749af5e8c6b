package rpc

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/runtime/rpc/rpctest"
	"github.com/graphc/graphc/tensor"
)

// TestEveryOpHasServerCase: TestOpsOnServer computes every op the table
// computes with a kernel (a case named after the op), so that a new row's
// ggml encoding (its number and its Params' GGML words) meets ggml's
// rpc-server before a user's does.
func TestEveryOpHasServerCase(t *testing.T) {
	names := map[string]bool{}
	for _, tc := range opCases() {
		names[strings.Fields(tc.name)[0]] = true
	}
	for _, op := range ops.All() {
		if op.Info().Kernel != "" && !names[op.String()] {
			t.Errorf("op %s has no case in opCases (runtime/rpc/graph_test.go), which TestOpsOnServer computes on ggml's rpc-server", op)
		}
	}
}

func TestWireTensorSize(t *testing.T) {
	var w wireTensor
	if n := len(w.append(nil)); n != tensorSize || tensorSize != 296 {
		t.Fatalf("rpc_tensor is %d bytes, tensorSize %d; ggml's is 296", n, tensorSize)
	}
}

// opCase is one kernel call computed by the server and by runtime/cpu.
type opCase struct {
	name string
	srcs []tensor.Tensor // host tensors
	dst  tensor.Tensor   // shape and type of the result (Data ignored)
	run  func(k engine.Kernels, dst *tensor.Tensor, srcs []*tensor.Tensor)
	// tol bounds |rpc - cpu| / max(1, |cpu|): where ggml-cpu's SIMD loops
	// sum in another order than graphc's the last bits differ; elsewhere
	// the results are the same.
	tol float64
}

func filled(typ tensor.DType, ne [4]int, k int) tensor.Tensor {
	f := tensor.NewTensor(tensor.F32, ne)
	tensor.Fill(&f, func(i int, _ [4]int) float64 { return math.Sin(float64(i)*0.37+float64(k)) * 1.5 })
	if typ == tensor.F32 {
		return f
	}
	t := tensor.NewTensor(typ, ne)
	copy(t.Data, tensor.Quantize(nil, typ, f.F32s()))
	return t
}

func ints(vals ...int32) tensor.Tensor {
	t := tensor.NewTensor(tensor.I32, [4]int{len(vals), 1, 1, 1})
	copy(t.I32s(), vals)
	return t
}

func shape(typ tensor.DType, ne ...int) tensor.Tensor {
	s := [4]int{1, 1, 1, 1}
	copy(s[:], ne)
	return tensor.Tensor{Type: typ, Ne: s, Nb: tensor.ContiguousStrides(typ, s)}
}

func ne(v ...int) [4]int {
	s := [4]int{1, 1, 1, 1}
	copy(s[:], v)
	return s
}

func opCases() []opCase {
	F32, F16 := tensor.F32, tensor.F16
	bin := func(name string, f func(k engine.Kernels, d, a, x *tensor.Tensor)) opCase {
		return opCase{name, []tensor.Tensor{filled(F32, ne(16, 4, 2), 1), filled(F32, ne(16, 1, 2), 2)}, shape(F32, 16, 4, 2),
			func(k engine.Kernels, d *tensor.Tensor, s []*tensor.Tensor) { f(k, d, s[0], s[1]) }, 1e-6}
	}
	un := func(name string, tol float64, f func(k engine.Kernels, d, a *tensor.Tensor)) opCase {
		return opCase{name, []tensor.Tensor{filled(F32, ne(64, 3), 3)}, shape(F32, 64, 3),
			func(k engine.Kernels, d *tensor.Tensor, s []*tensor.Tensor) { f(k, d, s[0]) }, tol}
	}
	mm := func(wt tensor.DType, tol float64, p ops.MulMatParams) opCase {
		name := "mul_mat " + wt.String()
		if p.Prec != 0 {
			name += fmt.Sprintf(" prec %d", p.Prec)
		}
		return opCase{name, []tensor.Tensor{filled(wt, ne(64, 8), 4), filled(F32, ne(64, 5), 5)}, shape(F32, 8, 5),
			func(k engine.Kernels, d *tensor.Tensor, s []*tensor.Tensor) { k.MulMat(d, s[0], s[1], p) }, tol}
	}
	rope := func(mode int) opCase {
		p := ops.RopeParams{NDims: 16, Mode: mode, NCtxOrig: 4096, FreqBase: 10000, FreqScale: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}
		return opCase{fmt.Sprintf("rope mode %d", mode), []tensor.Tensor{filled(F32, ne(16, 2, 4), 6), ints(0, 1, 5, 9)}, shape(F32, 16, 2, 4),
			func(k engine.Kernels, d *tensor.Tensor, s []*tensor.Tensor) { k.Rope(d, s[0], s[1], nil, p) }, 1e-5}
	}
	mask := filled(F32, ne(16, 4), 7)
	mask16 := filled(F16, ne(16, 4), 7)
	return []opCase{
		mm(F32, 1e-6, ops.MulMatParams{}), mm(F16, 1e-6, ops.MulMatParams{}), mm(tensor.Q8_0, 1e-6, ops.MulMatParams{}), mm(tensor.Q4_0, 1e-6, ops.MulMatParams{}),
		mm(F16, 1e-6, ops.MulMatParams{Prec: 32}), // ggml_mul_mat_set_prec in op_params: the server computes it as any
		bin("add", engine.Kernels.Add), bin("sub", engine.Kernels.Sub), bin("mul", engine.Kernels.Mul),
		{"div", []tensor.Tensor{filled(F32, ne(16, 4), 1), func() tensor.Tensor {
			t := tensor.NewTensor(F32, ne(16))
			tensor.Fill(&t, func(i int, _ [4]int) float64 { return 1 + float64(i)/4 })
			return t
		}()}, shape(F32, 16, 4), func(k engine.Kernels, d *tensor.Tensor, s []*tensor.Tensor) { k.Div(d, s[0], s[1]) }, 1e-6},
		un("scale", 1e-6, func(k engine.Kernels, d, a *tensor.Tensor) { k.Scale(d, a, ops.ScaleParams{S: 0.125}) }),
		un("relu", 0, engine.Kernels.Relu), un("gelu", 0, engine.Kernels.Gelu), un("silu", 1e-6, engine.Kernels.Silu),
		un("tanh", 1e-6, engine.Kernels.Tanh), un("sigmoid", 1e-6, engine.Kernels.Sigmoid),
		un("rms_norm", 1e-6, func(k engine.Kernels, d, a *tensor.Tensor) { k.RMSNorm(d, a, ops.NormParams{Eps: 1e-5}) }),
		un("norm", 1e-6, func(k engine.Kernels, d, a *tensor.Tensor) { k.Norm(d, a, ops.NormParams{Eps: 1e-5}) }),
		{"soft_max", []tensor.Tensor{filled(F32, ne(16, 4), 8)}, shape(F32, 16, 4),
			func(k engine.Kernels, d *tensor.Tensor, s []*tensor.Tensor) {
				k.SoftMax(d, s[0], nil, ops.SoftMaxParams{Scale: 0.5, MaxBias: 0})
			}, 1e-6},
		{"soft_max mask alibi", []tensor.Tensor{filled(F32, ne(16, 4, 2), 8), mask}, shape(F32, 16, 4, 2),
			func(k engine.Kernels, d *tensor.Tensor, s []*tensor.Tensor) {
				k.SoftMax(d, s[0], s[1], ops.SoftMaxParams{Scale: 0.25, MaxBias: 8})
			}, 1e-6},
		// One K/V head for two query heads; the sums of f16 products are
		// ggml's to 1e-7.
		{"flash_attn_ext", []tensor.Tensor{filled(F32, ne(16, 4, 2), 12), filled(F16, ne(16, 16), 13), filled(F16, ne(16, 16), 14), mask16}, shape(F32, 16, 2, 4),
			func(k engine.Kernels, d *tensor.Tensor, s []*tensor.Tensor) {
				k.FlashAttnExt(d, s[0], s[1], s[2], s[3], ops.FlashAttnParams{Scale: 0.25, Prec: 32})
			}, 1e-5},
		rope(0), rope(ops.RopeNeox),
		{"get_rows f32", []tensor.Tensor{filled(F32, ne(8, 10), 9), ints(3, 0, 9)}, shape(F32, 8, 3),
			func(k engine.Kernels, d *tensor.Tensor, s []*tensor.Tensor) { k.GetRows(d, s[0], s[1]) }, 0},
		{"get_rows q8_0", []tensor.Tensor{filled(tensor.Q8_0, ne(32, 10), 9), ints(3, 0, 9)}, shape(F32, 32, 3),
			func(k engine.Kernels, d *tensor.Tensor, s []*tensor.Tensor) { k.GetRows(d, s[0], s[1]) }, 1e-6},
		{"cpy f32 to f16", []tensor.Tensor{filled(F32, ne(16, 4), 10)}, shape(F16, 16, 4),
			func(k engine.Kernels, d *tensor.Tensor, s []*tensor.Tensor) { k.Cpy(d, s[0]) }, 0},
		{"cont of a transpose", []tensor.Tensor{filled(F32, ne(16, 4), 11)}, shape(F32, 4, 16),
			func(k engine.Kernels, d *tensor.Tensor, s []*tensor.Tensor) {
				tr := *s[0]
				tr.Ne[0], tr.Ne[1], tr.Nb[0], tr.Nb[1] = tr.Ne[1], tr.Ne[0], tr.Nb[1], tr.Nb[0]
				k.Cpy(d, &tr)
			}, 0},
		// Two of 4 experts for each of 3 tokens, the tokens' columns shared.
		{"mul_mat_id q8_0", []tensor.Tensor{filled(tensor.Q8_0, ne(64, 8, 4), 15), filled(F32, ne(64, 1, 3), 16), func() tensor.Tensor {
			t := ints(3, 1, 0, 3, 2, 0)
			t.Ne, t.Nb = ne(2, 3), tensor.ContiguousStrides(tensor.I32, ne(2, 3))
			return t
		}()}, shape(F32, 8, 2, 3), func(k engine.Kernels, d *tensor.Tensor, s []*tensor.Tensor) { k.MulMatID(d, s[0], s[1], s[2]) }, 1e-6},
		{"argsort descending", []tensor.Tensor{filled(F32, ne(16, 4), 17)}, shape(tensor.I32, 16, 4),
			func(k engine.Kernels, d *tensor.Tensor, s []*tensor.Tensor) {
				k.ArgSort(d, s[0], ops.ArgSortParams{Order: 1})
			}, 0},
		{"top_k", []tensor.Tensor{filled(F32, ne(16, 4), 19)}, shape(tensor.I32, 3, 4),
			func(k engine.Kernels, d *tensor.Tensor, s []*tensor.Tensor) {
				k.TopK(d, s[0], ops.TopKParams{K: 3})
			}, 0},
		{"sum_rows", []tensor.Tensor{filled(F32, ne(64, 3, 2), 18)}, shape(F32, 1, 3, 2),
			func(k engine.Kernels, d *tensor.Tensor, s []*tensor.Tensor) { k.SumRows(d, s[0]) }, 1e-6},
	}
}

// unorderedRows are the cases whose result rows are sets of indices
// (ggml_top_k leaves their order open): both sides' rows are sorted before
// the comparison.
var unorderedRows = map[string]bool{"top_k": true}

func newTestBackend(t *testing.T, endpoints ...string) *Backend {
	t.Helper()
	SetEndpoints(endpoints)
	t.Cleanup(func() { SetEndpoints(nil) })
	b, err := New(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// TestOpsOnServer computes every op on ggml's server and with runtime/cpu.
func TestOpsOnServer(t *testing.T) {
	s := rpctest.Start(t)
	b := newTestBackend(t, s.Endpoint)
	c := cpu.New(1)
	defer c.Close()
	for _, tc := range opCases() {
		var hostSrcs, devSrcs []*tensor.Tensor
		for i := range tc.srcs {
			h := &tc.srcs[i]
			mem, err := b.Alloc(h.Span())
			if err != nil {
				t.Fatal(err)
			}
			d := &tensor.Tensor{Type: h.Type, Ne: h.Ne, Nb: h.Nb, Data: mem}
			b.SetTensor(d, h)
			hostSrcs, devSrcs = append(hostSrcs, h), append(devSrcs, d)
		}
		want := tensor.NewTensor(tc.dst.Type, tc.dst.Ne)
		tc.run(c, &want, hostSrcs)
		mem, err := b.Alloc(want.Span())
		if err != nil {
			t.Fatal(err)
		}
		dd := &tensor.Tensor{Type: want.Type, Ne: want.Ne, Nb: want.Nb, Data: mem}
		tc.run(b, dd, devSrcs)
		got := tensor.NewTensor(want.Type, want.Ne)
		b.GetTensor(&got, dd)
		if err := b.Err(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if unorderedRows[tc.name] {
			for r := 0; r < want.NElem(); r += want.Ne[0] {
				slices.Sort(want.I32s()[r : r+want.Ne[0]])
				slices.Sort(got.I32s()[r : r+got.Ne[0]])
			}
		}
		worst, at := 0.0, 0
		for i := range want.NElem() {
			w, g := want.Float64(i), got.Float64(i)
			if d := math.Abs(g-w) / max(1, math.Abs(w)); d > worst || math.IsNaN(d) {
				worst, at = d, i
			}
		}
		if worst > tc.tol || math.IsNaN(worst) {
			t.Errorf("%s: element %d: server %g, cpu %g (relative error %.3g > %g)", tc.name, at, got.Float64(at), want.Float64(at), worst, tc.tol)
		} else {
			t.Logf("%s: worst relative error %.3g", tc.name, worst)
		}
	}
}
