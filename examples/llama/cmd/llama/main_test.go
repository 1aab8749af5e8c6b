package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/graphc/graphc/examples/llama"
	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/tensor"
	"github.com/graphc/graphc/tokenizer"
)

// charVocab is an SPM vocabulary of the model's 128 tokens without
// merges, so that a prompt encodes character by character whatever else
// the vocabulary holds: <unk>, <s>, </s>, ▁, the printable ASCII
// characters, then pieces no prompt here spells.
func charVocab() tokenizer.Vocab {
	v := tokenizer.Vocab{Model: "llama", BOS: 1, EOS: 2, UNK: 0, PAD: tokenizer.NoToken, EOT: tokenizer.NoToken, AddBOS: true, AddSpacePrefix: true}
	add := func(s string, typ tokenizer.TokenType) {
		v.Tokens = append(v.Tokens, s)
		v.Scores = append(v.Scores, -1000)
		v.Types = append(v.Types, typ)
	}
	add("<unk>", tokenizer.Unknown)
	add("<s>", tokenizer.Control)
	add("</s>", tokenizer.Control)
	add("▁", tokenizer.Normal)
	for c := '!'; c <= '~'; c++ {
		add(string(c), tokenizer.Normal)
	}
	for i := 0; len(v.Tokens) < 128; i++ {
		add(fmt.Sprintf("¤%d", i), tokenizer.Normal)
	}
	return v
}

// writeModelFile writes a GGUF file as graphc gguf new writes one for
// llama.g (the traces' fill) with v's tokenizer.ggml.* keys.
func writeModelFile(t *testing.T, v tokenizer.Vocab) string {
	t.Helper()
	w := gguf.NewWriter()
	types := make([]int32, len(v.Types))
	for i, typ := range v.Types {
		types[i] = int32(typ)
	}
	for _, kv := range []gguf.KV{
		{Key: "general.architecture", Value: "graphc"},
		{Key: "tokenizer.ggml.model", Value: v.Model},
		{Key: "tokenizer.ggml.tokens", Value: v.Tokens},
		{Key: "tokenizer.ggml.scores", Value: v.Scores},
		{Key: "tokenizer.ggml.token_type", Value: types},
		{Key: "tokenizer.ggml.bos_token_id", Value: uint32(v.BOS)},
		{Key: "tokenizer.ggml.eos_token_id", Value: uint32(v.EOS)},
		{Key: "tokenizer.ggml.unknown_token_id", Value: uint32(v.UNK)},
		{Key: "tokenizer.ggml.add_bos_token", Value: v.AddBOS},
		{Key: "tokenizer.ggml.add_space_prefix", Value: v.AddSpacePrefix},
	} {
		if err := w.AddMeta(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	for k, d := range llama.Weights {
		x := tensor.NewTensor(d.Type, d.Ne)
		tensor.Fill(&x, tensor.GGMLFill(k))
		data := make([]byte, 4*len(x.F32s()))
		for i, f := range x.F32s() {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(f))
		}
		ne := []int64{int64(d.Ne[0]), int64(d.Ne[1])}
		if d.Ne[1] == 1 {
			ne = ne[:1]
		}
		if err := w.AddTensor(d.Name, tensor.F32, ne, data); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "llama.gguf")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPromptStopsAtEndOfGeneration runs -prompt end to end on a file with
// a vocabulary whose eos is the first token the model picks greedily
// that is new after the first (the traces' fill makes it alternate two):
// the text of the tokens before it is printed, then generation stops,
// short of -n, with the tokens/s line.
func TestPromptStopsAtEndOfGeneration(t *testing.T) {
	const prompt, n = "hi", 10
	v := charVocab()
	tk, err := tokenizer.New(v)
	if err != nil {
		t.Fatal(err)
	}
	ids := tk.Encode(prompt, true, true)
	var out bytes.Buffer
	if err := runText(&out, prompt, n, 1, writeModelFile(t, v)); err != nil {
		t.Fatal(err)
	}
	greedy := greedyTokens(t, ids, n)

	// Control tokens stand for no text, so with the eos made one the
	// prompt still encodes the same.
	stop := -1
	for i := 1; i < n-1 && stop < 0; i++ {
		if g := greedy[i]; g > 3 && !slices.Contains(ids, g) && !slices.Contains(greedy[:i], g) {
			stop = i
		}
	}
	if stop < 0 {
		t.Fatalf("greedy tokens %v after %v: none to make the eos", greedy, ids)
	}
	v.Tokens[greedy[stop]], v.Types[greedy[stop]] = "</s>!", tokenizer.Control
	v.EOS = greedy[stop]
	tk, err = tokenizer.New(v)
	if err != nil {
		t.Fatal(err)
	}
	if again := tk.Encode(prompt, true, true); !slices.Equal(again, ids) {
		t.Fatalf("with eos %d the prompt encodes to %v, not %v", v.EOS, again, ids)
	}
	var text strings.Builder
	d := tk.NewDecoder(false)
	for _, id := range greedy[:stop] {
		text.WriteString(d.Add(id))
	}
	text.WriteString(d.Flush())

	out.Reset()
	if err := runText(&out, prompt, n, 1, writeModelFile(t, v)); err != nil {
		t.Fatal(err)
	}
	want := prompt + text.String() + "\n[end of generation]\n"
	if !strings.HasPrefix(out.String(), want) {
		t.Errorf("-prompt %q printed\n%q\nwant it to start with\n%q (greedy tokens %v, eos %d)", prompt, out.String(), want, greedy, v.EOS)
	}
	line := fmt.Sprintf(`^%d prompt tokens, %d generated; prompt \S+, then \d+ tokens/s\n$`, len(ids), stop+1)
	if rest := strings.TrimPrefix(out.String(), want); !regexp.MustCompile(line).MatchString(rest) {
		t.Errorf("after the text: %q; want a line matching %s", rest, line)
	}
}

// greedyTokens returns the model's n greedy tokens after prompt, the
// traces' fill as weights.
func greedyTokens(t *testing.T, prompt []int32, n int) []int32 {
	t.Helper()
	weights := map[string]tensor.Tensor{}
	for k, d := range llama.Weights {
		x := tensor.NewTensor(d.Type, d.Ne)
		tensor.Fill(&x, tensor.GGMLFill(k))
		weights[d.Name] = x
	}
	m, err := llama.New(weights, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	out, err := m.Generate(prompt, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
