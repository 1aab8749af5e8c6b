package dsl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2/lexer"
	"github.com/google/go-cmp/cmp"
)

// testdataFiles returns the sample programs testdata/*.g.
func testdataFiles(t testing.TB) []string {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.g"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no testdata/*.g files: %v", err)
	}
	return paths
}

// TestTestdata parses and checks every sample program, and requires it to
// be in canonical form, so the samples double as printer goldens.
func TestTestdata(t *testing.T) {
	for _, path := range testdataFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := Parse(path, src)
			if err != nil {
				t.Fatalf("Parse:\n%s", Render(err, src))
			}
			if err := Check(f); err != nil {
				t.Fatalf("Check:\n%s", Render(err, src))
			}
			if got := string(Format(f)); got != string(src) {
				t.Errorf("%s is not in canonical form (-file +Format):\n%s", path, cmp.Diff(string(src), got))
			}
			roundTrip(t, path, src)
		})
	}
}

// roundTrip checks that Format is stable: parse, print, parse, print gives
// the first print again.
func roundTrip(t testing.TB, name string, src []byte) {
	t.Helper()
	f, err := Parse(name, src)
	if err != nil {
		return
	}
	out1 := Format(f)
	f2, err := Parse(name, out1)
	if err != nil {
		t.Fatalf("Format output does not parse: %v\ninput:\n%s\noutput:\n%s", err, src, out1)
	}
	if out2 := Format(f2); string(out1) != string(out2) {
		t.Fatalf("Format is not stable (-first +second):\n%s\ninput:\n%q", cmp.Diff(string(out1), string(out2)), src)
	}
}

// TestFormat formats the input.g section of each testdata/format archive
// and compares it with want.g.
func TestFormat(t *testing.T) {
	runArchives(t, "format", func(t *testing.T, a *archive) map[string]string {
		in := a.file("input.g")
		if in == nil {
			t.Fatal("no input.g section")
		}
		f, err := Parse("input.g", in.data)
		if err != nil {
			t.Fatalf("Parse:\n%s", Render(err, in.data))
		}
		roundTrip(t, "input.g", in.data)
		return map[string]string{"want.g": string(Format(f))}
	})
}

// TestErrors parses and checks the input.g section of each
// testdata/errors archive and compares the rendered errors with want.err.
func TestErrors(t *testing.T) {
	runArchives(t, "errors", func(t *testing.T, a *archive) map[string]string {
		in := a.file("input.g")
		if in == nil {
			t.Fatal("no input.g section")
		}
		f, err := Parse("input.g", in.data)
		if err == nil {
			err = Check(f)
		}
		if err == nil {
			t.Error("no errors")
			return map[string]string{"want.err": ""}
		}
		var list ErrorList
		if !errors.As(err, &list) {
			t.Errorf("error is %T, want ErrorList", err)
		}
		return map[string]string{"want.err": Render(err, in.data)}
	})
}

// TestGrammar compares the grammar with testdata/grammar.ebnf.
func TestGrammar(t *testing.T) {
	checkGolden(t, filepath.Join("testdata", "grammar.ebnf"), Grammar())
}

func mustParse(t *testing.T, src string) *File {
	t.Helper()
	f, err := Parse("test.g", []byte(src))
	if err != nil {
		t.Fatalf("Parse(%q):\n%s", src, Render(err, []byte(src)))
	}
	return f
}

// TestExprTree checks precedence, associativity and spans of expressions.
func TestExprTree(t *testing.T) {
	tests := []struct {
		src  string
		want string // fully parenthesised
	}{
		{"a + b * c", "(a + (b * c))"},
		{"a - b - c", "((a - b) - c)"},
		{"a / b * c % d", "(((a / b) * c) % d)"},
		{"-a * b", "((-a) * b)"},
		{"-(a * b)", "(-(a * b))"},
		{"a + b <= c * d", "((a + b) <= (c * d))"},
		{"(a <= b) == (c > d)", "((a <= b) == (c > d))"},
		{"--1e-5", "(-(-1e-5))"},
		{"f(a + b, k=-inf)", "f((a + b), k=(-inf))"},
		{`g("s\"x", blk.{l}.w)`, `g("s\"x", blk.{l}.w)`},
	}
	for _, tt := range tests {
		f := mustParse(t, "x = "+tt.src)
		e := f.Stmts[0].(*Assign).Value
		if got := parenthesise(e); got != tt.want {
			t.Errorf("%s: tree %s, want %s", tt.src, got, tt.want)
		}
		// Every node's span is its source text.
		src := "x = " + tt.src
		Inspect(e, func(n Node) bool {
			text := src[n.Position().Offset:n.End().Offset]
			if _, isName := n.(*Name); isName && text != n.String() {
				t.Errorf("%s: span of name %s is %q", tt.src, n, text)
			}
			return true
		})
		if got := src[e.Position().Offset:e.End().Offset]; got != tt.src {
			t.Errorf("%s: span is %q", tt.src, got)
		}
	}
}

// parenthesise prints e with every operation in parentheses.
func parenthesise(e Expr) string {
	switch e := e.(type) {
	case *Binary:
		return "(" + parenthesise(e.X) + " " + string(e.Op) + " " + parenthesise(e.Y) + ")"
	case *Unary:
		return "(" + e.Op + parenthesise(e.X) + ")"
	case *Call:
		var args []string
		for _, a := range e.Args {
			s := parenthesise(a.Value)
			if a.Key != nil {
				s = a.Key.Name + "=" + s
			}
			args = append(args, s)
		}
		return e.Func.Name + "(" + strings.Join(args, ", ") + ")"
	}
	return e.String()
}

// TestMinimalParens checks that the printer drops needless parentheses and
// keeps the needed ones.
func TestMinimalParens(t *testing.T) {
	tests := []struct{ src, want string }{
		{"((a))", "a"},
		{"(a + b) + c", "a + b + c"},
		{"a + (b + c)", "a + (b + c)"},
		{"a - (b - c)", "a - (b - c)"},
		{"(a * b) + (c * d)", "a * b + c * d"},
		{"(a + b) * c", "(a + b) * c"},
		{"-(a)", "-a"},
		{"-(-a)", "--a"},
		{"-(a + b)", "-(a + b)"},
		{"(a < b) < c", "(a < b) < c"},
		{"a < (b < c)", "a < (b < c)"},
		{"(a < b)", "a < b"},
		{"f((a), k=(b + c))", "f(a, k=b + c)"},
	}
	for _, tt := range tests {
		f := mustParse(t, "x = "+tt.src)
		if got := f.Stmts[0].(*Assign).Value.String(); got != tt.want {
			t.Errorf("%s prints as %s, want %s", tt.src, got, tt.want)
		}
	}
}

// TestPositions checks the spans recorded for statements.
func TestPositions(t *testing.T) {
	src := "dim n = 4\nfor l in 0..n {\n  weight blk.{l}.w: f32[n] on cpu\n}\n"
	f := mustParse(t, src)
	var spans []string
	Inspect(f, func(n Node) bool {
		if _, ok := n.(*File); !ok {
			spans = append(spans, n.Position().String()+"-"+n.End().String()+" "+src[n.Position().Offset:n.End().Offset])
		}
		return true
	})
	want := []string{
		"test.g:1:1-test.g:1:10 dim n = 4",
		"test.g:1:5-test.g:1:6 n",
		"test.g:1:9-test.g:1:10 4",
		"test.g:2:1-test.g:4:2 for l in 0..n {\n  weight blk.{l}.w: f32[n] on cpu\n}",
		"test.g:2:5-test.g:2:6 l",
		"test.g:2:10-test.g:2:11 0",
		"test.g:2:13-test.g:2:14 n",
		"test.g:3:3-test.g:3:34 weight blk.{l}.w: f32[n] on cpu",
		"test.g:3:10-test.g:3:19 blk.{l}.w",
		"test.g:3:21-test.g:3:27 f32[n]",
		"test.g:3:21-test.g:3:24 f32",
		"test.g:3:25-test.g:3:26 n",
		"test.g:3:31-test.g:3:34 cpu",
	}
	if diff := cmp.Diff(want, spans); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
}

// TestName checks how names split into parts and resolve.
func TestName(t *testing.T) {
	tests := []struct {
		src      string
		parts    []NamePart
		resolved string
	}{
		{"x", []NamePart{{Lit: "x"}}, "x"},
		{"blk.0.attn_q.weight", []NamePart{{Lit: "blk.0.attn_q.weight"}}, "blk.0.attn_q.weight"},
		{"blk.{l}.attn_q.weight", []NamePart{{Lit: "blk."}, {Var: "l", Offset: 4}, {Lit: ".attn_q.weight", Offset: 7}}, "blk.3.attn_q.weight"},
		{"h{l}", []NamePart{{Lit: "h"}, {Var: "l", Offset: 1}}, "h3"},
		{"a{l}{j}.{unset}", []NamePart{{Lit: "a"}, {Var: "l", Offset: 1}, {Var: "j", Offset: 4}, {Lit: ".", Offset: 7}, {Var: "unset", Offset: 8}}, "a310.{unset}"},
	}
	env := map[string]int64{"l": 3, "j": 10}
	for _, tt := range tests {
		f := mustParse(t, tt.src+" = x")
		n := f.Stmts[0].(*Assign).Name
		if diff := cmp.Diff(tt.parts, n.Parts); diff != "" {
			t.Errorf("%s: parts (-want +got):\n%s", tt.src, diff)
		}
		if got := n.Resolve(env); got != tt.resolved {
			t.Errorf("%s: Resolve = %s, want %s", tt.src, got, tt.resolved)
		}
		if n.String() != tt.src {
			t.Errorf("%s: String = %s", tt.src, n)
		}
		built, err := NewName(tt.src)
		if err != nil || !cmp.Equal(built.Parts, n.Parts) {
			t.Errorf("NewName(%s) = %v, %v", tt.src, built, err)
		}
		for i, p := range n.Parts {
			pos, end := n.PartSpan(i)
			text := (tt.src + " = x")[pos.Offset:end.Offset]
			if (p.Var != "" && text != "{"+p.Var+"}") || (p.Var == "" && text != p.Lit) {
				t.Errorf("%s: part %d spans %q", tt.src, i, text)
			}
		}
	}
}

// TestComments checks where comments attach.
func TestComments(t *testing.T) {
	src := `# header

# doc a
a = f(b,  # inside
  c)  # end of a
for l in 0..2 {  # open
  # doc g
  g(l)
  # end of body
}  # after loop
# end of file
`
	f := mustParse(t, src)
	a := f.Stmts[0].(*Assign)
	texts := func(cs []*Comment) (s []string) {
		for _, c := range cs {
			s = append(s, c.Text)
		}
		return s
	}
	if got, want := texts(a.Doc), []string{"# header", "# doc a", "# inside"}; !cmp.Equal(got, want) {
		t.Errorf("a.Doc = %q, want %q", got, want)
	}
	if !a.Doc[1].Blank || a.Doc[0].Blank {
		t.Errorf("blank line before # doc a not recorded")
	}
	if a.Comment == nil || a.Comment.Text != "# end of a" {
		t.Errorf("a.Comment = %v", a.Comment)
	}
	loop := f.Stmts[1].(*For)
	if loop.OpenComment == nil || loop.OpenComment.Text != "# open" {
		t.Errorf("OpenComment = %v", loop.OpenComment)
	}
	if got := texts(loop.Body[0].(*CallStmt).Doc); !cmp.Equal(got, []string{"# doc g"}) {
		t.Errorf("g Doc = %q", got)
	}
	if got := texts(loop.EndComments); !cmp.Equal(got, []string{"# end of body"}) {
		t.Errorf("EndComments = %q", got)
	}
	if loop.Comment == nil || loop.Comment.Text != "# after loop" {
		t.Errorf("loop Comment = %v", loop.Comment)
	}
	if got := texts(f.Comments); !cmp.Equal(got, []string{"# end of file"}) {
		t.Errorf("File.Comments = %q", got)
	}
	roundTrip(t, "test.g", []byte(src))
}

// TestRender checks carets under tabs and multi-byte text.
func TestRender(t *testing.T) {
	src := []byte("x = 1\n\tyé = f(ab)\n")
	err := ErrorList{
		{Pos: lexer.Position{Filename: "a.g", Offset: 9, Line: 2, Column: 4}, EndPos: lexer.Position{Offset: 10}, Msg: "one"},
		{Pos: lexer.Position{Filename: "a.g", Offset: 12, Line: 2, Column: 6}, EndPos: lexer.Position{Offset: 18}, Msg: "two"},
		{Pos: lexer.Position{Filename: "a.g", Offset: 1, Line: 1, Column: 2}, EndPos: lexer.Position{Offset: 19}, Msg: "multi-line"},
	}
	want := "a.g:2:4: one\n\tyé = f(ab)\n\t  ^\n" +
		"a.g:2:6: two\n\tyé = f(ab)\n\t    ^~~~~~\n" +
		"a.g:1:2: multi-line\nx = 1\n ^\n"
	if got := Render(err, src); got != want {
		t.Errorf("Render (-want +got):\n%s", cmp.Diff(want, got))
	}
	if got := Render(errors.New("plain"), src); got != "plain\n" {
		t.Errorf("Render(plain) = %q", got)
	}
	if got := Render(errors.Join(err[0], errors.New("plain")), src); !strings.HasPrefix(got, "a.g:2:4: one\n") || !strings.HasSuffix(got, "plain\n") {
		t.Errorf("Render(joined) = %q", got)
	}
}

// TestRenderLongLine checks that an error in a 3 MB line echoes a window
// of it, not the line, and that a huge token in the message is cut too.
func TestRenderLongLine(t *testing.T) {
	pad := strings.Repeat("a", 3<<20)
	src := []byte("x = " + pad + " + )" + pad + "\n")
	off := 4 + len(pad) + 3
	f, err := Parse("big.g", src)
	if err == nil {
		t.Fatalf("Parse = %v, want a syntax error", f)
	}
	got := Render(err, src)
	if len(got) > 2000 {
		t.Fatalf("Render printed %d bytes for one error", len(got))
	}
	e := ErrorList{{Pos: lexer.Position{Filename: "big.g", Offset: off, Line: 1, Column: off + 1}, Msg: "here"}}
	lines := strings.Split(Render(e, src), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[1], "… ") || !strings.HasSuffix(lines[1], " …") {
		t.Fatalf("Render(window) = %q", lines)
	}
	if col := strings.Index(lines[2], "^"); col < 0 || []rune(lines[1])[col] != ')' {
		t.Errorf("caret at %d under %q, want it under ')'", col, lines[1])
	}
}

// TestCheckLoopExpansion checks duplicate detection across loops.
func TestCheckLoopExpansion(t *testing.T) {
	ok := "dim n = 2\nfor l in 0..n {\n  weight w{l}: f32[n]\n}\nweight w2: f32[n]\nfor j in 0..n {\n  x = f(w{j})\n}\n"
	if err := Check(mustParse(t, ok)); err != nil {
		t.Errorf("Check:\n%s", Render(err, []byte(ok)))
	}
	dup := "dim n = 3\nfor l in 0..n {\n  weight w{l}: f32[n]\n}\nweight w2: f32[n]\n"
	err := Check(mustParse(t, dup))
	if err == nil || !strings.Contains(err.Error(), "test.g:5:8: weight w2 redeclared; first declared as weight at 3:10") {
		t.Errorf("Check = %v", err)
	}
	big := "dim n = 1000000000\nfor l in 0..n {\n  for j in 0..n {\n    weight w{l}.{j}: f32[n]\n  }\n}\n"
	if err := Check(mustParse(t, big)); err != nil {
		t.Errorf("Check(big):\n%s", Render(err, []byte(big)))
	}
}
