package tokenizer

import "unicode"

// splitWords splits text the way the llama-bpe (digits = 3) and qwen2
// (digits = 1) pre-tokenizers' regex does:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,digits}|
//	 ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// Each alternative is tried in order at the current position, as a
// backtracking regex engine would, and the first that matches takes its
// text. Bytes that are not UTF-8 become U+FFFD first, as in llama.cpp.
func splitWords(text string, digits int) []string {
	cs := []rune(text)
	n := len(cs)
	at := func(i int) rune {
		if i < n {
			return cs[i]
		}
		return -1
	}
	isLetter := func(i int) bool { return i < n && unicode.IsLetter(cs[i]) }
	isNumber := func(i int) bool { return i < n && unicode.IsNumber(cs[i]) }
	isSpace := func(i int) bool { return i < n && unicode.IsSpace(cs[i]) }
	isNewline := func(i int) bool { return at(i) == '\r' || at(i) == '\n' }
	var words []string
	for pos := 0; pos < n; {
		end := matchAt(cs, pos, digits, at, isLetter, isNumber, isSpace, isNewline)
		words = append(words, string(cs[pos:end]))
		pos = end
	}
	return words
}

// matchAt returns where the first matching alternative's match that
// starts at pos ends.
func matchAt(cs []rune, pos, digits int, at func(int) rune, isLetter, isNumber, isSpace, isNewline func(int) bool) int {
	n := len(cs)
	// (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if at(pos) == '\'' {
		c1, c2 := unicode.ToLower(at(pos+1)), unicode.ToLower(at(pos+2))
		switch {
		case c1 == 's', c1 == 't', c1 == 'm', c1 == 'd':
			return pos + 2
		case c1 == 'r' && c2 == 'e', c1 == 'v' && c2 == 'e', c1 == 'l' && c2 == 'l':
			return pos + 3
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if isLetter(pos) || !isNewline(pos) && !isNumber(pos) && isLetter(pos+1) {
		i := pos + 1
		for isLetter(i) {
			i++
		}
		return i
	}
	// \p{N}{1,digits}
	if isNumber(pos) {
		i := pos + 1
		for i-pos < digits && isNumber(i) {
			i++
		}
		return i
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
	i := pos
	if at(i) == ' ' {
		i++
	}
	if i < n && !isSpace(i) && !isLetter(i) && !isNumber(i) {
		for i < n && !isSpace(i) && !isLetter(i) && !isNumber(i) {
			i++
		}
		for isNewline(i) {
			i++
		}
		return i
	}
	// What is left starts with whitespace: the run of it decides.
	runEnd := pos
	for isSpace(runEnd) {
		runEnd++
	}
	// \s*[\r\n]+ ends after the run's last newline.
	for j := runEnd - 1; j >= pos; j-- {
		if isNewline(j) {
			return j + 1
		}
	}
	// \s+(?!\S) takes the run, less its last space if a non-space follows.
	if runEnd == n {
		return runEnd
	}
	if runEnd-pos > 1 {
		return runEnd - 1
	}
	// \s+, and a lone character no alternative takes.
	return max(runEnd, pos+1)
}
