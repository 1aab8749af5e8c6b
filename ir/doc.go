// Package ir is graphc's graph: tensors with ggml's layout conventions
// (ne[0] fastest, nb strides in bytes, views over a source's memory at an
// offset), symbolic dims with upper bounds, shape inference,
// the node order ggml_build_forward_expand would produce, the scheduling
// annotations the passes fill in (backend, cause, splits, buffer offsets),
// Verify, and a deterministic text form used by golden tests.
//
// It imports nothing that executes: passes, codegen and runtime backends
// build on it, never the other way round.
package ir
