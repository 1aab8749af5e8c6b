// Package runtime is what generated graphc programs link against: tensor
// views over byte buffers, the element types, aligned buffer allocation,
// the kernel interface that every backend implements (runtime/cpu's
// kernels, which runtime/sim runs on device-like memory; OpenBLAS's
// products; ggml's devices through runtime/ggml; ggml's RPC servers through
// runtime/rpc), the Backend interface generated code drives (buffers of a
// buffer type, copies between backends, events) and Sched, which runs a
// plan's splits with ggml_backend_sched_compute_splits's copies and
// synchronization, pipelined over n_copies slots, with statistics and an
// eval callback. It knows nothing about the compiler: by the time code
// reaches this package every decision (backend, offset, order) has been
// made.
package runtime
