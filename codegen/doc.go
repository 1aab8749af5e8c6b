// Package codegen turns a plan (a fully scheduled and allocated ir.Graph)
// into an ordinary Go package with jennifer: named constants for every
// buffer offset, one method per split, a Model with New/Eval/Close, and
// optionally a main that fills weights deterministically and prints the
// outputs. It decides nothing: every backend, offset and order it emits is
// already in the plan. Output is deterministic byte for byte and gofmt'd.
package codegen
