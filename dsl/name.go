package dsl

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// splitName splits s into literal and "{var}" parts.
func splitName(s string) ([]NamePart, error) {
	var parts []NamePart
	lit := -1 // start of the pending literal part, or -1
	flush := func(end int) {
		if lit >= 0 {
			parts = append(parts, NamePart{Lit: s[lit:end], Offset: lit})
			lit = -1
		}
	}
	for i := 0; i < len(s); {
		if s[i] != '{' {
			if lit < 0 {
				lit = i
			}
			i++
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return nil, fmt.Errorf("unterminated interpolation in name %q", s)
		}
		flush(i)
		parts = append(parts, NamePart{Var: s[i+1 : i+end], Offset: i})
		i += end + 1
	}
	flush(len(s))
	return parts, nil
}

// NewName returns a Name parsed from its source form, such as
// "blk.{l}.attn_q.weight", with zero positions. It is meant for tests and
// for building ASTs by hand.
func NewName(s string) (*Name, error) {
	parts, err := splitName(s)
	if err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("empty name")
	}
	return &Name{Text: s, Parts: parts}, nil
}

// String returns the source form of the name.
func (n *Name) String() string { return n.Text }

// Literal returns the name and true if it has no interpolations.
func (n *Name) Literal() (string, bool) {
	for _, p := range n.Parts {
		if p.Var != "" {
			return n.Text, false
		}
	}
	return n.Text, true
}

// IsIdent reports whether the name is a plain identifier: no dots and no
// interpolations.
func (n *Name) IsIdent() bool {
	s, ok := n.Literal()
	return ok && !strings.Contains(s, ".")
}

// Vars returns the loop variables the name interpolates, in order of first
// use.
func (n *Name) Vars() []string {
	var vars []string
	for _, p := range n.Parts {
		if p.Var != "" && !slices.Contains(vars, p.Var) {
			vars = append(vars, p.Var)
		}
	}
	return vars
}

// Resolve substitutes loop variable values for the interpolations:
// blk.{l}.attn_q.weight with l=3 is blk.3.attn_q.weight. Interpolations of
// variables missing from env are left in their "{var}" form.
func (n *Name) Resolve(env map[string]int64) string {
	s, _ := n.resolve(func(v string) (int64, bool) {
		x, ok := env[v]
		return x, ok
	})
	return s
}

// resolve is Resolve with a lookup function. It reports whether every
// interpolation was resolved.
func (n *Name) resolve(lookup func(string) (int64, bool)) (string, bool) {
	var b strings.Builder
	all := true
	for _, p := range n.Parts {
		if p.Var == "" {
			b.WriteString(p.Lit)
			continue
		}
		if v, ok := lookup(p.Var); ok {
			b.WriteString(strconv.FormatInt(v, 10))
		} else {
			b.WriteString("{" + p.Var + "}")
			all = false
		}
	}
	return b.String(), all
}

// PartSpan returns the source span of Parts[i]. Names never span lines.
func (n *Name) PartSpan(i int) (pos, end lexer.Position) {
	p := n.Parts[i]
	length := len(p.Lit)
	if p.Var != "" {
		length = len(p.Var) + 2
	}
	pos = n.Pos
	pos.Offset += p.Offset
	pos.Column += p.Offset // names are ASCII: bytes are columns
	end = pos
	end.Offset += length
	end.Column += length
	return pos, end
}
