// Package runtime is what generated graphc programs link against: tensor
// views over byte buffers, the element types, aligned buffer allocation and
// the kernel interface that every backend (runtime/cpu, runtime/cuda, …)
// implements. It knows nothing about the compiler: by the time code reaches
// this package every decision (backend, offset, order) has been made.
package runtime
