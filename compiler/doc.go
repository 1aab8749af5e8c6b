// Package compiler is graphc's driver: it runs parse → check → lower →
// passes → codegen, holds the options, and implements the commands behind
// the CLI (compile, plan, run, fmt, ggml-check). It holds no pass logic.
package compiler
