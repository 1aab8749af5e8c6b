package llamacpp_test

import (
	"math/rand/v2"
	"slices"
	"strings"
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

// preTexts cover what the pre-tokenizers tell apart: digit runs of every
// length, contractions in both cases, letters of many scripts with their
// marks and digits, punctuation runs, code, and whitespace runs.
var preTexts = []string{
	"1 12 123 1234 12345 123456 1234567 x1y22z333 v1.2.3 1,234,567.89 ١٢٣٤ १२३४५",
	"'s 't 're 've 'm 'll 'd 'S 'T 'RE 'VE 'M 'LL 'D it's I'M you'Re they'VE we'd",
	"HELLO World CamelCase iPhone ÉCOLE école ΑΘΗΝΑ Αθήνα MacDonald's",
	"日本語のテキスト、カタカナ。中文，标点！한국어 텍스트 안녕하세요 ㄱㄴ ㄅㄆ",
	"مرحبا بالعالم، ١٢٣ नमस्ते दुनिया। १२३ ไทย ພາສາ ខ្មែរ မြန်မာ",
	"e\u0301 Cafe\u0301 n\u0303 a\u0308\u0301 👨‍👩‍👧 🇯🇵 😀😀 👍🏽",
	"func main() {\n\tif x != nil { return x[1:] } // ok\n\ty := a->b <= c && d || !e\n}\n",
	"a\t\t b   \n\n  c  \r\n\r\n  d \u00a0 e\u3000\u3000f \v\f g\n \n \n",
	"punct!!! ??? ... —– “quotes” «x» ‘y’ (a) [b] {c} ~tilde~ $5 + 3 = 8 ^ ` | @#%&*_\\/",
	"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ a!b\"c#d$e%f&g'h(i)j*k+l,m-n.o/p:q;r<s=t>u?v@w[x\\y]z^A_B`C{D|E}F~G",
	"<sentinel:12> IMGIMGABCZ IMGIMGJZ <|end_of_text|>x<|begin_of_text|> <s>",
	"                                                    long    run   ",
	"bad \xff\xfe utf-8 \xc3 and \xe6\x97 cut; a\x1cb\x1fc\u0085d\u2028e\u200bf\u00adg\x7f",
	"x\n", "\n\n\n", " ", "  ", "a", "",
}

// randomTexts returns n texts of length runes each, drawn (with a fixed
// seed) from runs of characters the pre-tokenizers treat differently.
func randomTexts(n, length int) []string {
	pool := []string{
		"a", "Z", "é", "É", "ß", "ǅ", "ω", "Ω", "ж", "日", "本", "ア", "ぁ", "한", "ㄱ", "ㄅ", "ก", "ع", "न", "्",
		"\u0301", "\u0308", "1", "7", "0", "١", "१", "½", "Ⅻ", " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000",
		"'", "'s", "'LL", "'re", "!", ".", ",", "?", "…", "。", "，", "-", "_", "/", "\\", "(", ")", "[", "{", "<", ">",
		"$", "+", "=", "^", "`", "|", "~", "@", "#", "%", "&", "*", "\"", ":", ";", "😀", "👍🏽", "\u200d", "\ufffd", "\x00", "\x7f",
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var out []string
	for range n {
		var b strings.Builder
		for range length {
			b.WriteString(pool[rng.IntN(len(pool))])
		}
		out = append(out, b.String())
	}
	return out
}

// preVocab is a byte-level BPE vocabulary made to show every word
// boundary: every piece of two to four byte characters in texts is a
// token, with a merge for each way to cut it in two, shorter first, so
// that a word no longer than four becomes one token and a boundary that
// one side has and the other not changes the ids.
func preVocab(pre string, texts []string) tokenizer.Vocab {
	v := tokenizer.Vocab{Model: "gpt2", Pre: pre, BOS: 0, EOS: 1, EOT: tokenizer.NoToken, UNK: tokenizer.NoToken, PAD: tokenizer.NoToken, AddBOS: true}
	add := func(s string, typ tokenizer.TokenType) {
		v.Tokens = append(v.Tokens, s)
		v.Types = append(v.Types, typ)
	}
	add("<|begin_of_text|>", tokenizer.Control)
	add("<|end_of_text|>", tokenizer.Control)
	chars := byteChars()
	have := map[string]bool{}
	for _, c := range chars {
		add(c, tokenizer.Normal)
		have[c] = true
	}
	var spelled [][]string
	for _, text := range texts {
		var cs []string
		for i := 0; i < len(text); i++ {
			cs = append(cs, chars[text[i]])
		}
		spelled = append(spelled, cs)
	}
	for n := 2; n <= 4; n++ {
		for _, cs := range spelled {
			for i := 0; i+n <= len(cs); i++ {
				piece := cs[i : i+n]
				s := strings.Join(piece, "")
				if have[s] || strings.HasPrefix(s, "<") && strings.HasSuffix(s, ">") {
					// llama.cpp makes a normal token such as </s> a
					// control one.
					continue
				}
				have[s] = true
				add(s, tokenizer.Normal)
				for k := 1; k < n; k++ {
					l, r := strings.Join(piece[:k], ""), strings.Join(piece[k:], "")
					if have[l] && have[r] {
						v.Merges = append(v.Merges, l+" "+r)
					}
				}
			}
		}
	}
	return v
}

// TestPreTokenizersMatchLlamaCpp checks every pre-tokenizer graphc
// supports against llama_tokenize on a vocabulary that shows its word
// boundaries, with and without add_special and parse_special. Two prompts
// a name keep it to two llama.cpp runs: the long texts and random ones
// joined by newlines, and the short texts, whose every character is near
// an end, joined by a control token, so that with parse_special each is a
// text of its own.
func TestPreTokenizersMatchLlamaCpp(t *testing.T) {
	h := oracle(t)
	all := append(slices.Clone(preTexts), oracleTexts...)
	all = append(all, randomTexts(6, 160)...)
	var prompts, long []string
	for _, text := range all {
		if len(text) <= 16 {
			prompts = append(prompts, text)
		} else {
			long = append(long, text)
		}
	}
	prompts = []string{strings.Join(long, "\n"), strings.Join(prompts, "<|end_of_text|>")}
	for _, pre := range tokenizer.PreTokenizers() {
		if pre == "" {
			continue // llama.cpp's default; "default" names it
		}
		t.Run(pre, func(t *testing.T) {
			v := preVocab(pre, all)
			m := model{arch: "llama", nEmbd: 64, nHead: 4, nLayer: 1, nFF: 128, nCtx: 16}
			m.tensors, _ = llamaTensors(m, len(v.Tokens), tensor.F32)
			path := writeGGUF(t, m, v)
			tk, err := tokenizer.New(v)
			if err != nil {
				t.Fatal(err)
			}
			for _, text := range prompts {
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
						t.Errorf("Encode(%q, add %v, parse %v):\n got %q\nwant %q", text, m.add, m.parse, texts(tk, got), texts(tk, m.want))
					}
				}
			}
		})
	}
}
