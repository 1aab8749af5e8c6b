package llamacpp_test

import (
	"slices"
	"testing"

	"github.com/graphc/graphc/internal/llamacpp"
	"github.com/graphc/graphc/tensor"
	"github.com/graphc/graphc/tokenizer"
)

var oracleTexts = []string{
	"Hello world",
	"  leading spaces",
	"tabs\tand\nnewlines\n\n\n",
	"digits 1234567 and 3.14 12",
	"unicode: café, naïve, 日本語, Ελληνικά",
	"emoji 😀👍🏽 ok 😀",
	"mixed   runs \t \n  of\r\nwhitespace   ",
	"it's we'll THEY'RE 'x",
	"<s>special</s> inside <|end_of_text|>the",
	"",
	" ",
	"\n",
	"$100!!\n\n(ok)",
	"nbsp\u00a0and\u3000ideographic space, a\r\n\r\nb, x \n\n y",
	"1a2b ١٢٣ ½ Ⅻ ____ --> ... ’quotes’ «fr» ǅ",
	"\t\t  \n \t",
	"naïve café 日本語😀😀 12345678",
}

// TestTokenizeMatchesLlamaCpp compares graphc's token ids with
// llama_tokenize's, with and without add_special and parse_special, for an
// SPM and two BPE vocabularies.
func TestTokenizeMatchesLlamaCpp(t *testing.T) {
	h := oracle(t)
	for _, tc := range []struct {
		name, arch string
		vocab      tokenizer.Vocab
	}{
		{"spm", "llama", spmVocab()},
		{"llama-bpe", "llama", bpeVocab("llama-bpe")},
		{"qwen2", "qwen2", bpeVocab("qwen2")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := model{arch: tc.arch, nEmbd: 64, nHead: 4, nLayer: 1, nFF: 128, nCtx: 16}
			m.tensors, _ = llamaTensors(m, len(tc.vocab.Tokens), tensor.F32)
			path := writeGGUF(t, m, tc.vocab)
			tk, err := tokenizer.New(tc.vocab)
			if err != nil {
				t.Fatal(err)
			}
			for _, text := range oracleTexts {
				res, err := h.Run(llamacpp.Request{Model: path, Prompt: text})
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range []struct {
					add, parse bool
					want       []int32
				}{{false, false, res.IDs}, {true, false, res.IDsAdd}, {false, true, res.IDsParse}, {true, true, res.IDsAddParse}} {
					got := tk.Encode(text, m.add, m.parse)
					if !slices.Equal(got, m.want) && !(len(got) == 0 && len(m.want) == 0) {
						t.Errorf("Encode(%q, add %v, parse %v):\n got %v %q\nwant %v %q", text, m.add, m.parse, got, texts(tk, got), m.want, texts(tk, m.want))
					}
				}
			}
		})
	}
}

func texts(tk *tokenizer.Tokenizer, ids []int32) []string {
	var out []string
	for _, id := range ids {
		out = append(out, tk.Vocab().Tokens[id])
	}
	return out
}
