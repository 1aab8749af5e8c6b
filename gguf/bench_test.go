package gguf_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/tensor"
)

// BenchmarkParse parses a llama-sized header: a 128k-token vocabulary with
// scores and types, and 291 tensor infos (a 32-layer llama).
func BenchmarkParse(b *testing.B) {
	const nVocab = 128 << 10
	tokens := make([]string, nVocab)
	scores := make([]float32, nVocab)
	types := make([]int32, nVocab)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("tok%d", i)
	}
	w := gguf.NewWriter()
	must(b, w.AddMeta("tokenizer.ggml.tokens", tokens))
	must(b, w.AddMeta("tokenizer.ggml.scores", scores))
	must(b, w.AddMeta("tokenizer.ggml.token_type", types))
	data := make([]byte, 4*32)
	for i := range 291 {
		must(b, w.AddTensor(fmt.Sprintf("blk.%d.t%d.weight", i/9, i%9), tensor.F32, []int64{32}, data))
	}
	var buf bytes.Buffer
	_, err := w.WriteTo(&buf)
	must(b, err)
	file := buf.Bytes()
	b.SetBytes(int64(len(file)))
	b.ResetTimer()
	for range b.N {
		if _, err := gguf.Parse(bytes.NewReader(file), int64(len(file))); err != nil {
			b.Fatal(err)
		}
	}
}
