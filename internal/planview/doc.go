// Package planview renders a plan for people and tools: its JSON form
// (`graphc plan -json`, documented in docs/plan-json.md), a report in the
// spirit of GGML_SCHED_DEBUG=2 (`plan -debug`) and a Graphviz graph
// (`plan -dot`). It reads *ir.Graph only, so the compiler's tests and the
// examples' use it as well as the command line.
package planview
