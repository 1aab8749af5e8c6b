package llamapipe

import (
	"fmt"
	"os"
	"testing"

	"github.com/graphc/graphc/compiler"
	"github.com/graphc/graphc/internal/interp"
	"github.com/graphc/graphc/tensor"
)

// TestInterpMatchesCPU runs this package's plan — two simulated devices and
// the CPU, four pipeline copies, split inputs copied between buffers — in
// process (internal/interp, every backend's nodes on the CPU) with the
// inputs given, and wants the CPU-only llama package's logits bit for bit,
// evaluation after evaluation.
func TestInterpMatchesCPU(t *testing.T) {
	src, err := os.ReadFile("../llama/llama.g")
	if err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Compile("../llama/llama.g", src, config(t))
	if err != nil {
		t.Fatal(err)
	}
	_, cpu := models(t)
	im, err := interp.Load(res.Graph, interp.Config{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	for k, in := range steps() {
		want, err := cpu.Eval(in.cpu())
		if err != nil {
			t.Fatal(err)
		}
		mk := func(typ tensor.DType, ne0, ne1 int, fill func(tensor.Tensor)) tensor.Tensor {
			x := tensor.NewTensor(typ, [4]int{ne0, ne1, 1, 1})
			fill(x)
			return x
		}
		inputs := map[string]tensor.Tensor{
			"inp_tokens": mk(tensor.I32, in.NTokens, 1, func(x tensor.Tensor) { copy(x.I32s(), in.InpTokens) }),
			"inp_pos":    mk(tensor.I32, in.NTokens, 1, func(x tensor.Tensor) { copy(x.I32s(), in.InpPos) }),
			"KQ_mask":    mk(tensor.F32, in.NKV, in.NTokens, func(x tensor.Tensor) { copy(x.F32s(), in.KQMask) }),
		}
		got, err := im.Eval(map[string]int{"n_tokens": in.NTokens, "n_kv": in.NKV}, inputs)
		if err != nil {
			t.Fatal(err)
		}
		sameBits(t, fmt.Sprintf("evaluation %d", k), got[0].Tensor, want.ResultOutput)
	}
}
