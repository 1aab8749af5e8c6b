// Package codegen turns a plan (a fully scheduled and allocated ir.Graph)
// into an ordinary Go package with jennifer: named constants for every
// buffer offset, one method per split (cut into chunk methods of at most
// maxChunkNodes nodes when longer), a Model with New, Submit/Eval,
// Stats, the eval callback and Close, and optionally a main that fills
// weights deterministically and prints the outputs. It decides nothing:
// every backend, offset and order it emits is already in the plan. Output
// is deterministic byte for byte and gofmt'd.
//
// The generated code holds each backend of the target by its own type
// (cpu.Backend, sim.Backend, openblas.Backend, cuda.Backend, …) to launch
// kernels, and drives them all through a engine.Sched: New allocates each
// compute buffer on the first backend of its buffer type, puts weights
// and state in their backend's memory and has the backends that pack
// weights (the CPU) make the plan's packed copies of them (cpu.Backend.Pack,
// from a table per backend); each split method calls
// BeginSplit, copies the split's inputs in with CopyInput (the scheduler
// orders the backends' streams with events, as ggml's
// ggml_backend_sched_compute_splits does), launches its nodes' kernels,
// reports each to the eval callback and calls EndSplit. With n_copies > 1
// the graph inputs and the split inputs' copies have one version per
// pipeline slot (offs…[c]), and Submit returns while asynchronous backends
// still compute.
//
// One file per stage, in the order Generate runs them: prepare.go names
// everything and checks what the plan promises codegen (prepare); decls.go
// emits the package-level types, constants and the plan tables (types,
// decls, plan); model.go the Model and New; submit.go Submit, which calls
// the splits in order; split.go one method per split with its kernel calls
// (or its chunk methods' calls); regions.go the parallel regions; main.go
// the optional main. How each
// kind of backend is imported, constructed and driven is its row in
// package backend's registry, which the compiler plans from too.
package codegen
