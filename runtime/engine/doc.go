// Package engine is what runs a generated graphc program: the kernel
// interface every backend implements (runtime/cpu's kernels, which
// runtime/sim runs on device-like memory; OpenBLAS's products; ggml's
// devices through runtime/ggml; ggml's RPC servers through runtime/rpc),
// the Backend interface generated code drives (buffers of a buffer type,
// copies between backends, events), Sched, which runs a plan's splits with
// ggml_backend_sched_compute_splits's copies and synchronization, pipelined
// over n_copies slots, with statistics and an eval callback, and Driver,
// the model's evaluation loop. It knows nothing about the compiler: by the
// time code reaches this package every decision (backend, offset, order)
// has been made.
package engine
