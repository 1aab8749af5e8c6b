package tokenizer

import (
	"fmt"
	"strings"
)

// spmTestVocab is a small SentencePiece vocabulary: <unk>, <s>, </s>, the
// 256 byte tokens, then pieces whose score grows with their length, so
// that longer merges win.
func spmTestVocab() Vocab {
	v := Vocab{Model: "llama", BOS: 1, EOS: 2, UNK: 0, PAD: NoToken, EOT: NoToken, AddBOS: true, AddSpacePrefix: true}
	add := func(s string, score float32, typ TokenType) {
		v.Tokens = append(v.Tokens, s)
		v.Scores = append(v.Scores, score)
		v.Types = append(v.Types, typ)
	}
	add("<unk>", 0, Unknown)
	add("<s>", 0, Control)
	add("</s>", 0, Control)
	for b := 0; b < 256; b++ {
		add(fmt.Sprintf("<0x%02X>", b), 0, Byte)
	}
	for _, p := range []string{
		"▁", "▁▁", "▁▁▁", "h", "e", "l", "o", "w", "r", "d", "a", "b", "t",
		"he", "ll", "llo", "hello", "▁h", "▁he", "▁hell", "▁hello",
		"▁w", "▁wo", "▁wor", "▁worl", "▁world", "or", "ld",
		"1", "2", "3", "12", "123", "▁1", "é", "▁é", "日", "本", "日本", "▁日本",
		"\n", "\t", "!", "▁!",
	} {
		add(p, float32(-100+10*len([]rune(p))), Normal)
	}
	return v
}

// bpeTestVocab is a small byte-level BPE vocabulary: the 256 byte
// characters, then the merges that spell words, each merge's result a
// token; pre is the pre-tokenizer.
func bpeTestVocab(pre string) Vocab {
	v := Vocab{Model: "gpt2", Pre: pre, BOS: 0, EOS: 1, EOT: NoToken, UNK: NoToken, PAD: NoToken, AddBOS: true}
	add := func(s string, typ TokenType) {
		v.Tokens = append(v.Tokens, s)
		v.Types = append(v.Types, typ)
	}
	add("<|begin_of_text|>", Control)
	add("<|end_of_text|>", Control)
	for b := 0; b < 256; b++ {
		add(byteChar[b], Normal)
	}
	have := map[string]bool{}
	for _, t := range v.Tokens {
		have[t] = true
	}
	for _, w := range []string{
		"hello", " hello", " world", "world", "  ", "\n\n", " the", "123", "12", "é", " café",
		"日本", "😀", " 😀", "'s", "ing", " runn",
	} {
		chars := strings.Split(encodeByteLevel(w), "")
		// Merge left to right: each prefix with the next character.
		prefix := chars[0]
		for _, c := range chars[1:] {
			m := prefix + " " + c
			prefix += c
			if !have[prefix] {
				v.Merges = append(v.Merges, m)
				add(prefix, Normal)
				have[prefix] = true
			}
		}
	}
	return v
}
