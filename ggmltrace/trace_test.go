package ggmltrace_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/graphc/graphc/ggmltrace"
)

func traces(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no traces in testdata: %v", err)
	}
	return files
}

func load(t *testing.T, path string) *ggmltrace.Trace {
	t.Helper()
	tr, err := ggmltrace.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestTracesMatchGGML: graphc's scheduling passes decide exactly as ggml
// did on every recorded trace.
func TestTracesMatchGGML(t *testing.T) {
	for _, path := range traces(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			tr := load(t, path)
			g, _, err := tr.Plan("split_graph", 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ggmltrace.Compare(tr, g) {
				t.Error(d)
			}
		})
	}
}

// TestSchedDebugLog checks the plan against ggml's own GGML_SCHED_DEBUG=2
// report in each trace, an oracle independent of the JSON fields: each
// split header (backend, inputs) and each printed node's backend and cause,
// as ggml truncates them ("%5.5s %8.8s").
func TestSchedDebugLog(t *testing.T) {
	splitRE := regexp.MustCompile(`^## SPLIT #(\d+): (.*) # (\d+) inputs(?:: (.*))?$`)
	inputRE := regexp.MustCompile(`\[(.*?) \(\s*\d+[KM]\)\]`)
	nodeRE := regexp.MustCompile(`^node #\s*(\d+) \(\s*[^)]*\):\s*(.{1,20}?) \(\s*\d+[KM]\) \[(.{5}) (.{8})\]`)
	for _, path := range traces(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			tr := load(t, path)
			g, _, err := tr.Plan("split_graph", 0)
			if err != nil {
				t.Fatal(err)
			}
			nSplits, nNodes := 0, 0
			for _, line := range strings.Split(tr.SchedDebugLog, "\n") {
				line = strings.TrimRight(line, " ")
				if m := splitRE.FindStringSubmatch(line); m != nil {
					k, _ := strconv.Atoi(m[1])
					nSplits++
					if k >= len(g.Splits) {
						t.Errorf("log has split %d, graphc %d splits", k, len(g.Splits))
						continue
					}
					s := g.Splits[k]
					var got, want []string
					for _, in := range s.Inputs {
						got = append(got, in.Tensor.Name)
					}
					for _, im := range inputRE.FindAllStringSubmatch(m[4], -1) {
						want = append(want, im[1])
					}
					if be := g.Backends[s.Backend].Name; be != m[2] || strings.Join(got, " ") != strings.Join(want, " ") {
						t.Errorf("split %d: log %s %v, graphc %s %v", k, m[2], want, be, got)
					}
					continue
				}
				m := nodeRE.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				nNodes++
				i, _ := strconv.Atoi(m[1])
				n := g.Nodes[i]
				got := fmt.Sprintf("%20.20s [%5.5s %8.8s]", n.Name, g.Backends[n.Backend].Name, n.Cause)
				want := fmt.Sprintf("%20.20s [%s %s]", m[2], m[3], m[4])
				if got != want {
					t.Errorf("node %d: log %s, graphc %s", i, want, got)
				}
			}
			nonView := 0
			for _, n := range g.Nodes {
				if !n.Op.IsView() {
					nonView++
				}
			}
			if nSplits != len(g.Splits) || nNodes != nonView {
				t.Errorf("log has %d splits and %d nodes, graphc %d splits and %d non-view nodes", nSplits, nNodes, len(g.Splits), nonView)
			}
		})
	}
}

// TestFillData: what a run of the plan needs from the trace.
func TestFillData(t *testing.T) {
	tr := load(t, "testdata/mlp.json")
	g, _, _, err := tr.Graph()
	if err != nil {
		t.Fatal(err)
	}
	var params []string
	for _, p := range g.Params {
		params = append(params, p.Name)
	}
	if got, want := strings.Join(params, " "), "fc0.weight fc0.bias fc1.weight fc1.bias fc2.weight fc2.bias"; got != want || strings.Join(tr.ParamOrder(), " ") != want {
		t.Errorf("params %s, ParamOrder %v, want %s", got, tr.ParamOrder(), want)
	}
	if len(g.Inputs) != 1 || g.Inputs[0].Name != "mlp_in" || len(g.Outputs) != 1 || g.Outputs[0].Name != tr.Output.Tensor {
		t.Errorf("inputs %v outputs %v, want mlp_in and %s", g.Inputs, g.Outputs, tr.Output.Tensor)
	}
	if n := g.Outputs[0].NElem(); fmt.Sprint(n) != fmt.Sprint(len(tr.Output.Values)) {
		t.Errorf("output has %s elements, the trace %d values", n, len(tr.Output.Values))
	}
	if tr.FillRule == "" || tr.InputRule == "" {
		t.Error("fill rules missing")
	}
}

// TestCheck: the one-call API the ggml-check command uses.
func TestCheck(t *testing.T) {
	tr, g, diffs, err := ggmltrace.Check("testdata/llama_partial.json")
	if err != nil || len(diffs) != 0 || tr.Case != "llama_partial" || len(g.Splits) != 3 {
		t.Errorf("Check: %v, %d diffs, case %q, %d splits", err, len(diffs), tr.Case, len(g.Splits))
	}
	if got := g.BytesCopiedPerEval(); got != 6688 {
		t.Errorf("bytes copied per eval %d, want 6688", got)
	}
	if _, _, _, err := ggmltrace.Check("testdata/missing.json"); err == nil {
		t.Error("Check of a missing file: no error")
	}
}

// TestGraphInputs: graph_inputs_pp in its two recorded forms, objects with
// backend and versions and bare names, and a malformed one. An object list
// once decoded as names first and kept the failed attempt's empty entries.
func TestGraphInputs(t *testing.T) {
	tr := load(t, "testdata/llama_pp.json")
	ins, err := tr.Result.GraphInputs()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(ins), "[{inp_tokens 1 [inp_tokens CPU#inp_tokens#1]} {inp_pos 1 [inp_pos CPU#inp_pos#1]} {KQ_mask 1 [KQ_mask CPU#KQ_mask#1]}]"; got != want {
		t.Errorf("GraphInputs = %s, want %s", got, want)
	}
	for _, c := range []struct{ raw, want, err string }{
		{`["a", "b"]`, "[{a -1 []} {b -1 []}]", ""},
		{`[]`, "[]", ""},
		{`null`, "[]", ""},
		{`[{"backend_id": 1}]`, "", "graph_inputs_pp[0]: no name"},
		{`{"name": "a"}`, "", "graph_inputs_pp: json"},
	} {
		r := ggmltrace.Result{GraphInputsPP: []byte(c.raw)}
		ins, err := r.GraphInputs()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want an error with %q", c.raw, err, c.err)
			}
			continue
		}
		if err != nil || fmt.Sprint(ins) != c.want {
			t.Errorf("%s: %v %v, want %s", c.raw, ins, err, c.want)
		}
	}
}

// TestCompareGraphInputVersions: a graph input's versions are compared by
// backend and name, not only the inputs' names.
func TestCompareGraphInputVersions(t *testing.T) {
	tr := load(t, "testdata/llama_pp.json")
	g, _, err := tr.Plan("split_graph", 0)
	if err != nil {
		t.Fatal(err)
	}
	tr.Result.GraphInputsPP = []byte(`[{"name": "inp_tokens", "backend_id": 0, "copies": ["inp_tokens", "X#inp_tokens#1"]}, {"name": "inp_pos", "backend_id": 1}, {"name": "KQ_mask", "backend_id": 1}]`)
	var got []string
	for _, d := range ggmltrace.Compare(tr, g) {
		got = append(got, d.String())
	}
	want := []string{
		"graph input 0 inp_tokens: backend: ggml RPC0[127.0.0.1:50052], graphc CPU",
		"graph input 0 inp_tokens: versions: ggml inp_tokens, X#inp_tokens#1, graphc inp_tokens, CPU#inp_tokens#1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("diffs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
