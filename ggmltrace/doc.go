// Package ggmltrace imports traces of ggml's real scheduling decisions
// (testdata/*.json, described in testdata/README.md: a graph built with
// the ggml API, the backends' answers to supports_op, supports_buft and
// offload_op, and what ggml_backend_sched decided) and compares graphc's
// plan with them, decision by decision.
//
//	tr, err := ggmltrace.Load("llama_partial.json")
//	g, pc, err := tr.Plan("split_graph", 0) // or tr.Graph() and passes.Run
//	for _, d := range ggmltrace.Compare(tr, g) {
//		fmt.Println(d)
//	}
//
// or, in one call, ggmltrace.Check(path). Diffs marshal to JSON.
//
// The trace also carries how its weights and inputs were filled (Params,
// FillRule, InputRule) and the output ggml computed (Output), for running
// the plan and comparing numbers.
package ggmltrace
