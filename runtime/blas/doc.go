// Package blas describes graphc's BLAS backend, "blas": ggml's BLAS backend,
// which computes large f32 matrix products with an optimized BLAS library in
// the CPU's own host memory. Like every backend description it is plain Go
// that the compiler plans against on any machine; the kernels, on OpenBLAS
// loaded at run time without cgo, are in package blas/openblas, which
// generated code imports (so that the compiler itself stays free of
// dynamic loading).
//
// The backend shares the CPU's buffer type, so ggml's third scheduling pass
// upgrades the CPU's big matrix products to it (cause 3.upg) and no tensor
// is ever copied between the two. It supports MUL_MAT exactly where ggml's
// does (ggml-org/ggml src/ggml-blas/ggml-blas.cpp supports_op): both sources
// contiguous, an f32 second source, and at least 32 rows, columns and
// reduced elements (ne0, ne1, ne10 >= 32); like ggml, an f16 first source is
// converted to f32 first. Its results agree with the CPU backend's to
// rounding (the summation order differs), not bit for bit.
//
// Library finds the shared library the same way on both sides: the compiler
// uses it to tell whether this machine can run a plan with BLAS (graphc run
// drops the backend with a warning when it cannot), the kernels to load it.
package blas
