// Package ops is the op table: one row per tensor operation, with its DSL
// and ggml names and numbers, operands, memory flags, kernel and scalar
// parameters. The IR, the planner, code generation and every backend read
// it (or are checked against it by a test that names what a new row
// lacks). It imports only package tensor.
package ops

//go:generate go run ./internal/opsgen
