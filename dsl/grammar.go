package dsl

import (
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// The DSL is parsed by two participle parsers. parser reads statements (the
// structs in ast.go). Wherever a statement holds an Expr it calls parseExpr,
// which runs exprParser, a separate parser whose grammar has one struct per
// precedence level (participle cannot parse left-recursive rules such as
// "Expr = Expr '+' Expr"), and folds the result into a Binary/Unary tree.
// exprParser is built in init because it refers to itself through
// parseExpr (call arguments are expressions).
var (
	parser     = participle.MustBuild[File](options(participle.Union[Stmt](&Backends{}, &Place{}, &Set{}, &Dim{}, &Param{}, &Decl{}, &Output{}, &For{}, &If{}, &Assign{}, &CallStmt{}))...)
	exprParser *participle.Parser[expr]
)

func init() {
	exprParser = participle.MustBuild[expr](options()...)
}

// options returns the parser options shared by both parsers.
func options(extra ...participle.Option) []participle.Option {
	return append([]participle.Option{
		participle.Lexer(Lexer),
		participle.Elide("Whitespace", "Comment"),
		participle.ParseTypeWith(parseExpr),
	}, extra...)
}

// Grammar returns the grammar in EBNF: the statement grammar, then the
// expression grammar (without the productions the two share).
// testdata/grammar.ebnf holds a copy.
func Grammar() string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, g := range []string{parser.String(), exprParser.String()} {
		for _, line := range strings.Split(g, "\n") {
			if !seen[line] {
				seen[line] = true
				b.WriteString(line + "\n")
			}
		}
	}
	return b.String()
}

// parseExpr parses an Expr for the statement parser. It returns
// participle.NextMatch when the next token cannot start an expression, so
// that the caller reports what it expected.
//
// After a comma an expression is required. There, parseExpr consumes the
// bad token and fails: participle would otherwise back out of the
// "( ',' Arg )*" repetition (it looks one token ahead) and blame the comma,
// reporting `f(a,, b)` as `unexpected ","`, expected ")"` at the first
// comma.
func parseExpr(lex *lexer.PeekingLexer) (Expr, error) {
	if t := lex.Peek(); !startsExpr(t) {
		if prev := prevToken(lex); prev != nil && prev.Value == "," && !t.EOF() {
			bad := *lex.Next()
			return nil, &participle.UnexpectedTokenError{Unexpected: bad, Expect: "expression"}
		}
		return nil, participle.NextMatch
	}
	g, err := exprParser.ParseFromLexer(lex, participle.AllowTrailing(true))
	if err != nil {
		return nil, err
	}
	return g.fold(), nil
}

// prevToken returns the last token before the cursor that is not
// whitespace or a comment, or nil.
func prevToken(lex *lexer.PeekingLexer) *lexer.Token {
	toks := lex.Range(0, lex.RawCursor())
	for i := len(toks) - 1; i >= 0; i-- {
		if t := toks[i].Type; t != tokWhitespace && t != tokComment {
			return &toks[i]
		}
	}
	return nil
}

// startsExpr reports whether t can be the first token of an expression.
func startsExpr(t *lexer.Token) bool {
	switch t.Type {
	case tokInt, tokFloat, tokString, tokIdent, tokCompound:
		return true
	case tokPunct:
		return t.Value == "-" || t.Value == "("
	}
	return false
}

// Token types of Lexer.
var (
	tokComment    = Lexer.Symbols()["Comment"]
	tokString     = Lexer.Symbols()["String"]
	tokFloat      = Lexer.Symbols()["Float"]
	tokInt        = Lexer.Symbols()["Int"]
	tokCompound   = Lexer.Symbols()["Compound"]
	tokIdent      = Lexer.Symbols()["Ident"]
	tokPunct      = Lexer.Symbols()["Punct"]
	tokWhitespace = Lexer.Symbols()["Whitespace"]
)

// The expression grammar, lowest precedence first. Each level is a struct
// holding the next level; fold turns them into Expr nodes. The type names
// become the EBNF production names (with an upper-case first letter).

// expr is a comparison: at most one comparison operator.
type expr struct {
	Pos    lexer.Position
	EndPos lexer.Position

	X    *sum       `parser:"@@"`
	Rest *compareOp `parser:"@@?"`
}

type compareOp struct {
	Pos lexer.Position

	Op string `parser:"@( '<=' | '>=' | '==' | '!=' | '<' | '>' )"`
	Y  *sum   `parser:"@@"`
}

// sum is a left-associative chain of "+" and "-".
type sum struct {
	Pos    lexer.Position
	EndPos lexer.Position

	X    *product `parser:"@@"`
	Rest []*addOp `parser:"@@*"`
}

type addOp struct {
	Pos    lexer.Position
	EndPos lexer.Position

	Op string   `parser:"@( '+' | '-' )"`
	Y  *product `parser:"@@"`
}

// product is a left-associative chain of "*", "/" and "%".
type product struct {
	Pos    lexer.Position
	EndPos lexer.Position

	X    *unary   `parser:"@@"`
	Rest []*mulOp `parser:"@@*"`
}

type mulOp struct {
	Pos    lexer.Position
	EndPos lexer.Position

	Op string `parser:"@( '*' | '/' | '%' )"`
	Y  *unary `parser:"@@"`
}

// unary is a prefix "-" or a primary expression.
type unary struct {
	Pos    lexer.Position
	EndPos lexer.Position

	Op      string   `parser:"  @'-'"`
	X       *unary   `parser:"  @@"`
	Primary *primary `parser:"| @@"`
}

// primary is an operand: a literal, a call, a name or a parenthesised
// expression.
type primary struct {
	Pos    lexer.Position
	EndPos lexer.Position

	Number string `parser:"  @( Float | Int | 'inf' )"`
	String string `parser:"| @String"`
	Call   *Call  `parser:"| @@"`
	Name   *Name  `parser:"| @@"`
	Paren  *expr  `parser:"| '(' @@ ')'"`
}

// fold returns the Expr for a comparison level.
func (g *expr) fold() Expr {
	x := g.X.fold()
	if g.Rest == nil {
		return x
	}
	return &Binary{Pos: g.Pos, EndPos: g.EndPos, Op: BinaryOp(g.Rest.Op), OpPos: g.Rest.Pos, X: x, Y: g.Rest.Y.fold()}
}

func (g *sum) fold() Expr {
	x := g.X.fold()
	for _, r := range g.Rest {
		x = &Binary{Pos: g.Pos, EndPos: r.EndPos, Op: BinaryOp(r.Op), OpPos: r.Pos, X: x, Y: r.Y.fold()}
	}
	return x
}

func (g *product) fold() Expr {
	x := g.X.fold()
	for _, r := range g.Rest {
		x = &Binary{Pos: g.Pos, EndPos: r.EndPos, Op: BinaryOp(r.Op), OpPos: r.Pos, X: x, Y: r.Y.fold()}
	}
	return x
}

func (g *unary) fold() Expr {
	if g.Primary != nil {
		return g.Primary.fold()
	}
	return &Unary{Pos: g.Pos, EndPos: g.EndPos, Op: g.Op, X: g.X.fold()}
}

func (g *primary) fold() Expr {
	switch {
	case g.Number != "":
		return &Number{Pos: g.Pos, EndPos: g.EndPos, Text: g.Number}
	case g.String != "":
		// The lexer only accepts escapes that strconv.Unquote knows.
		v, err := strconv.Unquote(g.String)
		if err != nil {
			v = g.String
		}
		return &String{Pos: g.Pos, EndPos: g.EndPos, Text: g.String, Value: v}
	case g.Call != nil:
		return g.Call
	case g.Name != nil:
		return g.Name
	default:
		return g.Paren.fold()
	}
}
