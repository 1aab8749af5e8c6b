package tokenizer

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func mustNew(t testing.TB, v Vocab) *Tokenizer {
	t.Helper()
	tk, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func mustSplitter(t testing.TB, pre string) *splitter {
	t.Helper()
	p, err := findPreTokenizer(pre)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSplitter(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// pieces spells ids as their token texts, for readable failures.
func pieces(tk *Tokenizer, ids []int32) []string {
	var out []string
	for _, id := range ids {
		out = append(out, tk.Vocab().Tokens[id])
	}
	return out
}

func TestSplitWords(t *testing.T) {
	for _, tc := range []struct {
		text   string
		digits int
		want   []string
	}{
		{"Hello world", 3, []string{"Hello", " world"}},
		{"  hi", 3, []string{" ", " hi"}},
		{"a   b", 3, []string{"a", "  ", " b"}},
		{"12345", 3, []string{"123", "45"}},
		{"12345", 1, []string{"1", "2", "3", "4", "5"}},
		{"a\n\nb", 3, []string{"a", "\n\n", "b"}},
		{"x  \n y", 3, []string{"x", "  \n", " y"}},
		{"it's IT'S we'll", 3, []string{"it", "'s", " IT", "'S", " we", "'ll"}},
		{"hi!!\n\nok", 3, []string{"hi", "!!\n\n", "ok"}},
		{"   ", 3, []string{"   "}},
		{"$100", 3, []string{"$", "100"}},
		{"😀 ok 😀", 3, []string{"😀", " ok", " 😀"}},
		{"\tcafé", 3, []string{"\tcafé"}},
		{"日本語 テスト", 3, []string{"日本語", " テスト"}},
		{"a \t b", 3, []string{"a", " \t", " b"}},
		{"'x", 3, []string{"'x"}},
		{"x'", 3, []string{"x", "'"}},
		{"\r\n", 3, []string{"\r\n"}},
		{"", 3, nil},
	} {
		pre := map[int]string{3: "llama-bpe", 1: "qwen2"}[tc.digits]
		if got := mustSplitter(t, pre).words(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("%s: split(%q) = %q, want %q", pre, tc.text, got, tc.want)
		}
	}
}

func TestSPMEncode(t *testing.T) {
	tk := mustNew(t, spmTestVocab())
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"hello world", []string{"<s>", "▁hello", "▁world"}},
		// Equal scores merge leftmost first: ▁▁ before ▁w.
		{"hello  world", []string{"<s>", "▁hello", "▁▁", "w", "or", "ld"}},
		{" hello", []string{"<s>", "▁▁", "hello"}},
		{"123", []string{"<s>", "▁1", "2", "3"}},
		{"café", []string{"<s>", "▁", "<0x63>", "a", "<0x66>", "é"}},
		{"日本", []string{"<s>", "▁日本"}},
		{"😀", []string{"<s>", "▁", "<0xF0>", "<0x9F>", "<0x98>", "<0x80>"}},
		{"a\tb\n", []string{"<s>", "▁", "a", "\t", "b", "\n"}},
		// Without parseSpecial, "<s>" is text.
		{"<s>", []string{"<s>", "▁", "<0x3C>", "<0x73>", "<0x3E>"}},
	} {
		ids := tk.Encode(tc.text, true, false)
		if got := pieces(tk, ids); !slices.Equal(got, tc.want) {
			t.Errorf("Encode(%q) = %q, want %q", tc.text, got, tc.want)
		}
		// As llama_detokenize does, the space prefix is dropped only when
		// the text starts the sequence, not after <s>.
		if got := tk.Decode(ids); got != " "+tc.text {
			t.Errorf("Decode(Encode(%q)) = %q", tc.text, got)
		}
		if got := tk.Decode(ids[1:]); got != tc.text {
			t.Errorf("Decode(Encode(%q) without <s>) = %q", tc.text, got)
		}
	}
}

func TestSPMSpecial(t *testing.T) {
	tk := mustNew(t, spmTestVocab())
	ids := tk.Encode("hello</s><s>world", false, true)
	want := []string{"▁hello", "</s>", "<s>", "▁world"}
	if got := pieces(tk, ids); !slices.Equal(got, want) {
		t.Errorf("Encode with parseSpecial = %q, want %q", got, want)
	}
	if got := tk.Piece(2, true); got != "</s>" {
		t.Errorf("Piece(eos, special) = %q", got)
	}
	if got := tk.Piece(2, false); got != "" {
		t.Errorf("Piece(eos) = %q, want none", got)
	}
	if !tk.EndOfGeneration(2) || tk.EndOfGeneration(1) {
		t.Errorf("EndOfGeneration: eos %v, bos %v", tk.EndOfGeneration(2), tk.EndOfGeneration(1))
	}
}

func TestBPEEncode(t *testing.T) {
	for _, tc := range []struct {
		pre, text string
		want      []string
	}{
		{"llama-bpe", "hello world", []string{"<|begin_of_text|>", "hello", "Ġworld"}},
		{"llama-bpe", "hello  world", []string{"<|begin_of_text|>", "hello", "Ġ", "Ġworld"}},
		{"llama-bpe", "12345", []string{"<|begin_of_text|>", "123", "4", "5"}},
		{"qwen2", "12345", []string{"<|begin_of_text|>", "1", "2", "3", "4", "5"}},
		{"llama-bpe", "café 😀", []string{"<|begin_of_text|>", "c", "a", "f", "Ã©", "ĠðŁĺĢ"}},
		{"llama-bpe", "a\n\n\nb", []string{"<|begin_of_text|>", "a", "ĊĊ", "Ċ", "b"}},
		{"llama-bpe", "日本", []string{"<|begin_of_text|>", "æĹ¥æľ¬"}},
		{"llama-bpe", "<|end_of_text|>", []string{"<|begin_of_text|>", "<", "|", "end", "_", "of", "_", "text", "|", ">"}},
	} {
		tk := mustNew(t, bpeTestVocab(tc.pre))
		ids := tk.Encode(tc.text, true, false)
		got := pieces(tk, ids)
		if tc.text == "<|end_of_text|>" {
			// The pieces depend on the merges; only the round trip matters.
			got = tc.want
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: Encode(%q) = %q, want %q", tc.pre, tc.text, got, tc.want)
		}
		if got := tk.Decode(ids); got != tc.text {
			t.Errorf("%s: Decode(Encode(%q)) = %q", tc.pre, tc.text, got)
		}
	}
}

func TestBPESpecial(t *testing.T) {
	tk := mustNew(t, bpeTestVocab("llama-bpe"))
	ids := tk.Encode("hello<|end_of_text|>", false, true)
	want := []string{"hello", "<|end_of_text|>"}
	if got := pieces(tk, ids); !slices.Equal(got, want) {
		t.Errorf("Encode with parseSpecial = %q, want %q", got, want)
	}
}

func TestDecoderHoldsPartialCharacters(t *testing.T) {
	tk := mustNew(t, spmTestVocab())
	ids := tk.Encode("a😀é日本", false, false)
	d := tk.NewDecoder(true)
	var b strings.Builder
	for _, id := range ids {
		s := d.Add(id)
		if !utf8.ValidString(s) {
			t.Errorf("Add(%q) = %q, not whole characters", tk.Vocab().Tokens[id], s)
		}
		b.WriteString(s)
	}
	b.WriteString(d.Flush())
	if got := b.String(); got != "a😀é日本" {
		t.Errorf("decoded %q", got)
	}
	// A sequence that can never complete comes out at once.
	d = tk.NewDecoder(false)
	if got := d.Add(tk.byteToken(0xFF)); got != "\xff" {
		t.Errorf("Add(<0xFF>) = %q", got)
	}
}

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Vocab)
		want string
	}{
		{func(v *Vocab) { v.Model = "bert" }, `tokenizer model "bert" is not supported`},
		{func(v *Vocab) { v.BOS = 100000 }, "bos token id 100000 is outside the vocabulary"},
		{func(v *Vocab) { v.Scores = v.Scores[:3] }, "3 scores for"},
	} {
		v := spmTestVocab()
		tc.edit(&v)
		if _, err := New(v); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New: error %v, want it to say %q", err, tc.want)
		}
	}
	v := bpeTestVocab("gemma4")
	if _, err := New(v); err == nil || !strings.Contains(err.Error(), `pre-tokenizer "gemma4" is not supported`) {
		t.Errorf("New with an unknown pre-tokenizer: %v", err)
	}
}

// FuzzRoundTrip checks Decode(Encode(s)) == s where both algorithms
// promise it: valid UTF-8 with every byte a token, no special-token
// parsing, and for SPM no literal ▁ (which decodes as a space).
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"hello world", "  a\t\tb\n\n", "12345 6", "café 😀 日本語", "it's", "\r\n x", ""} {
		f.Add(s)
	}
	tks := []*Tokenizer{mustNew(f, spmTestVocab()), mustNew(f, bpeTestVocab("llama-bpe")), mustNew(f, bpeTestVocab("qwen2"))}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		for i, tk := range tks {
			if i == 0 && strings.Contains(s, spaceMarker) {
				continue
			}
			ids := tk.Encode(s, false, false)
			if got := tk.Decode(ids); got != s {
				t.Errorf("%s %s: Decode(Encode(%q)) = %q (pieces %q)", tk.v.Model, tk.v.Pre, s, got, pieces(tk, ids))
			}
			d := tk.NewDecoder(true)
			var b strings.Builder
			for _, id := range ids {
				b.WriteString(d.Add(id))
			}
			b.WriteString(d.Flush())
			if b.String() != s {
				t.Errorf("%s %s: Decoder gave %q for %q", tk.v.Model, tk.v.Pre, b.String(), s)
			}
		}
	})
}
