// Package bench measures graphc's CPU backend: GFLOP/s of the matrix
// products (packed GEMM, matrix-vector), GB/s of the bandwidth-bound ops,
// and the evaluation time of the generated llama examples. `graphc bench`
// prints its table (or JSON); `go test -bench . ./internal/bench` runs the
// same cases as Go benchmarks next to gonum's Sgemm/Sgemv, measured in the
// same run so that the ratios hold on a shared, noisy machine.
package bench
