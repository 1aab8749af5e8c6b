// Package dsl is graphc's front end: it parses the graph DSL into an AST
// with source positions, prints the AST back in canonical form, and checks
// the structure of a program. Lowering to IR and shape checking happen
// elsewhere, on the AST.
//
// A program declares dims, tensors (inputs, weights, states) and computes
// new tensors from them with calls:
//
//	backends cuda0, cpu
//	dim n_embd = 64
//	dim n_tokens <= 512
//	input inp_tokens: i32[n_tokens]
//	weight token_embd.weight: f32[n_embd, n_vocab]
//	x = get_rows(token_embd.weight, inp_tokens)
//	for l in 0..n_layer {
//	  x = mul(rms_norm(x, eps=1e-5), blk.{l}.attn_norm.weight) on cuda0
//	}
//	output x
//
// docs/dsl.md, at the repository's root, is the language reference, and
// testdata/grammar.ebnf the grammar.
//
// The API:
//
//   - Parse returns a *File. Syntax errors are an ErrorList of *Error,
//     rendered as "file:line:col: message".
//   - Check reports structural problems (undefined or duplicate names,
//     bad dtypes, loop bounds, ...) as an ErrorList, all at once.
//   - Format prints a *File in canonical form; every node's String does
//     the same for one node, without comments.
//   - Render prints errors with the offending source line and a caret.
//   - Name.Resolve substitutes loop variable values into a name such as
//     blk.{l}.attn_q.weight; Inspect walks the tree.
//
// The grammar is written as participle structs (ast.go for statements,
// grammar.go for the expression precedence levels).
package dsl
