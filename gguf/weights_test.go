package gguf_test

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/graphc/graphc/examples/mlp"
	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/tensor"
)

// writeFile writes w to a file in a temporary directory and opens it.
func writeFile(t *testing.T, w *gguf.Writer) *gguf.Mapped {
	t.Helper()
	var buf bytes.Buffer
	_, err := w.WriteTo(&buf)
	must(t, err)
	path := filepath.Join(t.TempDir(), "model.gguf")
	must(t, os.WriteFile(path, buf.Bytes(), 0o644))
	m, err := gguf.Open(path)
	must(t, err)
	t.Cleanup(func() { m.Close() })
	return m
}

// TestWeightsMLP runs the generated mlp example on weights from a GGUF
// file and on the same weights in memory: the outputs are identical.
func TestWeightsMLP(t *testing.T) {
	mem := map[string]tensor.Tensor{}
	w := gguf.NewWriter()
	must(t, w.AddMeta("general.architecture", "mlp"))
	for k, d := range mlp.Weights {
		x := tensor.NewTensor(d.Type, d.Ne)
		tensor.Fill(&x, tensor.GGMLFill(k))
		mem[d.Name] = x
		must(t, w.AddTensor(d.Name, tensor.F32, []int64{int64(d.Ne[0]), int64(d.Ne[1])}, x.Data))
	}
	must(t, w.AddTensor("output_norm.weight", tensor.F32, []int64{16}, make([]byte, 64))) // not declared: ignored as asked
	m := writeFile(t, w)
	weights, err := m.Weights(mlp.Weights, gguf.AllowUnused)
	must(t, err)
	if got := m.Unused(mlp.Weights); len(got) != 1 || got[0] != "output_norm.weight" {
		t.Errorf("Unused = %v", got)
	}
	for name, x := range weights {
		ti, _ := m.Lookup(name)
		if &x.Data[0] != &m.Data(ti)[0] {
			t.Errorf("weight %s is a copy, not the mapping", name)
		}
	}

	eval := func(weights map[string]tensor.Tensor) []float32 {
		model, err := mlp.New(weights, 1)
		must(t, err)
		defer model.Close()
		in := &mlp.Inputs{Dims: mlp.Dims{NBatch: 4}}
		for i := range 32 * 4 {
			in.MlpIn = append(in.MlpIn, float32(math.Cos(float64(i)*0.013)))
		}
		out, err := model.Eval(in)
		must(t, err)
		return out.MlpOut.F32s()
	}
	got, want := eval(weights), eval(mem)
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("mlp_out[%d] = %v from the GGUF file, %v from memory", i, got[i], want[i])
		}
	}
}

func TestWeightsErrors(t *testing.T) {
	w := gguf.NewWriter()
	must(t, w.AddTensor("ok", tensor.F32, []int64{4, 2}, make([]byte, 32)))
	must(t, w.AddTensor("half", tensor.F16, []int64{4}, make([]byte, 8)))
	must(t, w.AddTensor("shape", tensor.F32, []int64{2, 4}, make([]byte, 32)))
	must(t, w.AddTensor("blk.0.attn_q.weight", tensor.Q8_0, []int64{32, 2}, make([]byte, 68)))
	for i := range 10 {
		must(t, w.AddTensor("extra."+string(rune('a'+i)), tensor.I8, []int64{1}, []byte{0}))
	}
	m := writeFile(t, w)
	decls := []tensor.Decl{
		{Name: "ok", Type: tensor.F32, Ne: [4]int{4, 2, 1, 1}},
		{Name: "missing", Type: tensor.F32, Ne: [4]int{3, 1, 1, 1}},
		{Name: "half", Type: tensor.F32, Ne: [4]int{4, 1, 1, 1}},
		{Name: "shape", Type: tensor.F32, Ne: [4]int{4, 2, 1, 1}},
		{Name: "blk.0.attn_q.weight", Type: tensor.F32, Ne: [4]int{32, 2, 1, 1}},
	}
	got, err := m.Weights(decls)
	if got != nil {
		t.Errorf("Weights returned tensors and an error")
	}
	p := m.Path()
	want := strings.Join([]string{
		`gguf: ` + p + `: weight "missing" is missing (the model wants f32[3])`,
		`gguf: ` + p + `: weight "half" is f16[4] in the file, the model wants f32[4]`,
		`gguf: ` + p + `: weight "shape" is f32[2, 4] in the file, the model wants f32[4, 2]`,
		`gguf: ` + p + `: weight "blk.0.attn_q.weight" is q8_0[32, 2] in the file, the model wants f32[32, 2]`,
		`gguf: ` + p + `: 10 tensors in the file are not read by the model: extra.a, extra.b, extra.c, extra.d, extra.e, extra.f, extra.g, extra.h, … (-allow-unused, or gguf.AllowUnused, ignores them)`,
	}, "\n")
	if err == nil || err.Error() != want {
		t.Errorf("Weights error:\n%v\nwant:\n%s", err, want)
	}
	// AllowUnused ignores the extra tensors, and only them.
	if got, err := m.Weights(decls[:1], gguf.AllowUnused); err != nil || len(got) != 1 {
		t.Errorf("Weights(AllowUnused) = %d tensors, %v", len(got), err)
	}
	if _, err := m.Weights(decls[:1]); err == nil || !strings.Contains(err.Error(), "13 tensors in the file are not read") {
		t.Errorf("Weights of one declaration: %v", err)
	}
}

// TestWeightsMisaligned: with general.alignment = 1 an f32 tensor's data
// can be misaligned in memory, which Weights reports instead of handing
// the runtime an unaligned []float32.
func TestWeightsMisaligned(t *testing.T) {
	for pad := range 4 {
		w := gguf.NewWriter()
		must(t, w.AddMeta(gguf.AlignmentKey, uint32(1)))
		must(t, w.AddMeta("pad", strings.Repeat("p", pad)))
		must(t, w.AddTensor("b", tensor.I8, []int64{1}, []byte{1}))
		must(t, w.AddTensor("w", tensor.F32, []int64{2}, make([]byte, 8)))
		m := writeFile(t, w)
		ti, _ := m.Lookup("w")
		if (m.DataOffset+ti.Offset)%4 == 0 {
			continue
		}
		_, err := m.Weights([]tensor.Decl{{Name: "w", Type: tensor.F32, Ne: [4]int{2, 1, 1, 1}}})
		want := `weight "w": data at file byte ` + strconv.FormatInt(m.DataOffset+ti.Offset, 10) + ` is not aligned to its 4-byte elements (general.alignment = 1)`
		if err == nil || !strings.Contains(err.Error(), want+"\n") || !strings.HasSuffix(err.Error(), "1 tensors in the file are not read by the model: b (-allow-unused, or gguf.AllowUnused, ignores them)") {
			t.Errorf("Weights error: %v\nwant: %s", err, want)
		}
		return
	}
	t.Fatal("no padding misaligned the tensor")
}
