// Package backend is the planner's view of a backend: its buffer type and
// what it supports (ggml's supports_op, supports_buft, offload_op), as a
// Description each backend's runtime package fills in and the compiler
// plans against.
package backend
