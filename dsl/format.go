package dsl

import (
	"strings"
)

// Format returns the canonical form of f:
//
//   - one statement per line, loop bodies indented by two spaces;
//   - single spaces around binary operators, "=" and "<=" of assignments
//     and dims, and after commas and colons; none around "..", or around
//     "=" in key=value arguments;
//   - only the parentheses that precedence needs;
//   - literals and names exactly as written ("1e-5" stays "1e-5");
//   - comments and blank lines as described at Trivia, with two spaces
//     before an end-of-line comment;
//   - a final newline (unless the file is empty).
//
// Parsing the output gives an equivalent file whose Format is identical.
func Format(f *File) []byte {
	p := &printer{comments: true}
	p.block(f.Stmts, f.Comments)
	return []byte(p.b.String())
}

// String returns Format(f) as a string.
func (f *File) String() string { return string(Format(f)) }

// printer writes statements; comments says whether to include Trivia.
type printer struct {
	b        strings.Builder
	indent   int
	comments bool
}

// block writes stmts, then the comments at the end of the block.
func (p *printer) block(stmts []Stmt, end []*Comment) {
	first := true
	comment := func(c *Comment) {
		if c.Blank && !first {
			p.b.WriteByte('\n')
		}
		p.line(c.Text)
		first = false
	}
	for _, s := range stmts {
		t := s.trivia()
		if p.comments {
			for _, c := range t.Doc {
				comment(c)
			}
			if t.Blank && !first {
				p.b.WriteByte('\n')
			}
		}
		p.stmt(s)
		first = false
	}
	if p.comments {
		for _, c := range end {
			comment(c)
		}
	}
}

// line writes an indented line.
func (p *printer) line(s string) {
	p.b.WriteString(strings.Repeat("  ", p.indent))
	p.b.WriteString(s)
	p.b.WriteByte('\n')
}

// trailing returns c as an end-of-line comment, or "".
func (p *printer) trailing(c *Comment) string {
	if c == nil || !p.comments {
		return ""
	}
	return "  " + c.Text
}

func (p *printer) stmt(s Stmt) {
	b, ok := s.(block)
	if !ok {
		p.line(stmtString(s) + p.trailing(s.trivia().Comment))
		return
	}
	var header string
	switch s := s.(type) {
	case *For:
		header = s.header()
	case *If:
		header = "if " + exprString(s.Cond)
	}
	open, end := b.blockComments()
	p.line(header + " {" + p.trailing(*open))
	p.indent++
	p.block(b.body(), *end)
	p.indent--
	p.line("}" + p.trailing(s.trivia().Comment))
}

// stmtString returns a statement other than a loop on one line.
func stmtString(s Stmt) string {
	var b strings.Builder
	on := func(id *Ident) {
		if id != nil {
			b.WriteString(" on " + id.Name)
		}
	}
	switch s := s.(type) {
	case *Backends:
		b.WriteString("backends ")
		for i, n := range s.Names {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(n.Name)
		}
	case *Place:
		b.WriteString("place " + exprString(s.Pattern))
		on(s.On)
	case *Set:
		b.WriteString("set " + s.Name.Name + " = " + exprString(s.Value))
	case *Dim:
		op := " = "
		if s.Bounded {
			op = " <= "
		}
		b.WriteString("dim " + s.Name.String() + op + exprString(s.Value))
	case *Param:
		b.WriteString("param " + s.Name.String() + " = " + exprString(s.Value))
	case *Decl:
		b.WriteString(string(s.Kind) + " " + s.Name.String() + ": " + s.Type.String())
		if s.Fill != nil {
			b.WriteString(" fill " + exprString(s.Fill))
		}
		on(s.On)
		if s.Or != nil {
			b.WriteString(" or " + s.Or.String())
		}
	case *Output:
		b.WriteString("output " + s.Name.String())
		if s.Value != nil {
			b.WriteString(" = " + exprString(s.Value))
		}
		on(s.On)
	case *Assign:
		b.WriteString(s.Name.String() + " = " + exprString(s.Value))
		on(s.On)
	case *CallStmt:
		b.WriteString(exprString(s.Call))
		on(s.On)
	}
	return b.String()
}

func (s *Backends) String() string { return stmtString(s) }
func (s *Dim) String() string      { return stmtString(s) }
func (s *Param) String() string    { return stmtString(s) }
func (s *Place) String() string    { return stmtString(s) }
func (s *Set) String() string      { return stmtString(s) }
func (s *Decl) String() string     { return stmtString(s) }
func (s *Output) String() string   { return stmtString(s) }
func (s *Assign) String() string   { return stmtString(s) }
func (s *CallStmt) String() string { return stmtString(s) }

// String returns the loop and its body, without comments.
func (s *For) String() string {
	p := &printer{}
	p.stmt(s)
	return strings.TrimSuffix(p.b.String(), "\n")
}

// String returns the if statement and its body, without comments.
func (s *If) String() string {
	p := &printer{}
	p.stmt(s)
	return strings.TrimSuffix(p.b.String(), "\n")
}

// header returns "for v in a..b".
func (s *For) header() string {
	return "for " + s.Var.Name + " in " + exprString(s.From) + ".." + exprString(s.To)
}

func (t *TensorType) String() string {
	var b strings.Builder
	b.WriteString(t.DType.Name)
	if t.FlagArgs != nil {
		b.WriteString("(")
		for i, a := range t.FlagArgs {
			if i > 0 {
				b.WriteString(", ")
			}
			writeExpr(&b, a.Value)
		}
		b.WriteString(")")
	}
	b.WriteString("[")
	for i, d := range t.Shape {
		if i > 0 {
			b.WriteString(", ")
		}
		writeExpr(&b, d)
	}
	b.WriteString("]")
	return b.String()
}

func (n *Ident) String() string { return n.Name }

func (a *Arg) String() string {
	if a.Key == nil {
		return exprString(a.Value)
	}
	return a.Key.Name + "=" + exprString(a.Value)
}

func (e *Binary) String() string { return exprString(e) }
func (e *Unary) String() string  { return exprString(e) }
func (e *Call) String() string   { return exprString(e) }
func (e *Number) String() string { return e.Text }
func (e *String) String() string { return e.Text }

// Precedence returns the binding strength of op: 1 for comparisons, 2 for
// "+" and "-", 3 for "*", "/" and "%". Unary "-" binds tighter (4).
func (op BinaryOp) Precedence() int {
	switch op {
	case OpAdd, OpSub:
		return 2
	case OpMul, OpDiv, OpRem:
		return 3
	}
	return 1
}

const (
	precCompare = 1
	precUnary   = 4
	precOperand = 5
)

// precedence returns how tightly e binds.
func precedence(e Expr) int {
	switch e := e.(type) {
	case *Binary:
		return e.Op.Precedence()
	case *Unary:
		return precUnary
	}
	return precOperand
}

func exprString(e Expr) string {
	var b strings.Builder
	writeExpr(&b, e)
	return b.String()
}

// writeExpr writes e with the parentheses that precedence needs.
func writeExpr(b *strings.Builder, e Expr) {
	operand := func(x Expr, paren bool) {
		if paren {
			b.WriteByte('(')
		}
		writeExpr(b, x)
		if paren {
			b.WriteByte(')')
		}
	}
	switch e := e.(type) {
	case nil:
		b.WriteString("<nil>")
	case *Binary:
		p := e.Op.Precedence()
		// Comparisons do not chain, so a comparison operand of a
		// comparison needs parentheses on either side.
		operand(e.X, precedence(e.X) < p || p == precCompare && precedence(e.X) == p)
		b.WriteString(" " + string(e.Op) + " ")
		operand(e.Y, precedence(e.Y) <= p)
	case *Unary:
		b.WriteString(e.Op)
		operand(e.X, precedence(e.X) < precUnary)
	case *Call:
		b.WriteString(e.Func.Name + "(")
		for i, a := range e.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(a.String())
		}
		b.WriteByte(')')
	default:
		b.WriteString(e.String())
	}
}
