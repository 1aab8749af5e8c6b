// Package cpu is graphc's CPU backend: every op of runtime.Kernels with the
// numerics of ggml's CPU backend (ggml-org/ggml src/ggml-cpu), on strided
// tensor views, split over a pool of persistent worker goroutines.
//
// # Numerics
//
// The kernels reproduce ggml's choices where they change results:
//
//   - MulMat with an f16 a first rounds x to f16, as ggml converts src1 to
//     vec_dot_type; products of two f16 values are exact in float32 and the
//     dot accumulates in float32 (only the summation order differs from
//     ggml's SIMD lanes).
//   - Gelu is ggml's GGML_GELU_FP16 path: 0 for x ≤ -10, x for x ≥ 10, else
//     a table of tanh-approximation gelu indexed by the f16 bits of x and
//     holding f16 results.
//   - RMSNorm sums the float32 squares in float64; Norm takes the mean and
//     the variance of the centred values the same way; both scale by a
//     float32 1/sqrt(v+eps).
//   - SoftMax adds slope·mask to x·scale in float32, exponentiates in
//     float32 and sums the exponentials in float64.
//   - Rope builds θ iteratively in float32 (θ *= powf(base, -2/n_dims)),
//     applies YaRN as rope_yarn does and takes cosf/sinf of the float32 θ.
//   - f32↔f16 conversions round to nearest even (runtime.F32ToF16), as F16C.
//
// # Threads
//
// A Backend owns threads-1 persistent worker goroutines. An op big enough
// to pay for it (a few microseconds of work per piece) is cut into chunks
// (row ranges; tiles for MulMat), and the calling goroutine and the workers
// claim chunks with a CAS on one job word until none are left; smaller ops
// run inline without waking anyone. Because the caller claims too, a worker
// that wakes late (parked, or its OS thread descheduled on a busy machine)
// only means the others do its chunks. Idle workers spin for ~100 µs, then
// park on a channel. A Backend runs one kernel at a time: its methods must
// not be called concurrently.
//
// # Layout
//
// The inner loops live in small functions (dotF32, dotF16, gemm4x2F32, … in
// dot.go) so that an assembly version can replace each one behind build tags
// (name_amd64.go + name_amd64.s, with name_noasm.go keeping the Go loop for
// -tags noasm), without touching the dispatch around them.
package cpu
