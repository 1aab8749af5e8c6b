package codegen

import (
	"go/format"
	"strings"
	"unicode/utf8"
)

// maxLine is the longest line generated code has: longer ones are wrapped
// at the commas of their outermost argument or element list.
const maxLine = 160

// wrapLines wraps src's long lines and formats the result again, which
// indents the continuation lines; a piece still too long is wrapped in
// turn, at its own shallowest commas.
func wrapLines(src []byte) ([]byte, error) {
	for range 4 {
		lines := strings.Split(string(src), "\n")
		changed := false
		for i, l := range lines {
			if utf8.RuneCountInString(l) > maxLine {
				if w := wrap(l); w != l {
					lines[i], changed = w, true
				}
			}
		}
		if !changed {
			return src, nil
		}
		var err error
		if src, err = format.Source([]byte(strings.Join(lines, "\n"))); err != nil {
			return nil, err
		}
	}
	return src, nil
}

// wrap breaks line l after commas at the shallowest bracket depth that has
// any (outside strings and a trailing comment), as few times as keep each
// piece within maxLine; the pieces after the first are indented once more.
func wrap(l string) string {
	type comma struct{ at, depth int }
	var commas []comma
	depth, minDepth := 0, -1
	for i := 0; i < len(l); i++ {
		switch c := l[i]; c {
		case '"', '`':
			j := i + 1
			for j < len(l) && l[j] != c {
				if c == '"' && l[j] == '\\' {
					j++
				}
				j++
			}
			i = j
		case '/':
			if i+1 < len(l) && l[i+1] == '/' {
				i = len(l) // a trailing comment
			}
		case '(', '{', '[':
			depth++
		case ')', '}', ']':
			depth--
		case ',':
			if i+1 < len(l) && l[i+1] == ' ' {
				commas = append(commas, comma{i, depth})
				if minDepth < 0 || depth < minDepth {
					minDepth = depth
				}
			}
		}
	}
	if minDepth <= 0 {
		return l
	}
	indent := l[:len(l)-len(strings.TrimLeft(l, "\t"))] + "\t"
	var at []int // the commas to break at
	for _, c := range commas {
		if c.depth == minDepth {
			at = append(at, c.at)
		}
	}
	var b strings.Builder
	start, budget, last := 0, maxLine, -1
	for k := 0; k <= len(at); k++ {
		next := len(l) // the end of the piece if it is not broken before
		if k < len(at) {
			next = at[k] + 1
		}
		if next-start > budget && last > start {
			b.WriteString(l[start : last+1])
			b.WriteString("\n" + indent)
			start, budget = last+2, maxLine-len(indent)
		}
		if k < len(at) {
			last = at[k]
		}
	}
	b.WriteString(l[start:])
	return b.String()
}
