package tokenizer

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/graphc/graphc/gguf"
)

// TestPreTokenizerTable checks that every pre-tokenizer's regexes compile
// and that no name is in the table twice.
func TestPreTokenizerTable(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range preTokenizers {
		for _, n := range p.names {
			if seen[n] {
				t.Errorf("pre-tokenizer %q is in the table twice", n)
			}
			seen[n] = true
		}
		if _, err := newSplitter(&p); err != nil {
			t.Error(err)
		}
	}
	for _, n := range unsupportedPre {
		if seen[n] {
			t.Errorf("pre-tokenizer %q is both supported and not", n)
		}
	}
	if names := PreTokenizers(); !slices.IsSorted(names) || !slices.Contains(names, "gpt-2") {
		t.Errorf("PreTokenizers() = %q", names)
	}
}

// TestSplitPreTokenizers pins what sets pre-tokenizers apart, as
// TestPreTokenizersMatchLlamaCpp (internal/llamacpp) found llama.cpp to
// split.
func TestSplitPreTokenizers(t *testing.T) {
	for _, tc := range []struct {
		pre, text string
		want      []string
	}{
		{"gpt-2", "Hello  world 12345's", []string{"Hello", " ", " world", " 12345", "'s"}},
		{"starcoder", "x 12345", []string{"x", " ", "1", "2", "3", "4", "5"}},
		{"deepseek-v3", "12345 日本語abc", []string{"123", "45", " ", "日本語", "abc"}},
		{"deepseek-v3", "a ~b", []string{"a", " ~", "b"}},
		{"superbpe", "x 12345 y", []string{"x ", "12", "345", " y"}},
		{"tiny_aya", "ab1234 x", []string{"ab", "1", "234", " x"}},
		{"afmoe", "x   1", []string{"x", "  ", " ", "1"}},
		{"kimi-k2", "日本語abc's", []string{"日本語", "abc's"}},
		{"tekken", "HELLOWorld iPhone", []string{"HELLOWorld", " i", "Phone"}},
		{"gpt-4o", "HELLOWorld's iPhone", []string{"HELLOWorld's", " i", "Phone"}},
		{"bloom", "Hello, world! 12", []string{"Hello", ",", " world", "!", " 12"}},
		// The later regexes cut what the first one kept whole.
		{"chameleon", "<sentinel:3>ab  cd", []string{"<", "sentinel", ":", "3", ">", "ab", "  ", "cd"}},
		{"jais-2", "a" + strings.Repeat(" ", 6) + "b", []string{"a", "    ", " ", " b"}},
		{"default", "a+b 1234", []string{"a", "+", "b", " ", "123", "4"}},
	} {
		if got := mustSplitter(t, tc.pre).words(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("%s: split(%q) = %q, want %q", tc.pre, tc.text, got, tc.want)
		}
	}
}

func TestCompileRegexErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`a+?`, "lazy and possessive quantifiers are not supported"},
		{`\p{Greek}`, `unsupported category \p{Greek}`},
		{`\p{L}é`, "both Unicode categories and non-ASCII characters"},
		{`(a`, "missing )"},
		{`[a`, "missing ]"},
		{`a{2,1}`, "bad repeat"},
		{`(?<x>a)`, "unsupported group"},
	} {
		if _, err := compileRegex(tc.src); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("compileRegex(%q): error %v, want it to say %q", tc.src, err, tc.want)
		}
	}
}

// TestVocabFromGGUFPreDefaults checks the defaults a pre-tokenizer sets
// for a file that leaves tokenizer.ggml.add_bos_token and bos_token_id
// out, as llama.cpp's loader does.
func TestVocabFromGGUFPreDefaults(t *testing.T) {
	for _, tc := range []struct {
		pre    string
		addBOS bool
		bos    int32
	}{
		{"llama-bpe", true, 11},
		{"tekken", true, 11},
		{"chameleon", true, 11},
		{"qwen2", false, 11},
		{"gpt-2", false, 11},
		{"glm4", false, NoToken},
	} {
		w := gguf.NewWriter()
		for _, kv := range []gguf.KV{
			{Key: keyModel, Value: "gpt2"},
			{Key: keyPre, Value: tc.pre},
			{Key: keyTokens, Value: []string{"a", "b"}},
			{Key: keyMerges, Value: []string{"a b"}},
		} {
			if err := w.AddMeta(kv.Key, kv.Value); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		v, err := VocabFromGGUF(f)
		if err != nil {
			t.Fatal(err)
		}
		if v.AddBOS != tc.addBOS || v.BOS != tc.bos {
			t.Errorf("%s: add bos %v, bos %d; want %v, %d", tc.pre, v.AddBOS, v.BOS, tc.addBOS, tc.bos)
		}
	}
}

// TestBPEMergeRules checks the merge table's edge cases: a pair listed
// twice keeps its first rank, as llama.cpp's bpe_ranks.emplace does, and a
// merge whose part is no token is refused.
func TestBPEMergeRules(t *testing.T) {
	v := Vocab{Model: "gpt2", Pre: "gpt-2", Tokens: []string{"a", "b", "c", "ab", "bc"},
		Merges: []string{"b c", "a b", "b c"}, BOS: NoToken, EOS: NoToken, EOT: NoToken, UNK: NoToken, PAD: NoToken}
	tk := mustNew(t, v)
	if got := pieces(tk, tk.Encode("abc", false, false)); !slices.Equal(got, []string{"a", "bc"}) {
		t.Errorf("Encode(abc) = %q, want [a bc]", got)
	}
	v.Merges = append(v.Merges, "ab x")
	if _, err := New(v); err == nil || !strings.Contains(err.Error(), `merge 3 "ab x" has a part that is no token`) {
		t.Errorf("New with a merge of a non-token: %v", err)
	}
}
