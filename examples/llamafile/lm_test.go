package llamafile

import (
	"math"
	"testing"
	"unsafe"

	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/gguf/ggufarch"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/runtime/lm"
)

// newModel makes the package's model on a default file's weights.
func newModel(t *testing.T) *Model {
	t.Helper()
	f, err := gguf.Open(newFile(t, ggufarch.Defaults("llama")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	weights, err := f.Weights(Weights)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(weights, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// TestLMDecodesAsEval runs a prompt as one batch through LM, asking for
// its last token's logits, then single tokens, and the same batches
// through Eval asking for every row (n_outputs = n_tokens): LM's rows are
// Eval's. The steps are the same plan at the same dims: bit for bit. The
// prompt's last row goes through the last layer's feed-forward and the
// head alone in one and among the prompt's eight in the other, where the
// CPU's matrix products take their columns four at a time: its AVX-512
// kernels sum a lone column in another order than a column of four (seen
// 6e-8, one float ulp of these logits; the go and avx2 levels agree bit
// for bit), so that row may differ by float rounding.
func TestLMDecodesAsEval(t *testing.T) {
	model := newModel(t).LM()
	if got, want := model.Info(), (lm.Info{NCtx: 64, NBatch: MaxNTokens, NVocab: 320}); got != want {
		t.Errorf("Info() = %+v, want %+v", got, want)
	}
	m := newModel(t)
	prompt, steps := []int32{1, 17, 230, 5, 99, 4, 301, 42}, []int32{7, 250, 3, 128}
	var got, want [][]float32
	decode := func(tokens []int32, pos int) {
		positions, mask := engine.CausalBatch(len(tokens), pos)
		n := len(tokens)
		logits, err := model.Decode(&lm.Batch{Tokens: tokens, Pos: positions, Mask: mask, NKV: pos + n, Outputs: []int32{int32(n - 1)}})
		if err != nil {
			t.Fatal(err)
		}
		if len(logits) != 320 {
			t.Fatalf("Decode returned %d logits, want one row of 320", len(logits))
		}
		got = append(got, logits)
		all := make([]int32, n)
		for i := range all {
			all[i] = int32(i)
		}
		out, err := m.Eval(&Inputs{Dims: Dims{NKV: pos + n, NTokens: n, NOutputs: n}, InpTokens: tokens, InpPos: positions, KQMask: mask, InpOutIds: all})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, out.ResultOutput.F32s()[(n-1)*320:])
	}
	decode(prompt, 0)
	for i, tok := range steps {
		decode([]int32{tok}, len(prompt)+i)
	}
	for row := range want {
		tol := 0.0
		if row == 0 {
			tol = 1e-6
		}
		for i := range want[row] {
			if d := math.Abs(float64(got[row][i] - want[row][i])); d > tol {
				t.Errorf("row %d (0: the prompt's last token), logit %d: LM %g, Eval %g (allowed: %g)", row, i, got[row][i], want[row][i], tol)
			}
		}
	}
}

// TestLMOutputsChecked: asking for more rows than the batch has, or for a
// row it does not have, is Eval's error, not a read outside the batch.
func TestLMOutputsChecked(t *testing.T) {
	model := newModel(t).LM()
	positions, mask := engine.CausalBatch(2, 0)
	for _, c := range []struct {
		outputs []int32
		want    string
	}{
		{[]int32{0, 1, 1}, "dim n_outputs = 3 is outside [0, n_tokens = 2]"},
		{[]int32{2}, "input inp_out_ids: element 0 is 2, not a row of attn_out-1 (0..1)"},
		{[]int32{-1}, "input inp_out_ids: element 0 is -1, not a row of attn_out-1 (0..1)"},
	} {
		_, err := model.Decode(&lm.Batch{Tokens: []int32{1, 2}, Pos: positions, Mask: mask, NKV: 2, Outputs: c.outputs})
		if err == nil || err.Error() != c.want {
			t.Errorf("Outputs %v: %v, want %q", c.outputs, err, c.want)
		}
	}
}

// TestLMReusesLogits: a Batch's Logits memory holds Decode's result where
// its capacity does (two rows' memory for one row), and new memory holds
// it where not; the logits are those of a Decode without it.
func TestLMReusesLogits(t *testing.T) {
	reusing, fresh := newModel(t).LM(), newModel(t).LM()
	var lent []float32
	for step, tokens := range [][]int32{{1, 17, 230}, {5}, {99}} {
		pos := []int{0, 3, 4}[step]
		n := len(tokens)
		positions, mask := engine.CausalBatch(n, pos)
		outputs := []int32{int32(n - 1)}
		if step == 0 {
			outputs = []int32{0, int32(n - 1)}
		}
		if step == 2 {
			lent = lent[:1:1] // no room: new memory
		}
		got, err := reusing.Decode(&lm.Batch{Tokens: tokens, Pos: positions, Mask: mask, NKV: pos + n, Outputs: outputs, Logits: lent})
		if err != nil {
			t.Fatal(err)
		}
		want, err := fresh.Decode(&lm.Batch{Tokens: tokens, Pos: positions, Mask: mask, NKV: pos + n, Outputs: outputs})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("step %d: %d logits, want %d", step, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("step %d, logit %d: %g with Logits given, %g without", step, i, got[i], want[i])
			}
		}
		if in := cap(lent) >= len(want); in != (unsafe.SliceData(got) == unsafe.SliceData(lent)) {
			t.Errorf("step %d: logits in the given memory %v, want %v", step, !in, in)
		}
		lent = got
	}
}
