// Package passes turns a graph into a plan: which backend runs each op,
// where the graph splits, which tensors are copied between backends, and
// where every intermediate tensor lives in the compute buffers. Each pass
// is one file with one entry function, run from the ordered table in
// pipeline.go; the default passes reproduce the decisions of ggml's
// ggml_backend_sched_split_graph and ggml-alloc node for node.
package passes
