package dsl

import (
	"slices"

	"github.com/alecthomas/participle/v2/lexer"
)

// Lexer is the graph DSL's token table. Rules are tried in order and the
// first that matches wins, so longer forms come before their prefixes
// (Float before Int, Compound before Ident, ".." before ".").
//
// Whitespace and Comment tokens are elided by the parser. Parse lexes the
// source a second time to recover the comments and attach them to
// statements (see Trivia).
//
// Names are single tokens, so they are whitespace sensitive: "blk.{l}.x" is
// one Compound token while "blk . {l}" is not a name at all. An Ident is a
// plain identifier; a Compound is a name that has at least one "." segment
// or "{var}" interpolation. Segments after a dot may start with a digit
// ("blk.0.attn_q.weight"). Keywords are lexed as Idents and matched by value,
// so a keyword is only special as a whole token: "output.weight" is an
// ordinary name.
var Lexer = lexer.MustSimple([]lexer.SimpleRule{
	{Name: "Comment", Pattern: `(?:#|//)[^\n]*`},
	{Name: "String", Pattern: `"(?:\\[\\"nrt]|[^"\\\n])*"`},
	{Name: "Float", Pattern: `[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+`},
	{Name: "Int", Pattern: `[0-9]+`},
	{Name: "Compound", Pattern: `[A-Za-z_][A-Za-z0-9_]*(?:\{[A-Za-z_][A-Za-z0-9_]*\}[A-Za-z0-9_]*)+(?:\.(?:[A-Za-z0-9_]|\{[A-Za-z_][A-Za-z0-9_]*\})+)*` +
		`|[A-Za-z_][A-Za-z0-9_]*(?:\.(?:[A-Za-z0-9_]|\{[A-Za-z_][A-Za-z0-9_]*\})+)+`},
	{Name: "Ident", Pattern: `[A-Za-z_][A-Za-z0-9_]*`},
	{Name: "Punct", Pattern: `\.\.|<=|>=|==|!=|[-+*/%(){}\[\],:;=<>]`},
	{Name: "Whitespace", Pattern: `[ \t\r\n\f\v]+`},
})

// Keywords are the reserved words of the DSL. They are lexed as identifiers
// and cannot be used as a whole name (Check reports it), but may appear as
// part of a longer name such as "output.weight".
var Keywords = []string{
	"backends", "dim", "fill", "for", "if", "in", "inf", "input", "none", "on", "or", "output", "param", "place", "set", "state", "weight",
}

// isKeyword reports whether s is one of Keywords.
func isKeyword(s string) bool { return slices.Contains(Keywords, s) }
