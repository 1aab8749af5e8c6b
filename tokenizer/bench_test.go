package tokenizer

import (
	"strings"
	"testing"
)

// benchText is a few KB of mixed text: prose, code, numbers, whitespace
// runs and non-Latin scripts.
var benchText = strings.Repeat("The quick brown fox doesn't jump over 12345 lazy dogs; it's 3.14 times faster.\n"+
	"func main() {\n\tfor i := 0; i < 100; i++ {\n\t\tfmt.Println(\"hello, world\", i)\n\t}\n}\n"+
	"Café naïve résumé — 日本語のテキスト、中文 😀 👍🏽   spaced    out\r\n\r\n", 20)

// BenchmarkEncode tokenizes benchText with the llama-bpe pre-tokenizer.
func BenchmarkEncode(b *testing.B) {
	tk := mustNew(b, bpeTestVocab("llama-bpe"))
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		tk.Encode(benchText, false, false)
	}
}

// BenchmarkSplit pre-tokenizes benchText alone, by pre-tokenizer.
func BenchmarkSplit(b *testing.B) {
	for _, pre := range []string{"llama-bpe", "gpt-2", "deepseek-v3", "tekken"} {
		b.Run(pre, func(b *testing.B) {
			s := mustSplitter(b, pre)
			b.SetBytes(int64(len(benchText)))
			for b.Loop() {
				s.split(benchText, func(string) {})
			}
		})
	}
}
