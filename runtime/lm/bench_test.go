package lm_test

import (
	"context"
	"errors"
	"testing"

	"github.com/graphc/graphc/runtime/lm"
	"github.com/graphc/graphc/runtime/lm/sample"
	"github.com/graphc/graphc/tokenizer"
)

// freeModel is a decoder that costs nothing: its logits are fixed and
// not even copied, so a benchmark over it times the engine alone.
type freeModel struct {
	info   lm.Info
	logits []float32
}

func (f *freeModel) Info() lm.Info { return f.info }

func (f *freeModel) Decode(b *lm.Batch) ([]float32, error) {
	if len(b.Outputs) != 1 {
		return nil, errors.New("freeModel: one output a batch")
	}
	return f.logits, nil
}

// BenchmarkEngineToken is the engine's own time per generated token at
// Llama 3's vocabulary (128256) and a 4096-token cache: the batch, its
// mask, copying the logits, sampling with llama.cpp's defaults, decoding
// the text. A token of a 1B-class model takes tens of milliseconds to
// evaluate; this is what generate and serve add to each.
func BenchmarkEngineToken(b *testing.B) {
	const nVocab = 128256
	v := tokenizer.Vocab{Model: "llama", BOS: 1, EOS: 0, EOT: tokenizer.NoToken, UNK: tokenizer.NoToken, PAD: tokenizer.NoToken}
	for i := range nVocab {
		v.Tokens = append(v.Tokens, string(rune('a'+i%26))+string(rune('A'+i/26%26))+string(rune('0'+i/676%10))+string(rune('a'+i/6760)))
	}
	tok, err := tokenizer.New(v)
	if err != nil {
		b.Fatal(err)
	}
	m := &freeModel{info: lm.Info{NCtx: 4096, NBatch: 512, NVocab: nVocab}, logits: make([]float32, nVocab)}
	for i := range m.logits {
		m.logits[i] = float32((i*7919)%1000) / 100 // no end of generation: token 0 scores 0
	}
	e := lm.NewEngine(m, tok, lm.Options{})
	defer e.Close()
	p := sample.Defaults()
	p.Seed = 1
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(b.N-done, 4000)
		s, err := e.Start(context.Background(), lm.Request{Prompt: []int32{1, 2, 3}, MaxTokens: n, Sampling: p})
		if err != nil {
			b.Fatal(err)
		}
		for range s.Tokens() {
		}
		res, err := s.Result()
		if err != nil {
			b.Fatal(err)
		}
		done += res.Tokens
	}
}
