package ggmltrace_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/graphc/graphc/ggmltrace"
)

// moeTraces are the traces with MUL_MAT_ID nodes, recorded by
// tools/tracerec (scripts/record-traces.sh).
func moeTraces(t *testing.T) []*ggmltrace.Trace {
	t.Helper()
	var out []*ggmltrace.Trace
	for _, path := range traces(t) {
		tr := load(t, path)
		for _, n := range tr.Nodes {
			if n.Op == "MUL_MAT_ID" {
				out = append(out, tr)
				break
			}
		}
	}
	return out
}

// TestMoETraces checks what the MoE traces record beyond the scheduler's
// plan: the experts every MUL_MAT_ID chose, and the bytes ggml moved for
// each split input. An expert weight in host memory read by the split's
// first node, a MUL_MAT_ID, moved only the ranges of consecutive experts
// the ids chose, each range but the one ending at the last expert with
// min(expert size, 512) bytes more; every other input moved whole.
func TestMoETraces(t *testing.T) {
	trs := moeTraces(t)
	if len(trs) == 0 {
		t.Fatal("no MoE traces in testdata")
	}
	placements := map[string]bool{}
	for _, tr := range trs {
		t.Run(tr.Case, func(t *testing.T) {
			nodes := map[string]*ggmltrace.Tensor{}
			tensors := map[string]*ggmltrace.Tensor{}
			for _, l := range tr.Leafs {
				tensors[l.Name] = l
			}
			for _, n := range tr.Nodes {
				nodes[n.Name] = n
				tensors[n.Name] = n
			}
			for _, n := range tr.Nodes {
				if n.Op != "MUL_MAT_ID" {
					continue
				}
				as, ids := tensors[*n.Src[0]], tensors[*n.Src[2]]
				if as == nil || ids == nil {
					t.Fatalf("%s: sources %v not in the trace", n.Name, n.Src)
				}
				if int64(len(n.IDs)) != ids.Ne[0]*ids.Ne[1] {
					t.Errorf("%s: %d ids recorded, ids %s is %v", n.Name, len(n.IDs), ids.Name, ids.Ne)
				}
				for _, e := range n.IDs {
					if e < 0 || int64(e) >= as.Ne[2] {
						t.Errorf("%s: expert %d of %d", n.Name, e, as.Ne[2])
					}
				}
				placements[tr.Case[:strings.LastIndex(tr.Case, "_b")]+" on "+n.Backend+" weights "+as.Prealloc.Buft] = true
			}
			var moved, toDevice, fromDevice int64
			for k, s := range tr.Result.Splits {
				first := tr.Nodes[s.IStart]
				for _, in := range s.Inputs {
					moved += in.BytesMoved
					if tr.Backends[s.BackendID].Kind == "RPC" {
						toDevice += in.BytesMoved
					} else {
						fromDevice += in.BytesMoved
					}
					what := fmt.Sprintf("split %d input %s", k, in.Name)
					src := tensors[in.Name]
					partial := first.Op == "MUL_MAT_ID" && *first.Src[0] == in.Name && in.IsWeight && src.Prealloc != nil && src.Prealloc.IsHost
					if !partial {
						if in.BytesMoved != in.Bytes || in.ExpertRanges != nil {
							t.Errorf("%s: moved %d of %d bytes, expert ranges %v; want all of it", what, in.BytesMoved, in.Bytes, in.ExpertRanges)
						}
						continue
					}
					if in.IDsFrom != *first.Src[2] {
						t.Errorf("%s: ids from %s, %s reads %s", what, in.IDsFrom, first.Name, *first.Src[2])
					}
					ranges := usedRanges(first.IDs, src.Ne[2])
					if !reflect.DeepEqual(ranges, in.ExpertRanges) {
						t.Errorf("%s: expert ranges %v, %s's ids %v give %v", what, in.ExpertRanges, first.Name, first.IDs, ranges)
					}
					if want := rangeBytes(ranges, src.Nb[2], src.Ne[2]); in.BytesMoved != want {
						t.Errorf("%s: moved %d bytes, its ranges %v make %d", what, in.BytesMoved, ranges, want)
					}
				}
			}
			if moved != tr.Result.BytesMovedPerEval {
				t.Errorf("inputs moved %d bytes in all, bytes_moved_per_eval %d", moved, tr.Result.BytesMovedPerEval)
			}
			// The recorder counted the RPC connection's traffic: the inputs
			// moved to the device, and back from it plus the ids ggml read.
			if w := tr.Result.Wire; w == nil {
				t.Error("no bytes_on_wire")
			} else if w.ToDevice != toDevice || w.FromDevice != fromDevice+w.IDsRead {
				t.Errorf("on the wire %d bytes to the device and %d back (%d of ids), the inputs moved %d and %d", w.ToDevice, w.FromDevice, w.IDsRead, toDevice, fromDevice)
			}
		})
	}
	// The placements the MoE traces are there for: MUL_MAT_ID on the CPU
	// with its weights, on the device with its weights, and on the device
	// with host weights (the used experts' copy), each at batch 1 and 64.
	for _, want := range []string{
		"moe_cpu_exps on CPU weights CPU",
		"moe_gpu on RPC0[127.0.0.1:50052] weights RPC0[127.0.0.1:50052]",
		"moe_ncpu2 on CPU weights CPU",
		"moe_ncpu2 on RPC0[127.0.0.1:50052] weights RPC0[127.0.0.1:50052]",
		"moe_exps_offload on RPC0[127.0.0.1:50052] weights CPU",
	} {
		if !placements[want] {
			t.Errorf("no MoE trace has MUL_MAT_ID %s (have %v)", want, placements)
		}
	}
}

// usedRanges merges the experts ids chose into ranges of consecutive ones.
func usedRanges(ids []int32, nExpert int64) [][2]int64 {
	used := make([]bool, nExpert)
	for _, e := range ids {
		used[e] = true
	}
	var out [][2]int64
	for e := int64(0); e < nExpert; e++ {
		if !used[e] {
			continue
		}
		first := e
		for e+1 < nExpert && used[e+1] {
			e++
		}
		out = append(out, [2]int64{first, e})
	}
	return out
}

func rangeBytes(ranges [][2]int64, expertSize, nExpert int64) int64 {
	var n int64
	for _, r := range ranges {
		n += (r[1] - r[0] + 1) * expertSize
		if r[1] < nExpert-1 {
			n += min(expertSize, 512)
		}
	}
	return n
}

// TestCausesMatchSchedDebugLog checks every trace's recorded assignments
// and causes (read from ggml's SET_CAUSE block) against ggml's own
// GGML_SCHED_DEBUG=2 report of the same run, as ggml truncates them: each
// printed node's, and each of its sources' after scheduling (leaves, views
// and the split inputs' copies, which ggml assigns no backend: NULL).
func TestCausesMatchSchedDebugLog(t *testing.T) {
	nodeRE := regexp.MustCompile(`^node #\s*(\d+) \(\s*[^)]*\):\s*(.{1,20}?) \(\s*\d+[KM]\) \[(.{5}) (.{8})\] use=\d+,c=\d:(.*)$`)
	// A source: " %20.20s (%5.5s) [%5.5s %8.8s]", 46 characters.
	const srcWidth = 46
	for _, path := range traces(t) {
		tr := load(t, path)
		t.Run(tr.Case, func(t *testing.T) {
			assigned := map[string]string{} // name → "[backend cause]" as ggml prints it
			for _, x := range append(append([]*ggmltrace.Tensor(nil), tr.Leafs...), tr.Nodes...) {
				assigned[x.Name] = fmt.Sprintf("[%5.5s %8.8s]", x.Backend, x.Cause)
			}
			for _, s := range tr.Result.Splits {
				for _, in := range s.Inputs {
					for _, c := range in.Copies {
						assigned[c.Name] = fmt.Sprintf("[%5.5s %8.8s]", "NULL", c.Cause)
					}
				}
			}
			n, nSrc := 0, 0
			for _, line := range strings.Split(tr.SchedDebugLog, "\n") {
				m := nodeRE.FindStringSubmatch(strings.TrimRight(line, " "))
				if m == nil {
					continue
				}
				n++
				var i int
				fmt.Sscan(m[1], &i)
				if i >= len(tr.Nodes) {
					t.Fatalf("log has node %d, the trace %d", i, len(tr.Nodes))
				}
				nt := tr.Nodes[i]
				got := fmt.Sprintf("%20.20s [%5.5s %8.8s]", nt.Name, nt.Backend, nt.Cause)
				want := fmt.Sprintf("%20.20s [%s %s]", m[2], m[3], m[4])
				if got != want {
					t.Errorf("node %d: log %s, trace %s", i, want, got)
				}
				srcs := nt.SrcAfter
				if srcs == nil {
					srcs = nt.Src
				}
				var names []string
				for _, s := range srcs {
					if s != nil {
						names = append(names, *s)
					}
				}
				rest := m[5]
				if len(rest) != srcWidth*len(names) {
					t.Errorf("node %d %s: log sources %q, trace %v", i, nt.Name, m[5], names)
					continue
				}
				for k, name := range names {
					chunk := rest[k*srcWidth : (k+1)*srcWidth]
					wantSrc := strings.TrimSpace(chunk[1:21]) + " " + chunk[30:]
					gotSrc := strings.TrimSpace(fmt.Sprintf("%20.20s", name)) + " " + assigned[name]
					nSrc++
					if wantSrc != gotSrc {
						t.Errorf("node %d %s source %d: log %s, trace %s", i, nt.Name, k, wantSrc, gotSrc)
					}
				}
			}
			if n == 0 || nSrc == 0 {
				t.Errorf("%d node lines and %d sources in the log", n, nSrc)
			}
		})
	}
}

// TestRecorderReproduces compares traces tools/tracerec recorded into
// $GGMLTRACE_RECORDED (scripts/record-traces.sh -check does that for
// llama_partial and llama_full) with the committed ones of the same name:
// the same graph, buffers, decisions, offsets and output.
func TestRecorderReproduces(t *testing.T) {
	dir := os.Getenv("GGMLTRACE_RECORDED")
	if dir == "" {
		t.Skip("GGMLTRACE_RECORDED unset: scripts/record-traces.sh -check records traces there to compare")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) == 0 {
		t.Fatalf("no traces in %s", dir)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(strings.TrimSuffix(name, ".json"), func(t *testing.T) {
			got := load(t, f)
			want := load(t, filepath.Join("testdata", name))
			for _, d := range sameTrace(want, got) {
				t.Error(d)
			}
		})
	}
}

// sameTrace lists where two recordings of a case differ, prose (note,
// rules) and fields only one recorder writes aside.
func sameTrace(a, b *ggmltrace.Trace) []string {
	var diffs []string
	eq := func(what string, x, y any) {
		if !reflect.DeepEqual(x, y) {
			xs, _ := json.Marshal(x)
			ys, _ := json.Marshal(y)
			diffs = append(diffs, fmt.Sprintf("%s: committed %.300s, recorded %.300s", what, xs, ys))
		}
	}
	eq("ggml_commit", a.GGMLCommit, b.GGMLCommit)
	eq("hparams", a.HParams, b.HParams)
	eq("sched_params", a.Sched, b.Sched)
	eq("backends", a.Backends, b.Backends)
	eq("weight_buffers", a.Buffers, b.Buffers)
	eq("params", a.Params, b.Params)
	eq("number of leafs", len(a.Leafs), len(b.Leafs))
	eq("number of nodes", len(a.Nodes), len(b.Nodes))
	for i := range min(len(a.Leafs), len(b.Leafs)) {
		eq(fmt.Sprintf("leaf %d", i), a.Leafs[i], b.Leafs[i])
	}
	for i := range min(len(a.Nodes), len(b.Nodes)) {
		eq(fmt.Sprintf("node %d", i), a.Nodes[i], b.Nodes[i])
	}
	ra, rb := a.Result, b.Result
	for _, r := range []*ggmltrace.Result{&ra, &rb} {
		// Older traces leave out what moved: all of every input.
		r.Splits = append([]ggmltrace.Split(nil), r.Splits...)
		for k := range r.Splits {
			r.Splits[k].Inputs = append([]ggmltrace.SplitInput(nil), r.Splits[k].Inputs...)
			for j := range r.Splits[k].Inputs {
				if in := &r.Splits[k].Inputs[j]; in.BytesMoved == 0 {
					in.BytesMoved = in.Bytes
				}
			}
		}
		r.BytesMovedPerEval = r.BytesMoved()
		r.Wire = nil // the earlier recorder did not count the wire
		// Leaves' ops in ggml's graph copy are all NONE; not every
		// recorder writes them.
		r.SchedGraph.Leafs = append([]ggmltrace.SchedGraphNode(nil), r.SchedGraph.Leafs...)
		for k := range r.SchedGraph.Leafs {
			r.SchedGraph.Leafs[k].Op = ""
		}
	}
	eq("result", ra, rb)
	eq("output tensor", a.Output.Tensor, b.Output.Tensor)
	eq("number of output values", len(a.Output.Values), len(b.Output.Values))
	for i := range min(len(a.Output.Values), len(b.Output.Values)) {
		x, y := a.Output.Values[i], b.Output.Values[i]
		if math.Abs(x-y) > 1e-6*max(1, math.Abs(x)) {
			diffs = append(diffs, fmt.Sprintf("output value %d: committed %g, recorded %g", i, x, y))
			break
		}
	}
	return diffs
}
