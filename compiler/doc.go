// Package compiler is graphc's library: it runs parse → check → lower →
// passes → codegen on a DSL model (Compile, Generate, GenerateFile,
// CompileFile), resolves targets (Target, Unavailable) and holds the
// options (Config, Placement). It holds no pass logic; the command line
// and its harnesses are cmd/graphc/internal/cli, plan renderings
// internal/planview.
package compiler
