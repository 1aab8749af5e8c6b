package main

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/graphc/graphc/examples/llamafile"
	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/gguf/ggufarch"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/runtime/lm/sample"
	"github.com/graphc/graphc/tokenizer"
)

// TestStory: the example's greedy text is the argmax of the compiled
// package's own logits, evaluated step by step through Eval.
func TestStory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := ggufarch.WriteFile(path, ggufarch.Defaults("llama")); err != nil {
		t.Fatal(err)
	}
	const prompt, n = "Once upon a time", 12
	p := sample.Defaults()
	p.Temp = 0
	var out bytes.Buffer
	if err := story(context.Background(), &out, path, prompt, n, p); err != nil {
		t.Fatal(err)
	}

	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := f.Weights(llamafile.Weights)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromGGUF(f.File)
	if err != nil {
		t.Fatal(err)
	}
	m, err := llamafile.New(w, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	seq := tok.Encode(prompt, true, true)
	var gen []int32
	for pos, batch := 0, seq; len(gen) < n; {
		positions, mask := engine.CausalBatch(len(batch), pos)
		in := &llamafile.Inputs{Dims: llamafile.Dims{NTokens: len(batch), NKV: pos + len(batch), NOutputs: 1}, InpTokens: batch, InpPos: positions, KQMask: mask, InpOutIds: []int32{int32(len(batch) - 1)}}
		o, err := m.Eval(in)
		if err != nil {
			t.Fatal(err)
		}
		logits := o.ResultOutput.F32s()
		next := int32(slices.Index(logits, slices.Max(logits)))
		if tok.EndOfGeneration(next) {
			break
		}
		gen = append(gen, next)
		pos += len(batch)
		batch = []int32{next}
	}
	if want := prompt + tok.Decode(gen) + "\n"; out.String() != want {
		t.Errorf("story printed %q, want %q", out.String(), want)
	}
}
