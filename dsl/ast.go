package dsl

import (
	"github.com/alecthomas/participle/v2/lexer"
)

// This file holds the AST. Statement nodes double as the participle grammar
// (the parser tags are the grammar; testdata/grammar.ebnf shows it as EBNF).
// Expression nodes carry no tags: the expression grammar lives in
// grammar.go as one struct per precedence level, and Parse folds it into
// the Binary/Unary/... tree below, so later stages never see the levels.
//
// Every statement and expression node records Pos, the position of its first
// token, and EndPos, the position just past its last token (the two are on
// the same line unless the node spans several lines). Parenthesised
// expressions keep the span of their content; the printer re-creates the
// parentheses that precedence needs.

// A Node is any AST node that has a source span and a canonical DSL form.
type Node interface {
	// Position returns the position of the node's first token.
	Position() lexer.Position
	// End returns the position just past the node's last token.
	End() lexer.Position
	// String returns the node in canonical DSL syntax, without comments.
	String() string
}

// A Stmt is one statement: *Backends, *Place, *Set, *Dim, *Param, *Decl, *Output,
// *For, *If, *Assign or *CallStmt.
type Stmt interface {
	Node
	trivia() *Trivia
	stmtNode()
}

// An Expr is an expression: *Binary, *Unary, *Call, *Name, *Number or
// *String.
type Expr interface {
	Node
	exprNode()
}

// File is a parsed DSL source file.
type File struct {
	Pos    lexer.Position
	EndPos lexer.Position

	// Stmts are the top-level statements in source order.
	Stmts []Stmt `parser:"( @@ | ';' )*"`

	// Comments are the comments after the last top-level statement.
	Comments []*Comment
}

// Comment is one source comment: a "#" or "//" comment running to the end
// of its line.
type Comment struct {
	Pos lexer.Position
	// Text is the comment including its "#" or "//" marker, with trailing
	// whitespace removed.
	Text string
	// Blank reports whether a blank line precedes the comment.
	Blank bool
}

// Trivia holds the comments and blank lines around a statement. Parse fills
// it in after parsing; the printer reproduces it. What is kept:
//
//   - full-line comments before a statement (its Doc), including a file's
//     header comment, which is the Doc of the first statement;
//   - the comment at the end of a statement's last line (Comment);
//   - for loops, the comment after "{" (For.OpenComment) and the full-line
//     comments before "}" (For.EndComments);
//   - comments after the last statement of a file (File.Comments);
//   - whether blank lines separate statements and comments (several blank
//     lines print as one; blank lines at the start or end of a block are
//     dropped).
//
// A comment inside a statement that spans several lines is moved to the
// end of that statement's Doc, since statements print on one line.
type Trivia struct {
	// Doc are the full-line comments directly before the statement.
	Doc []*Comment
	// Comment is the comment at the end of the statement's last line.
	Comment *Comment
	// Blank reports whether a blank line precedes the statement (after its
	// Doc comments, if any).
	Blank bool
}

func (t *Trivia) trivia() *Trivia { return t }

// Backends lists the target backends in priority order:
//
//	backends cuda0, cpu
type Backends struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Trivia

	Names []*Ident `parser:"'backends' @@ ( ',' @@ )*"`
}

// Place puts every weight and state whose name matches a regular
// expression on a backend, like llama.cpp's -ot; the first matching place
// statement wins over a declaration's own "on":
//
//	place "blk\.[0-9]+\.ffn_.*" on cpu
type Place struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Trivia

	// Pattern is a string literal (Check rejects anything else).
	Pattern Expr   `parser:"'place' @@"`
	On      *Ident `parser:"'on' @@"`
}

// Set sets a planning option for the model (see Options):
//
//	set n_copies = 2
//	set gpu_layers = 2
type Set struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Trivia

	Name  *Ident `parser:"'set' @@ '='"`
	Value Expr   `parser:"@@"`
}

// Options are the names a set statement accepts, with what they mean.
var Options = map[string]string{
	"n_copies":         "pipeline copies of split inputs (ggml's n_copies), 1 to 4",
	"op_offload":       "1: let GPU backends take big-batch ops whose weights are in host memory (ggml's op_offload)",
	"offload_batch":    "minimum batch for op_offload (default: the backend's, 32 for cuda)",
	"gpu_layers":       "put the last N layers' weights and state on the first backend (llama.cpp's -ngl)",
	"parallel_regions": "1: run runs of per-token CPU nodes as parallel regions, one part per thread, without a barrier between nodes (graphc's own)",
	"pack_weights":     "0: matrix products read q4_0, q8_0, q4_K and q6_K weights as loaded, one product per call; by default the CPU's read a packed copy made when the model is made, which costs that memory again (llama.cpp's CPU_REPACK), and products sharing an activation run as one call",
}

// Dim declares a named dimension. A constant dim has a fixed value; a
// bounded dim (Bounded, written with "<=") gets its value at run time, and
// Value is its upper bound:
//
//	dim n_embd = 64
//	dim n_tokens <= 512
type Dim struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Trivia

	Name    *Name `parser:"'dim' @@"`
	Bounded bool  `parser:"( '=' | @'<=' )"`
	Value   Expr  `parser:"@@"`
}

// Param declares a named number for float arguments such as rms_norm's
// eps or rope's freq_base, usually read from the weights file's metadata:
//
//	param eps = meta("llama.attention.layer_norm_rms_epsilon", 1e-5)
//	param kq_scale = 1.0 / sqrt(head_dim)
type Param struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Trivia

	Name  *Name `parser:"'param' @@ '='"`
	Value Expr  `parser:"@@"`
}

// DeclKind says what a Decl declares.
type DeclKind string

// The kinds of tensor declaration.
const (
	DeclInput  DeclKind = "input"  // a graph input, set by the caller on every run
	DeclWeight DeclKind = "weight" // a model weight, loaded once
	DeclState  DeclKind = "state"  // a persistent tensor such as a KV cache
)

// Decl declares a tensor: an input, a weight or a state.
//
//	input KQ_mask: f32[n_kv, n_tokens] fill where(i0 <= kv_head + i1, 0, -inf)
//	weight blk.{l}.ffn_up.weight: f16[n_embd, n_ff] on cpu
//	state cache_k.{l}: f16[n_embd, n_kv]
//
// The grammar accepts Fill and On on every kind; Check allows Fill only on
// inputs and On only on weights and states.
type Decl struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Trivia

	Kind DeclKind    `parser:"@( 'input' | 'weight' | 'state' )"`
	Name *Name       `parser:"@@ ':'"`
	Type *TensorType `parser:"@@"`
	// Fill computes an input's value from its coordinates: an expression
	// over i (the flat index), i0..i3 (the coordinates), dims, loop
	// variables and function calls. Nil if absent.
	Fill Expr `parser:"( 'fill' @@ )?"`
	// On places the tensor on a backend. Nil if absent.
	On *Ident `parser:"( 'on' @@ )?"`
	// Or names the weight that stands in for this one when the weights
	// file lacks it, as llama.cpp ties output.weight to token_embd.weight.
	// Nil if absent; Check allows it only on weights. The keyword none in
	// its place (`or none`, see OrNone) makes the weight optional.
	Or *Name `parser:"( 'or' @@ )?"`
}

// OrNone reports whether the declaration ends in `or none`: an optional
// weight, declared when the file compiled for has it and otherwise absent
// (as without a file). An absent weight passed as an op's optional operand
// (rope's freqs) leaves that operand out; any other use is an error.
func (n *Decl) OrNone() bool { return n.Or != nil && n.Or.Text == "none" }

// TensorType is an element type and a shape, ne0 first (ggml order):
//
//	f32[n_embd, n_vocab]
//	flag("ctk", f16)[n_embd_gqa, n_ctx]
//
// The second form is a type the command line chooses when compiling
// (-ctk q8_0): DType is then flag and FlagArgs its name and default.
type TensorType struct {
	Pos    lexer.Position
	EndPos lexer.Position

	DType    *Ident `parser:"@@"`
	FlagArgs []*Arg `parser:"( '(' @@ ( ',' @@ )* ')' )?"`
	Shape    []Expr `parser:"'[' @@ ( ',' @@ )* ']'"`
}

// Output marks a tensor as a graph output, either an existing name or a new
// definition:
//
//	output x
//	output result_output = mul_mat(output.weight, x) on cuda0
type Output struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Trivia

	Name *Name `parser:"'output' @@"`
	// Value is the definition, or nil when an existing name is marked.
	Value Expr `parser:"( '=' @@ )?"`
	// On overrides the backend of the definition. Nil if absent. The
	// grammar accepts it without a definition; Check rejects that.
	On *Ident `parser:"( 'on' @@ )?"`
}

// For repeats its body for each integer in [From, To):
//
//	for l in 0..n_layer {
//	  ...
//	}
//
// The bounds are expressions in the AST; Check requires integer literals or
// constant dims.
type For struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Trivia

	Var  *Ident `parser:"'for' @@ 'in'"`
	From Expr   `parser:"@@ '..'"`
	To   Expr   `parser:"@@"`
	Body []Stmt `parser:"'{' ( @@ | ';' )* '}'"`

	// OpenComment is the comment after "{", if any.
	OpenComment *Comment
	// EndComments are the full-line comments before "}".
	EndComments []*Comment
}

// If runs its body when its condition, a constant integer expression
// (a comparison, or nonzero), holds when the model is compiled:
//
//	if flag("fa", 0) {
//	  ...
//	}
//
// Its body is not a scope of its own: what it assigns is seen after it.
type If struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Trivia

	Cond Expr   `parser:"'if' @@"`
	Body []Stmt `parser:"'{' ( @@ | ';' )* '}'"`

	// OpenComment is the comment after "{", if any.
	OpenComment *Comment
	// EndComments are the full-line comments before "}".
	EndComments []*Comment
}

// A block is a statement with a body: *For or *If.
type block interface {
	Stmt
	body() []Stmt
	// head is the end of the statement's header, before its "{".
	head() lexer.Position
	blockComments() (open **Comment, end *[]*Comment)
}

func (s *For) body() []Stmt                            { return s.Body }
func (s *If) body() []Stmt                             { return s.Body }
func (s *For) head() lexer.Position                    { return s.To.End() }
func (s *If) head() lexer.Position                     { return s.Cond.End() }
func (s *For) blockComments() (**Comment, *[]*Comment) { return &s.OpenComment, &s.EndComments }
func (s *If) blockComments() (**Comment, *[]*Comment)  { return &s.OpenComment, &s.EndComments }

// Assign binds a name to the value of an expression. Rebinding a name is
// allowed; On overrides the backend for the computation.
//
//	x = mul(rms_norm(x, eps=1e-5), blk.{l}.attn_norm.weight) on cuda0
type Assign struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Trivia

	Name  *Name  `parser:"@@ '='"`
	Value Expr   `parser:"@@"`
	On    *Ident `parser:"( 'on' @@ )?"`
}

// CallStmt is a call evaluated for its side effect:
//
//	cpy(k, view_1d(cache_k.{l}, n_tokens * n_embd, kv_head * n_embd * 2))
type CallStmt struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Trivia

	Call *Call  `parser:"@@"`
	On   *Ident `parser:"( 'on' @@ )?"`
}

// Ident is a plain identifier [A-Za-z_][A-Za-z0-9_]*: a loop variable, a
// dtype, a backend, a function or a keyword argument name.
type Ident struct {
	Pos    lexer.Position
	EndPos lexer.Position

	Name string `parser:"@Ident"`
}

// Name names a tensor or dim. Its source form is identifier characters,
// "." and "{var}" interpolations of loop variables (see NamePart).
//
//	x   token_embd.weight   blk.{l}.attn_q.weight   h{l}   blk.0.ffn_up.weight
type Name struct {
	Pos    lexer.Position
	EndPos lexer.Position

	// Text is the source form of the name.
	Text string `parser:"@( Ident | Compound )"`
	// Parts is Text split into literal text and interpolations, in source
	// order; two literal parts are never adjacent. Parse fills it in.
	Parts []NamePart
}

// NamePart is literal text (Var == "") or an interpolation "{Var}".
type NamePart struct {
	// Lit is the literal text, dots included ("blk.", ".attn_q.weight").
	Lit string
	// Var is the loop variable of an interpolation.
	Var string
	// Offset is the byte offset of the part in the name's source text.
	Offset int
}

// Call calls a function (an op, or in fill expressions a math function).
// Positional arguments come before keyword arguments.
//
//	rms_norm(x, eps=1e-5)
type Call struct {
	Pos    lexer.Position
	EndPos lexer.Position

	Func *Ident `parser:"@@ '('"`
	Args []*Arg `parser:"( @@ ( ',' @@ )* )? ')'"`
}

// Arg is one argument of a call: positional (Key == nil) or key=value.
type Arg struct {
	Pos    lexer.Position
	EndPos lexer.Position

	Key   *Ident `parser:"( @@ '=' )?"`
	Value Expr   `parser:"@@"`
}

// BinaryOp is a binary operator.
type BinaryOp string

// The binary operators, lowest precedence first.
const (
	OpLt  BinaryOp = "<"
	OpLe  BinaryOp = "<="
	OpGt  BinaryOp = ">"
	OpGe  BinaryOp = ">="
	OpEq  BinaryOp = "=="
	OpNe  BinaryOp = "!="
	OpAdd BinaryOp = "+"
	OpSub BinaryOp = "-"
	OpMul BinaryOp = "*"
	OpDiv BinaryOp = "/"
	OpRem BinaryOp = "%"
)

// Binary is X Op Y. "+ - * / %" associate to the left; a comparison takes
// at most one operator on each side, so "a < b < c" is a syntax error.
type Binary struct {
	Pos    lexer.Position
	EndPos lexer.Position

	Op    BinaryOp
	OpPos lexer.Position
	X, Y  Expr
}

// Unary is Op X. The only unary operator is "-".
type Unary struct {
	Pos    lexer.Position
	EndPos lexer.Position

	Op string
	X  Expr
}

// Number is an integer literal ("64"), a float literal ("1e-5",
// "10000.0") or "inf". Text is the source text, printed unchanged. A
// negative number is a Unary "-" applied to a Number.
type Number struct {
	Pos    lexer.Position
	EndPos lexer.Position

	Text string
}

// String is a string literal.
type String struct {
	Pos    lexer.Position
	EndPos lexer.Position

	// Text is the quoted source text.
	Text string
	// Value is the unquoted value. Escapes are \\ \" \n \r \t.
	Value string
}

// Compile-time checks that every node implements its interfaces.
var (
	_ Stmt = (*Backends)(nil)
	_ Stmt = (*Place)(nil)
	_ Stmt = (*Set)(nil)
	_ Stmt = (*Dim)(nil)
	_ Stmt = (*Param)(nil)
	_ Stmt = (*Decl)(nil)
	_ Stmt = (*Output)(nil)
	_ Stmt = (*For)(nil)
	_ Stmt = (*If)(nil)
	_ Stmt = (*Assign)(nil)
	_ Stmt = (*CallStmt)(nil)

	_ Expr = (*Binary)(nil)
	_ Expr = (*Unary)(nil)
	_ Expr = (*Call)(nil)
	_ Expr = (*Name)(nil)
	_ Expr = (*Number)(nil)
	_ Expr = (*String)(nil)

	_ Node = (*File)(nil)
	_ Node = (*TensorType)(nil)
	_ Node = (*Ident)(nil)
	_ Node = (*Arg)(nil)
)

func (*Backends) stmtNode() {}
func (*Place) stmtNode()    {}
func (*Set) stmtNode()      {}
func (*Dim) stmtNode()      {}
func (*Param) stmtNode()    {}
func (*Decl) stmtNode()     {}
func (*Output) stmtNode()   {}
func (*For) stmtNode()      {}
func (*If) stmtNode()       {}
func (*Assign) stmtNode()   {}
func (*CallStmt) stmtNode() {}

func (*Binary) exprNode() {}
func (*Unary) exprNode()  {}
func (*Call) exprNode()   {}
func (*Name) exprNode()   {}
func (*Number) exprNode() {}
func (*String) exprNode() {}

func (n *File) Position() lexer.Position       { return n.Pos }
func (n *Backends) Position() lexer.Position   { return n.Pos }
func (n *Place) Position() lexer.Position      { return n.Pos }
func (n *Set) Position() lexer.Position        { return n.Pos }
func (n *Dim) Position() lexer.Position        { return n.Pos }
func (n *Param) Position() lexer.Position      { return n.Pos }
func (n *Decl) Position() lexer.Position       { return n.Pos }
func (n *TensorType) Position() lexer.Position { return n.Pos }
func (n *Output) Position() lexer.Position     { return n.Pos }
func (n *For) Position() lexer.Position        { return n.Pos }
func (n *If) Position() lexer.Position         { return n.Pos }
func (n *Assign) Position() lexer.Position     { return n.Pos }
func (n *CallStmt) Position() lexer.Position   { return n.Pos }
func (n *Ident) Position() lexer.Position      { return n.Pos }
func (n *Name) Position() lexer.Position       { return n.Pos }
func (n *Call) Position() lexer.Position       { return n.Pos }
func (n *Arg) Position() lexer.Position        { return n.Pos }
func (n *Binary) Position() lexer.Position     { return n.Pos }
func (n *Unary) Position() lexer.Position      { return n.Pos }
func (n *Number) Position() lexer.Position     { return n.Pos }
func (n *String) Position() lexer.Position     { return n.Pos }

func (n *File) End() lexer.Position       { return n.EndPos }
func (n *Backends) End() lexer.Position   { return n.EndPos }
func (n *Place) End() lexer.Position      { return n.EndPos }
func (n *Set) End() lexer.Position        { return n.EndPos }
func (n *Dim) End() lexer.Position        { return n.EndPos }
func (n *Param) End() lexer.Position      { return n.EndPos }
func (n *Decl) End() lexer.Position       { return n.EndPos }
func (n *TensorType) End() lexer.Position { return n.EndPos }
func (n *Output) End() lexer.Position     { return n.EndPos }
func (n *For) End() lexer.Position        { return n.EndPos }
func (n *If) End() lexer.Position         { return n.EndPos }
func (n *Assign) End() lexer.Position     { return n.EndPos }
func (n *CallStmt) End() lexer.Position   { return n.EndPos }
func (n *Ident) End() lexer.Position      { return n.EndPos }
func (n *Name) End() lexer.Position       { return n.EndPos }
func (n *Call) End() lexer.Position       { return n.EndPos }
func (n *Arg) End() lexer.Position        { return n.EndPos }
func (n *Binary) End() lexer.Position     { return n.EndPos }
func (n *Unary) End() lexer.Position      { return n.EndPos }
func (n *Number) End() lexer.Position     { return n.EndPos }
func (n *String) End() lexer.Position     { return n.EndPos }
