// Package cpu is graphc's CPU backend: every op of engine.Kernels with the
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
//   - f32↔f16 conversions round to nearest even (tensor.F32ToF16), as F16C.
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
// park on a channel. A dispatch costs about 0.15–0.4 µs over running inline
// (BenchmarkDispatch). Work is estimated in nanoseconds of one thread at the
// kernels' speed, so that only ops of several microseconds are split. A
// Backend runs one kernel at a time: its methods must not be called
// concurrently.
//
// # Kernels and instruction sets
//
// The inner loops are assembly for amd64, picked once at start-up from
// golang.org/x/sys/cpu (see isa.go): AVX-512 (F, VL, BW) where the processor
// has it, else AVX2 with FMA and F16C, else the Go loops; $GRAPHC_CPU_ISA
// (ISAEnv) or SetISA picks a lower level the machine has. Each kernel family
// follows gonum's layout:
//
//   - name.go: the API the kernels call, dispatching on the level, and the
//     Go loop, which is the reference (tests compare the assembly with it);
//   - name_amd64.go (//go:build !noasm): body-less declarations whose doc
//     comments give the loop they compute;
//   - name_amd64.s: the AVX-512 and AVX2 versions;
//   - name_noasm.go (//go:build !amd64 || noasm): Go bodies for the same
//     names, so a -tags noasm build (and every other architecture) runs the
//     Go loops.
//
// The families: gemm (the packed GEMM microkernels, 32×12 AVX-512, 16×6
// AVX2, 4×4 Go, with packing and blocking in gemm.go), dot (dot products,
// 4×1 and 4×4 blocks and row panels for small products and matrix-vector
// products), f16 (F16C row conversions), exp (the exponential of soft_max and
// silu, float64 inside, bit-identical to its Go loop), vec (elementwise
// add/sub/mul/div/scale, the mask add, row max, sums of squares), rope,
// qdot (q8_0·q8_0 and q4_0·q8_0 block dot products, AVX-512 VNNI where the
// processor has it, else AVX2; quant.go holds the quantized MulMat and
// GetRows around them) and packed (Pack's q4_0/q8_0 row groups against
// panels of quantized columns, packed.go: AVX-512 VNNI, else AVX2 in
// packed_avx2_amd64.s).
// The tests run every kernel at every level the machine has (forISAs) with
// guard bands, unaligned operands and read-only checks; CI also runs them
// with -tags noasm.
package cpu
