package llama

import (
	"fmt"
	"slices"

	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/tensor"
)

// batch returns the inputs of a batch of tokens whose first token goes to
// KV cache slot pos: positions pos.., and a causal mask over the pos+len
// slots in use.
func batch(tokens []int32, pos int) *Inputs {
	positions, mask := engine.CausalBatch(len(tokens), pos)
	return &Inputs{Dims: Dims{NTokens: len(tokens), NKV: pos + len(tokens)}, InpTokens: tokens, InpPos: positions, KQMask: mask}
}

// Generate feeds the prompt to the model in batches of at most MaxNTokens
// tokens, then decodes n tokens greedily, one evaluation per token, each
// reading the keys and values the earlier ones left in the KV cache. It
// calls emit with every new token; when emit returns false, generation
// stops there, that token included, without evaluating it (a caller stops
// at its tokenizer's end-of-generation token). The model's cache must be
// empty (a new Model), and the prompt and n new tokens must fit in it.
func (m *Model) Generate(prompt []int32, n int, emit func(token int32) bool) ([]int32, error) {
	if len(prompt) == 0 {
		return nil, fmt.Errorf("generate: empty prompt")
	}
	if total := len(prompt) + n; total > MaxNKV {
		return nil, fmt.Errorf("generate: %d prompt + %d new tokens need %d KV cache slots; the cache has %d (dim n_kv <= %d)", len(prompt), n, total, MaxNKV, MaxNKV)
	}
	vocab := Weights[slices.IndexFunc(Weights, func(d tensor.Decl) bool { return d.Name == "token_embd.weight" })].Ne[1]
	for _, t := range prompt {
		if t < 0 || int(t) >= vocab {
			return nil, fmt.Errorf("generate: token %d is outside the vocabulary [0, %d)", t, vocab)
		}
	}
	var logits []float32
	for pos := 0; pos < len(prompt); pos += MaxNTokens {
		chunk := prompt[pos:min(pos+MaxNTokens, len(prompt))]
		out, err := m.Eval(batch(chunk, pos))
		if err != nil {
			return nil, err
		}
		vocab := out.ResultOutput.Ne[0]
		logits = out.ResultOutput.F32s()[(len(chunk)-1)*vocab : len(chunk)*vocab]
	}
	var generated []int32
	for pos := len(prompt); len(generated) < n; pos++ {
		next := argmax(logits)
		generated = append(generated, next)
		if emit != nil && !emit(next) || len(generated) == n {
			break
		}
		out, err := m.Eval(batch([]int32{next}, pos))
		if err != nil {
			return nil, err
		}
		logits = out.ResultOutput.F32s()
	}
	return generated, nil
}

func argmax(v []float32) int32 {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return int32(best)
}
