// Package interp runs a compiled plan in process, without generating and
// building Go: test and fuzzing infrastructure, so that a fuzzer can run
// every model it compiles, and tests can compare a plan's numbers with
// generated code's and with ggml's traces. It is not a second runtime for
// users: it is slow to dispatch (a reflective call per node), keeps one
// evaluation in flight, and computes every backend's nodes on the CPU.
//
// A Machine follows the plan as generated code does: one compute buffer
// per planned buffer (a piece per chunk) at the planned sizes, every tensor
// at its planned offset and every view over its source, weights and state
// filled by the conformance traces' rule (tensor.GGMLFill, by declaration
// order), inputs by their fill expressions (ir.FillExpr.Eval, ir.DefaultFill)
// unless the caller passes them, the plan's packed copies of weights made
// once by the CPU backend (cpu.Backend.Pack), split inputs copied in, nodes
// in plan order with runtime/cpu's kernels — parallel regions part by part
// on the CPU backend's lanes — and the outputs copied out. The kernel of each op and
// the order of its arguments come from the op table (ir.Op.Info), as in
// codegen's kernel calls, so the same thread count gives the same bits as
// the generated package.
//
// An evaluation checks what generated code checks before it starts (the
// dims against their bounds, the inputs' shapes, get_rows indices with
// engine.CheckIndices, views whose extent depends on the dims) and more:
// every tensor's bytes at the evaluation's dims are computed with
// overflow checks and must lie inside their memory, and a view must not
// step backwards. Those are errors, as is a kernel's *engine.KernelError.
// A plan that contradicts itself (a tensor outside its compute buffer, or
// larger than the plan reserved for it, at dims within their bounds) is a
// compiler bug and panics with "BUG:", which is what a fuzzer looks for.
//
// Config.MaxBytes and Config.MaxWork refuse, with ErrTooBig, plans and
// evaluations that would take more memory or time than a fuzzer's input
// should, before anything is allocated.
package interp
