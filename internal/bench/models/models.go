// Package models registers graphc's generated llama examples with
// internal/bench as model-evaluation cases. It is separate from bench because
// the compiler (whose `graphc bench` runs the cases) cannot import generated
// packages: their tests import the compiler. The graphc command and bench's
// tests import it for its side effect.
package models

import (
	"math"

	"github.com/graphc/graphc/examples/llama"
	"github.com/graphc/graphc/examples/llama32"
	"github.com/graphc/graphc/internal/bench"
	"github.com/graphc/graphc/runtime"
)

func init() {
	bench.RegisterModel("llama_eval", 4, llamaSetup)
	bench.RegisterModel("llama32_eval", 32, llama32Setup)
}

// llamaSetup builds the llama example (4 layers) with the traces' weights
// and returns one evaluation of a batch of 8 tokens over a 16-slot cache.
func llamaSetup(threads int) (op func(), cleanup func()) {
	weights := map[string]runtime.Tensor{}
	for k, w := range llama.Weights {
		x := runtime.NewTensor(w.Type, w.Ne)
		runtime.Fill(&x, runtime.GGMLFill(k))
		weights[w.Name] = x
	}
	m, err := llama.New(weights, threads)
	if err != nil {
		panic(err)
	}
	in := &llama.Inputs{Dims: llama.Dims{NTokens: 8, NKv: 16}}
	in.InpTokens, in.InpPos, in.KQMask = batch(8, 16)
	return func() {
		if _, err := m.Eval(in); err != nil {
			panic(err)
		}
	}, m.Close
}

// llama32Setup is llamaSetup for the 32-layer version.
func llama32Setup(threads int) (op func(), cleanup func()) {
	weights := map[string]runtime.Tensor{}
	for k, w := range llama32.Weights {
		x := runtime.NewTensor(w.Type, w.Ne)
		runtime.Fill(&x, runtime.GGMLFill(k))
		weights[w.Name] = x
	}
	m, err := llama32.New(weights, threads)
	if err != nil {
		panic(err)
	}
	in := &llama32.Inputs{Dims: llama32.Dims{NTokens: 8, NKv: 16}}
	in.InpTokens, in.InpPos, in.KQMask = batch(8, 16)
	return func() {
		if _, err := m.Eval(in); err != nil {
			panic(err)
		}
	}, m.Close
}

// batch returns the inputs of nTokens tokens ending at cache slot nKV:
// token ids (t·7+3) mod 128, positions nKV-nTokens+t, and the causal mask.
func batch(nTokens, nKV int) (tokens, pos []int32, mask []float32) {
	for t := 0; t < nTokens; t++ {
		tokens = append(tokens, int32((t*7+3)%128))
		pos = append(pos, int32(nKV-nTokens+t))
		for j := 0; j < nKV; j++ {
			v := float32(0)
			if j > nKV-nTokens+t {
				v = float32(math.Inf(-1))
			}
			mask = append(mask, v)
		}
	}
	return
}
