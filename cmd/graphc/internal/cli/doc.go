// Package cli is the graphc command line: the command table (compile,
// plan, run, ggml-check, gguf, bench, calibrate, devices, fmt), their
// flags, help and exit codes, the reference docs/cli.md is generated from
// (Reference), and the harnesses behind run and ggml-check that build
// generated programs in a temporary module and run them. cmd/graphc is
// its main; the library it drives is package compiler.
package cli
