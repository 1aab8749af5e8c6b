// Package bench measures graphc's CPU backend: GFLOP/s of the matrix
// products (packed GEMM, matrix-vector) and GB/s of the bandwidth-bound
// ops. `graphc bench` prints its table (or JSON); `go test -bench .
// ./internal/bench` runs the same cases as Go benchmarks next to gonum's
// Sgemm/Sgemv, measured in the same run so that the ratios hold on a
// shared, noisy machine. CompareGGML (`graphc bench -ggml`) runs the
// quantized products (q4_0, q8_0 and the K-quants) beside ggml's own CPU
// mul_mat on the same weights, in ggml's plain buffer and in the extra
// buffer types that repack them (ggmlcpu.go), in turns, and flash
// attention beside ggml's CPU flash_attn_ext on the same f16 K/V caches
// (ggmlfa.go).
//
// The generated models' evaluation times are the examples' own
// benchmarks (`go test -run - -bench Eval ./examples/llama
// ./examples/llama32`), not cases here: graphc must build without any
// generated code, or `go generate` could not repair a broken generated
// file.
package bench
