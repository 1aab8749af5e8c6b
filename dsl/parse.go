package dsl

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// Parse parses a DSL source file. filename is used in positions and error
// messages.
//
// Syntax errors are returned as an ErrorList of *Error, each rendering as
// "file:line:col: message"; participle's errors are converted so that they
// look like every other error (see Render). Parse does not check meaning:
// call Check on the result.
func Parse(filename string, src []byte) (f *File, err error) {
	defer func() {
		// participle panics on some grammar bugs; report them as errors
		// rather than crash the caller. The fuzzer has not found one.
		if r := recover(); r != nil {
			f = nil
			err = ErrorList{{Pos: lexer.Position{Filename: filename, Line: 1, Column: 1}, Msg: fmt.Sprintf("internal error: parser panic: %v", r)}}
		}
	}()

	toks, err := lexAll(filename, src)
	if err != nil {
		return nil, err
	}
	if errs := checkTokens(toks[:len(toks)-1]); len(errs) > 0 {
		return nil, errs
	}
	// Parse the tokens already lexed rather than lex again.
	peek, err := lexer.Upgrade(&tokenList{toks: toks}, tokWhitespace, tokComment)
	if err != nil {
		return nil, convertError(err, src)
	}
	f, err = parser.ParseFromLexer(peek)
	if err != nil {
		return nil, convertError(err, src)
	}
	if errs := checkSyntax(f); len(errs) > 0 {
		errs.Sort()
		return nil, errs
	}
	attachComments(f, toks[:len(toks)-1])
	return f, nil
}

// tokenList is a lexer.Lexer that replays tokens ending with EOF.
type tokenList struct{ toks []lexer.Token }

func (l *tokenList) Next() (lexer.Token, error) {
	t := l.toks[0]
	if len(l.toks) > 1 {
		l.toks = l.toks[1:]
	}
	return t, nil
}

// lexAll returns every token of src, whitespace and comments included,
// ending with EOF.
func lexAll(filename string, src []byte) ([]lexer.Token, error) {
	lex, err := Lexer.LexString(filename, string(src))
	if err != nil {
		return nil, convertError(err, src)
	}
	toks, err := lexer.ConsumeAll(lex)
	if err != nil {
		return nil, convertError(err, src)
	}
	return toks, nil
}

// maxNesting bounds the nesting of brackets and of unary minus signs, so
// that the recursive parser cannot exhaust the stack.
const maxNesting = 500

// checkTokens reports words that touch without a space, such as "3x" or
// "2\"s\"". The grammar needs no separators between statements, so
// "dim a = 3x = 4" would otherwise quietly parse as two statements. It also
// reports nesting deeper than maxNesting.
func checkTokens(toks []lexer.Token) ErrorList {
	var errs ErrorList
	depth, minus := 0, 0
	for _, t := range toks {
		switch t.Value {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		}
		switch {
		case t.Value == "-":
			minus++
		case t.Type != tokWhitespace && t.Type != tokComment:
			minus = 0
		}
		if depth > maxNesting || minus > maxNesting {
			return ErrorList{{Pos: t.Pos, EndPos: tokenEnd(t), Msg: fmt.Sprintf("nested more than %d levels deep", maxNesting)}}
		}
	}
	word := func(t lexer.Token) bool {
		switch t.Type {
		case tokInt, tokFloat, tokIdent, tokCompound, tokString:
			return true
		}
		return false
	}
	for i := 1; i < len(toks); i++ {
		a, b := toks[i-1], toks[i]
		if word(a) && word(b) {
			errs = append(errs, &Error{Pos: b.Pos, EndPos: tokenEnd(b), Msg: fmt.Sprintf("missing space between %q and %q", a.Value, b.Value)})
		}
	}
	return errs
}

// checkSyntax reports syntax rules that the grammar does not express.
func checkSyntax(f *File) ErrorList {
	var errs ErrorList
	Inspect(f, func(n Node) bool {
		if n, ok := n.(*Name); ok {
			parts, err := splitName(n.Text)
			if err != nil {
				errs = append(errs, errorf(n, "%v", err))
			}
			n.Parts = parts
		}
		if c, ok := n.(*Call); ok {
			keyword := false
			for _, a := range c.Args {
				if a.Key != nil {
					keyword = true
				} else if keyword {
					errs = append(errs, &Error{Pos: a.Pos, EndPos: a.EndPos, Msg: "positional argument after keyword argument"})
				}
			}
		}
		return true
	})
	return errs
}

// convertError turns a participle or lexer error into an ErrorList.
func convertError(err error, src []byte) error {
	var perr participle.Error
	if !errors.As(err, &perr) {
		return err
	}
	e := &Error{Pos: perr.Position(), Msg: perr.Message()}
	var lerr *lexer.Error
	if errors.As(err, &lerr) {
		e.Msg = lexerMessage(e.Pos, src)
	}
	if ut, ok := err.(*participle.UnexpectedTokenError); ok && !ut.Unexpected.EOF() {
		e.EndPos = tokenEnd(ut.Unexpected)
	}
	return ErrorList{e}
}

// lexerMessage describes the text the lexer could not read at pos.
func lexerMessage(pos lexer.Position, src []byte) string {
	if pos.Offset < 0 || pos.Offset >= len(src) {
		return "invalid input"
	}
	switch rest := src[pos.Offset:]; {
	case rest[0] == '"':
		return "unterminated or invalid string literal (escapes are \\\\ \\\" \\n \\r \\t)"
	case rest[0] == '.':
		return "invalid '.': a name is letters, digits, _ and {var} interpolations joined by dots, without spaces, as in blk.{l}.weight"
	default:
		r, _ := utf8.DecodeRune(rest)
		if r == utf8.RuneError {
			return fmt.Sprintf("invalid UTF-8 byte %#02x", rest[0])
		}
		return fmt.Sprintf("invalid character %q", r)
	}
}

// tokenEnd returns the position just past t.
func tokenEnd(t lexer.Token) lexer.Position {
	p := t.Pos
	p.Advance(t.Value)
	return p
}

// attachComments fills in the Trivia of f's statements from the comment and
// blank line layout of the token stream (see Trivia for what is kept).
func attachComments(f *File, toks []lexer.Token) {
	// Significant tokens (not whitespace, comments or ";") by offset.
	var sig []lexer.Token
	// lastLine[i] is the line of the last non-whitespace token before
	// toks[i], or 0.
	lastLine := make([]int, len(toks))
	line := 0
	for i, t := range toks {
		lastLine[i] = line
		switch {
		case t.Type == tokWhitespace:
			continue
		case t.Type != tokComment && t.Value != ";":
			sig = append(sig, t)
		}
		line = t.Pos.Line
	}
	prevLine := func(offset int) int {
		i := sort.Search(len(toks), func(i int) bool { return toks[i].Pos.Offset >= offset })
		if i == len(toks) {
			return line
		}
		return lastLine[i]
	}

	walkStmts(f.Stmts, func(s Stmt) {
		t := s.trivia()
		t.Blank = s.Position().Line > prevLine(s.Position().Offset)+1
	})

	for i, t := range toks {
		if t.Type != tokComment {
			continue
		}
		c := &Comment{Pos: t.Pos, Text: strings.TrimRight(t.Value, " \t\r\f\v"), Blank: t.Pos.Line > lastLine[i]+1}
		// The significant token before the comment, if on the same line.
		j := sort.Search(len(sig), func(j int) bool { return sig[j].Pos.Offset > t.Pos.Offset }) - 1
		if j >= 0 && sig[j].Pos.Line == t.Pos.Line {
			c.Blank = false
			attachTrailing(f, c, sig[j])
		} else {
			attachFullLine(f.Stmts, &f.Comments, c, sig)
		}
	}
}

// attachTrailing attaches c, a comment that follows token prev on prev's
// line, to the innermost statement holding prev.
func attachTrailing(f *File, c *Comment, prev lexer.Token) {
	stmts := f.Stmts
	var s Stmt
	for {
		inner := stmtAt(stmts, prev.Pos.Offset, true)
		if inner == nil {
			break
		}
		s = inner
		b, ok := s.(block)
		if !ok {
			break
		}
		stmts = b.body()
	}
	switch {
	case s == nil:
		// Unreachable: every significant token is part of a statement.
		f.Comments = append(f.Comments, c)
	case tokenEnd(prev).Offset == s.End().Offset:
		s.trivia().Comment = c
	default:
		if b, ok := s.(block); ok && prev.Value == "{" && prev.Pos.Offset > b.head().Offset {
			if open, _ := b.blockComments(); *open == nil {
				*open = c
				return
			}
		}
		moveToDoc(s, c)
	}
}

// attachFullLine attaches c, a comment on a line of its own, to the next
// statement of the innermost block holding it, or to the end of that block.
func attachFullLine(stmts []Stmt, end *[]*Comment, c *Comment, sig []lexer.Token) {
	off := c.Pos.Offset
	for {
		s := stmtAt(stmts, off, false)
		if s == nil {
			break
		}
		b, ok := s.(block)
		if !ok || !inBody(b, off, sig) {
			moveToDoc(s, c)
			return
		}
		_, blockEnd := b.blockComments()
		stmts, end = b.body(), blockEnd
	}
	for _, s := range stmts {
		if s.Position().Offset > off {
			d := s.trivia()
			d.Doc = append(d.Doc, c)
			return
		}
	}
	*end = append(*end, c)
}

// inBody reports whether offset off lies between the braces of b.
func inBody(b block, off int, sig []lexer.Token) bool {
	// The "{" is the first significant token after the header.
	j := sort.Search(len(sig), func(j int) bool { return sig[j].Pos.Offset >= b.head().Offset })
	return j < len(sig) && sig[j].Value == "{" && off > sig[j].Pos.Offset
}

// moveToDoc appends c, a comment from inside s, to s's Doc. If a blank line
// precedes s, it now precedes c so that the output is stable.
func moveToDoc(s Stmt, c *Comment) {
	t := s.trivia()
	c.Blank = false
	if t.Blank {
		c.Blank, t.Blank = true, false
	}
	t.Doc = append(t.Doc, c)
}

// stmtAt returns the statement of stmts whose span holds offset off:
// Pos <= off < EndPos when inclusive, Pos < off < EndPos otherwise.
func stmtAt(stmts []Stmt, off int, inclusive bool) Stmt {
	i := sort.Search(len(stmts), func(i int) bool { return stmts[i].End().Offset > off })
	if i == len(stmts) {
		return nil
	}
	s := stmts[i]
	start := s.Position().Offset
	if start < off || inclusive && start == off {
		return s
	}
	return nil
}

// walkStmts calls fn for every statement, loop bodies included, in source
// order.
func walkStmts(stmts []Stmt, fn func(Stmt)) {
	for _, s := range stmts {
		fn(s)
		if b, ok := s.(block); ok {
			walkStmts(b.body(), fn)
		}
	}
}
