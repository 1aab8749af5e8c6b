package interp_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/internal/interp"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/tensor"
)

// TestEveryOpRuns: the interpreter can call the kernel of every op that
// computes something, with the arguments the op table implies.
func TestEveryOpRuns(t *testing.T) {
	for _, op := range ops.All() {
		if op.IsView() {
			continue // nothing to call: a view is placed, not computed
		}
		if err := interp.KernelOf(op); err != nil {
			t.Errorf("the interpreter cannot run op %s: %v", op, err)
		}
	}
}

// load compiles src for the cpu and loads it with a small budget.
func load(t *testing.T, src string) *interp.Machine {
	t.Helper()
	return loadWith(t, src, interp.Config{Threads: 2, MaxBytes: 1 << 20, MaxWork: 1 << 24})
}

func loadWith(t *testing.T, src string, cfg interp.Config) *interp.Machine {
	t.Helper()
	res, err := compiler.Compile("test.g", []byte(src), compiler.Config{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	m, err := interp.Load(res.Graph, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// TestOps runs golden/ops.txtar's model, every op at least once, and
// checks a few values by hand.
func TestOps(t *testing.T) {
	m := load(t, `
dim n = 8
dim m <= 6
input x: f32[n, m] fill sin(i)
input idx: i32[m] fill i % 4
weight table: f16[n, 4]
weight w: f32[n, n]
weight b: f32[n]
a = get_rows(table, idx)
h = add(mul_mat(w, x), b)
h2 = div(sub(mul(h, a), b), scale(b, 2))
g = gelu(relu(silu(norm(h2, eps=1e-6))))
t = cont(transpose(g))
p = soft_max(scale(t, 0.5))
r = reshape(p, n * m)
v = view_2d(r, 4, 2, 16, 0)
output y = cont(permute(reshape(g, n, m, 1), 1, 0, 2, 3))
output z = cont(v)
output xs = cont(x)
`)
	// At m = 0, z's view of r reads 32 bytes of r's 0: generated code
	// checks views against their sources' size at the bounds and reads
	// stale bytes; the interpreter refuses.
	if _, err := m.Eval(map[string]int{"m": 0}, nil); err == nil || !strings.Contains(err.Error(), "view v of p addresses bytes [0, 32)") {
		t.Errorf("m = 0: got %v, want the view v out of p's bytes", err)
	}
	for _, nm := range []int{6, 3, 1} {
		out, err := m.Eval(map[string]int{"m": nm}, nil)
		if err != nil {
			t.Fatalf("m = %d: %v", nm, err)
		}
		if len(out) != 3 || out[0].Name != "y" || out[1].Name != "z" || out[2].Name != "xs" {
			t.Fatalf("m = %d: outputs %v", nm, out)
		}
		if got := out[0].Tensor.Ne; got != [4]int{nm, 8, 1, 1} {
			t.Errorf("m = %d: y is %v", nm, got)
		}
		xs := out[2].Tensor.F32s()
		for i, v := range xs {
			if v != float32(math.Sin(float64(i))) {
				t.Fatalf("m = %d: x[%d] = %g, its fill says sin(%d)", nm, i, v, i)
			}
		}
		for i, v := range out[1].Tensor.F32s() {
			if v < 0 || v > 1 || math.IsNaN(float64(v)) {
				t.Errorf("m = %d: z[%d] = %g is not a probability", nm, i, v)
			}
		}
	}
}

func TestEvalErrors(t *testing.T) {
	m := load(t, `
dim n <= 4
dim n_vocab = 8
input tok: i32[n] fill i * 3
weight emb: f32[4, n_vocab]
output e = get_rows(emb, tok)
`)
	for _, c := range []struct {
		dims   map[string]int
		inputs map[string]tensor.Tensor
		want   string
	}{
		{map[string]int{"n": 5}, nil, "dim n = 5 is outside [0, 4]"},
		{map[string]int{"n": -1}, nil, "dim n = -1 is outside [0, 4]"},
		{map[string]int{}, nil, "dim n: no value given"},
		{map[string]int{"n": 1, "k": 2}, nil, "dim k: not a bounded dim of the model"},
		{map[string]int{"n": 3}, nil, ""}, // tokens 0, 3, 6
		{map[string]int{"n": 4}, nil, "input tok: element 3 is 9, not a row of emb (0..7)"},
		{map[string]int{"n": 2}, map[string]tensor.Tensor{"tok": tensor.NewTensor(tensor.I32, [4]int{3, 1, 1, 1})}, "input tok: got i32[3], want i32[2]"},
		{map[string]int{"n": 2}, map[string]tensor.Tensor{"nope": tensor.NewTensor(tensor.I32, [4]int{2, 1, 1, 1})}, "input nope: not an input of the model"},
	} {
		_, err := m.Eval(c.dims, c.inputs)
		if c.want == "" {
			if err != nil {
				t.Errorf("dims %v: %v", c.dims, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("dims %v: got %v, want %q", c.dims, err, c.want)
		}
	}
}

// TestDimBoundedByDim: a dim bounded by another (k <= n) is checked
// against that one's value, and rows get_rows picks by it against the
// rows there are at these dims, as llama.g's inp_out_ids.
func TestDimBoundedByDim(t *testing.T) {
	m := load(t, `
dim n <= 4
dim k <= n
input x: f32[2, n] fill i
input pick: i32[k] fill n - k + i
output y = get_rows(x, pick)
`)
	out, err := m.Eval(map[string]int{"n": 3, "k": 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(out[0].Tensor.F32s()); got != "[2 3 4 5]" {
		t.Errorf("n = 3, k = 2: y = %s, want rows 1 and 2 of x, [2 3 4 5]", got)
	}
	picks := tensor.NewTensor(tensor.I32, [4]int{1, 1, 1, 1})
	picks.I32s()[0] = 3
	for _, c := range []struct {
		dims   map[string]int
		inputs map[string]tensor.Tensor
		want   string
	}{
		{map[string]int{"n": 2, "k": 3}, nil, "dim k = 3 is outside [0, n = 2]"},
		{map[string]int{"n": 3, "k": 1}, map[string]tensor.Tensor{"pick": picks}, "input pick: element 0 is 3, not a row of x (0..2)"},
	} {
		if _, err := m.Eval(c.dims, c.inputs); err == nil || err.Error() != c.want {
			t.Errorf("dims %v: got %v, want %q", c.dims, err, c.want)
		}
	}
}

// TestKernelErrorIsAnError: get_rows reading indices through a view of an
// input is not checked before the evaluation (neither is it in generated
// code); the kernel's KernelError comes back as the error.
func TestKernelErrorIsAnError(t *testing.T) {
	m := load(t, `
input tok: i32[4] fill i * 5
weight emb: f32[4, 8]
output e = get_rows(emb, view_1d(tok, 2, 8))
`)
	_, err := m.Eval(map[string]int{}, nil)
	var ke *engine.KernelError
	if !errors.As(err, &ke) {
		t.Fatalf("got %v, want a *engine.KernelError", err)
	}
	tok := tensor.NewTensor(tensor.I32, [4]int{4, 1, 1, 1})
	if _, err := m.Eval(map[string]int{}, map[string]tensor.Tensor{"tok": tok}); err != nil {
		t.Fatalf("after the kernel error: %v", err)
	}
}

// TestViewChecks: a view that leaves its source at some dims is an error
// at those dims, with generated code's message.
func TestViewChecks(t *testing.T) {
	m := load(t, `
dim n <= 4
dim k <= 8
input x: f32[8] fill i
output v = cont(view_1d(x, n, k * 4))
`)
	if _, err := m.Eval(map[string]int{"n": 4, "k": 4}, nil); err != nil {
		t.Fatal(err)
	}
	_, err := m.Eval(map[string]int{"n": 4, "k": 5}, nil)
	if want := "view v.view_1d of x covers bytes [20, 36), outside its 32 bytes (k = 5, n = 4)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestBudget(t *testing.T) {
	for _, src := range []string{
		"weight w: f32[4096, 4096]\noutput y = scale(w, 2)",
		"weight w: f32[4294967296, 4294967296]\noutput y = scale(w, 2)",
		"dim n <= 100000\ninput x: f32[n, n]\noutput y = scale(x, 2)",
	} {
		res, err := compiler.Compile("test.g", []byte(src), compiler.Config{})
		if err != nil {
			t.Logf("%q does not compile: %v", src, err)
			continue
		}
		_, err = interp.Load(res.Graph, interp.Config{MaxBytes: 1 << 20})
		if !errors.Is(err, interp.ErrTooBig) {
			t.Errorf("%q: got %v, want ErrTooBig", src, err)
		}
	}
	m := loadWith(t, "dim n <= 1024\nweight w: f32[1024, 256]\ninput x: f32[1024, n]\noutput y = mul_mat(w, x)", interp.Config{Threads: 2, MaxBytes: 8 << 20, MaxWork: 1 << 24})
	if _, err := m.Eval(map[string]int{"n": 1024}, nil); !errors.Is(err, interp.ErrTooBig) {
		t.Errorf("a 268M multiply-add mul_mat: got %v, want ErrTooBig", err)
	}
	if _, err := m.Eval(map[string]int{"n": 4}, nil); err != nil {
		t.Error(err)
	}
}

// TestGivenWeights: Config.Weights replace the fill rule's values, and a
// weight of the wrong shape or a name the plan lacks is refused.
func TestGivenWeights(t *testing.T) {
	const src = `
dim n = 4
input x: f32[n] fill 1
weight w: f32[n]
weight b: f32[n]
output y = add(mul(x, w), b)
`
	res, err := compiler.Compile("test.g", []byte(src), compiler.Config{Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := interp.WeightDecls(res.Graph); len(d) != 2 || d[0].Name != "w" || d[0].Ne != [4]int{4, 1, 1, 1} {
		t.Fatalf("WeightDecls = %v", d)
	}
	w := tensor.NewTensor(tensor.F32, [4]int{4, 1, 1, 1})
	copy(w.F32s(), []float32{1, 2, 3, 4})
	m, err := interp.Load(res.Graph, interp.Config{Threads: 1, Weights: map[string]tensor.Tensor{"w": w}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	out, err := m.Eval(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	filled := tensor.NewTensor(tensor.F32, [4]int{4, 1, 1, 1})
	tensor.Fill(&filled, tensor.GGMLFill(1)) // b, the second weight
	for i, v := range out[0].Tensor.F32s() {
		if want := float32(i+1) + filled.F32s()[i]; v != want {
			t.Errorf("y[%d] = %g, want %g", i, v, want)
		}
	}
	for name, bad := range map[string]tensor.Tensor{"w": tensor.NewTensor(tensor.F32, [4]int{5, 1, 1, 1}), "nope": w} {
		if _, err := interp.Load(res.Graph, interp.Config{Weights: map[string]tensor.Tensor{name: bad}}); err == nil {
			t.Errorf("Load took weight %s%v", name, bad.Ne)
		}
	}
}
