package ggmltrace_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/graphc/graphc/ggmltrace"
	"github.com/graphc/graphc/ir"
)

// The perturbation tests edit a recorded trace (the target's answers or the
// scheduler's options), plan the edited graph, and check that graphc now
// decides as ggml's rules say it must, and that Compare reports that the
// plan no longer matches the recording.

const rpc = "RPC0[127.0.0.1:50052]"

func plan(t *testing.T, name string, edit func(tr *ggmltrace.Trace)) (*ggmltrace.Trace, *ir.Graph) {
	t.Helper()
	tr := load(t, "testdata/"+name+".json")
	if edit != nil {
		edit(tr)
	}
	g, _, err := tr.Plan("split_graph", 0)
	if err != nil {
		t.Fatal(err)
	}
	return tr, g
}

func node(t *testing.T, tr *ggmltrace.Trace, name string) *ggmltrace.Tensor {
	t.Helper()
	for _, n := range append(append([]*ggmltrace.Tensor(nil), tr.Leafs...), tr.Nodes...) {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("trace %s has no tensor %s", tr.Case, name)
	return nil
}

func tensor(t *testing.T, g *ir.Graph, name string) *ir.Tensor {
	t.Helper()
	for _, x := range append(append([]*ir.Tensor(nil), g.Leafs...), g.Nodes...) {
		if x.Name == name {
			return x
		}
	}
	t.Fatalf("graph has no tensor %s", name)
	return nil
}

// placed prints a tensor's backend and cause as "CPU 2.sup".
func placed(g *ir.Graph, x *ir.Tensor) string {
	if x.Backend < 0 {
		return "none " + x.Cause
	}
	return g.Backends[x.Backend].Name + " " + x.Cause
}

func wantPlaced(t *testing.T, g *ir.Graph, name, want string) {
	t.Helper()
	if got := placed(g, tensor(t, g, name)); got != want {
		t.Errorf("%s: got %s, want %s", name, got, want)
	}
}

// splits prints the plan's splits as "RPC0[0,2) mlp_in | CPU[2,8) fc0_add".
func splits(g *ir.Graph) string {
	var parts []string
	for _, s := range g.Splits {
		p := fmt.Sprintf("%s[%d,%d)", strings.TrimSuffix(g.Backends[s.Backend].Name, "[127.0.0.1:50052]"), s.First, s.End)
		for _, in := range s.Inputs {
			p += " " + in.Tensor.Name
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " | ")
}

func wantSplits(t *testing.T, g *ir.Graph, want string) {
	t.Helper()
	if got := splits(g); got != want {
		t.Errorf("splits:\n got %s\nwant %s", got, want)
	}
}

func wantDiffs(t *testing.T, tr *ggmltrace.Trace, g *ir.Graph, mustMention ...string) []ggmltrace.Diff {
	t.Helper()
	diffs := ggmltrace.Compare(tr, g)
	if len(diffs) == 0 {
		t.Fatal("Compare reports no differences from the unedited recording")
	}
	var all []string
	for _, d := range diffs {
		all = append(all, d.String())
	}
	text := strings.Join(all, "\n")
	for _, m := range mustMention {
		if !strings.Contains(text, m) {
			t.Errorf("differences do not mention %q:\n%s", m, text)
		}
	}
	return diffs
}

// Unsupported op: the expansion skips a node its backend cannot run, and
// the later sweeps hand it to the neighbour that can.
func TestPerturbUnsupportedOp(t *testing.T) {
	tr, g := plan(t, "mlp", func(tr *ggmltrace.Trace) {
		node(t, tr, "fc0_relu").SupportsOp[rpc] = false
	})
	wantPlaced(t, g, "fc0_relu", "CPU 2.sup") // by "expand rest up" from fc1_mm
	wantSplits(t, g, "RPC0[0,2) mlp_in | CPU[2,8) fc0_add")
	wantDiffs(t, tr, g, "node 2 fc0_relu: backend: ggml "+rpc+", graphc CPU",
		"split 1: first node: ggml 3, graphc 2", "split 1 input 0: name: ggml fc0_relu, graphc fc0_add")
}

// 3.best: a node no expanded backend supports goes to the supporting
// backend that reads most of its placed inputs in place.
func TestPerturbBest(t *testing.T) {
	tr, g := plan(t, "llama_full", func(tr *ggmltrace.Trace) {
		node(t, tr, "kq_soft_max-1").SupportsOp[rpc] = false
	})
	wantPlaced(t, g, "kq_soft_max-1", "CPU 3.best") // reads KQ_mask (CPU) in place, kq-1 (RPC) not
	wantPlaced(t, g, "kqv-1", rpc+" 2.sup")
	wantSplits(t, g, "CPU[0,1) | RPC0[1,53) inp_embd inp_pos KQ_mask | CPU[53,54) kq-1 | RPC0[54,136) kq_soft_max-1")
	wantDiffs(t, tr, g, "node 53 kq_soft_max-1: cause: ggml 2.sup, graphc 3.best", "n_splits: ggml 2, graphc 4")
}

// Pipeline parallelism: splits do not change; every split input gets
// n_copies copies and every graph input n_copies versions on its own
// backend, the input itself being version 0 and re-caused 4.cpy, as ggml's
// llama_pp recording shows.
func TestPerturbParallel(t *testing.T) {
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			_, base := plan(t, "llama_partial", nil)
			tr, g := plan(t, "llama_partial", func(tr *ggmltrace.Trace) {
				tr.Sched.Parallel = true
				tr.MaxCopies = n
			})
			if g.NCopies != n {
				t.Errorf("NCopies = %d, want %d", g.NCopies, n)
			}
			if splits(g) != splits(base) {
				t.Errorf("splits changed with n_copies %d:\n got %s\nwant %s", n, splits(g), splits(base))
			}
			for _, s := range g.Splits {
				for _, in := range s.Inputs {
					for c, cp := range in.Copies {
						want := fmt.Sprintf("%s#%s#%d", g.Backends[s.Backend].Name, in.Tensor.Name, c)
						if cp.Name != want || cp.Cause != "4.cpy" || len(in.Copies) != n {
							t.Errorf("copy %d of %s: %s %s (of %d), want %s 4.cpy", c, in.Tensor.Name, cp.Name, cp.Cause, len(in.Copies), want)
						}
					}
				}
			}
			var gi []string
			for _, in := range g.InputCopies {
				gi = append(gi, in.Tensor.Name)
				if in.Copies[0] != in.Tensor || len(in.Copies) != n || in.Copies[n-1].Name != fmt.Sprintf("CPU#%s#%d", in.Tensor.Name, n-1) {
					t.Errorf("graph input %s: versions %v", in.Tensor.Name, in.Copies)
				}
				for _, c := range in.Copies {
					if c.Cause != "4.cpy" || c.Backend != in.Tensor.Backend {
						t.Errorf("version %s of %s: on %d, cause %s; want 4.cpy on %d", c.Name, in.Tensor.Name, c.Backend, c.Cause, in.Tensor.Backend)
					}
				}
			}
			if got, want := strings.Join(gi, " "), "inp_tokens inp_pos KQ_mask"; got != want {
				t.Errorf("graph inputs %s, want %s", got, want)
			}
			// Every node still reads copy 0 across backends.
			wantSrc(t, g, "l_out-1", "RPC0[127.0.0.1:50052]#ffn_out-1#0", "RPC0[127.0.0.1:50052]#ffn_inp-1#0")
			if g.BytesCopiedPerEval() != 6688 {
				t.Errorf("bytes copied per eval %d, want 6688 as with one copy", g.BytesCopiedPerEval())
			}
			diffs := wantDiffs(t, tr, g, fmt.Sprintf("n_copies: ggml 1, graphc %d", n),
				"leaf 2 inp_tokens: cause: ggml 1.inp, graphc 4.cpy",
				"graph_inputs_pp: ggml , graphc inp_tokens, inp_pos, KQ_mask")
			for _, d := range diffs {
				if d.What == "n_inputs_total" {
					t.Errorf("%v: the graph inputs' versions are not split inputs", d)
				}
			}
			if n == 2 {
				// llama_pp is this very edit, recorded from ggml.
				for _, d := range ggmltrace.Compare(load(t, "testdata/llama_pp.json"), g) {
					t.Errorf("against llama_pp: %v", d)
				}
			}
		})
	}
}

func wantSrc(t *testing.T, g *ir.Graph, node string, want ...string) {
	t.Helper()
	var got []string
	for _, s := range tensor(t, g, node).Src {
		got = append(got, s.Name)
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("%s reads %v, want %v", node, got, want)
	}
}

// Op offload: a matmul on a CPU host weight is offloaded to the GPU that
// asks for it (1.off); the GPU split then starts anew at each CPU weight
// it must copy, so the memory of weights copied before can be reused.
func TestPerturbOpOffload(t *testing.T) {
	edit := func(offload bool) func(tr *ggmltrace.Trace) {
		return func(tr *ggmltrace.Trace) {
			tr.Sched.OpOffload = offload
			node(t, tr, "fc1_mm").OffloadOp[rpc] = true
			node(t, tr, "fc2_mm").OffloadOp[rpc] = true
		}
	}
	// Without op_offload the backends' wishes are not asked.
	tr, g := plan(t, "mlp", edit(false))
	if d := ggmltrace.Compare(tr, g); len(d) != 0 {
		t.Errorf("offload_op answered without op_offload: %v", d)
	}

	tr, g = plan(t, "mlp", edit(true))
	wantPlaced(t, g, "fc1_mm", rpc+" 1.off")
	wantPlaced(t, g, "fc1_add", "CPU 1.wgt1") // RPC does not want the add
	wantPlaced(t, g, "fc1_gelu", rpc+" 2.sup")
	wantPlaced(t, g, "fc2_mm", rpc+" 1.off")
	wantSplits(t, g, "RPC0[0,3) mlp_in | RPC0[3,4) fc1.weight | CPU[4,5) fc1_mm | RPC0[5,6) fc1_add | RPC0[6,7) fc2.weight | CPU[7,8) fc2_mm")
	wantSrc(t, g, "fc1_mm", "RPC0[127.0.0.1:50052]#fc1.weight#0", "fc0_relu")
	wantDiffs(t, tr, g, "node 3 fc1_mm: cause: ggml 1.wgt0, graphc 1.off")
}

// A user override (ggml_backend_sched_set_tensor_backend) is kept (usr)
// and the later passes plan around it; a tensor is copied to a backend at
// most once per graph, later splits on that backend reuse the copy.
func TestPerturbUserOverride(t *testing.T) {
	tr, g := plan(t, "llama_full", func(tr *ggmltrace.Trace) {
		node(t, tr, "kq_soft_max-1").UserOverride = json.RawMessage(`"CPU"`)
		node(t, tr, "kq_soft_max-2").UserOverride = json.RawMessage(`{"backend": "CPU"}`)
	})
	wantPlaced(t, g, "kq_soft_max-1", "CPU usr")
	wantPlaced(t, g, "kq_soft_max-2", "CPU usr")
	wantSplits(t, g, "CPU[0,1) | RPC0[1,53) inp_embd inp_pos KQ_mask | CPU[53,54) kq-1 | RPC0[54,86) kq_soft_max-1 | CPU[86,87) kq-2 | RPC0[87,136) kq_soft_max-2")
	seen := map[string]bool{}
	for _, s := range g.Splits {
		for _, in := range s.Inputs {
			k := fmt.Sprint(in.Tensor.Name, s.Backend)
			if seen[k] {
				t.Errorf("%s copied to backend %d twice", in.Tensor.Name, s.Backend)
			}
			seen[k] = true
		}
	}
	wantDiffs(t, tr, g, "node 53 kq_soft_max-1: cause: ggml 2.sup, graphc usr")
}

// A leaf that is neither preallocated nor an input follows its first
// consumer (4.cur) and needs no copy there.
func TestPerturbLeafFollowsConsumer(t *testing.T) {
	tr, g := plan(t, "llama_full", func(tr *ggmltrace.Trace) {
		node(t, tr, "KQ_mask").Flags = nil
	})
	wantPlaced(t, g, "KQ_mask", rpc+" 4.cur")
	wantSplits(t, g, "CPU[0,1) | RPC0[1,136) inp_embd inp_pos")
	wantDiffs(t, tr, g, "leaf 13 KQ_mask: cause: ggml 1.inp, graphc 4.cur", "bytes_copied_per_eval: ggml 2592, graphc 2080")
}

// A backend that cannot read the CPU's weights is never given their 1.dst
// even when it ranks higher; BLAS, sharing the CPU's buffer type, is.
func TestPerturbBufferType(t *testing.T) {
	tr, g := plan(t, "blas_upg", func(tr *ggmltrace.Trace) {
		tr.Backends[1].SupportsBuft["CPU"] = false // BLAS no longer reads host buffers
	})
	wantPlaced(t, g, "w0.weight", "CPU 1.dst")
	wantPlaced(t, g, "mm0", "CPU 1.wgt0")
	wantPlaced(t, g, "gram", "CPU 2.sup") // no upgrade: BLAS cannot read relu0
	wantSplits(t, g, "CPU[0,6)")
	wantDiffs(t, tr, g, "n_splits: ggml 4, graphc 1")
}

// Compare reports exactly the decisions that differ.
func TestCompareReportsEachDecision(t *testing.T) {
	tr, g := plan(t, "llama_partial", nil)
	tensor(t, g, "kqv-2").Cause = "3.best"
	g.Splits[2].Inputs[0].Copies[0].Name = "CPU#norm_out#1"
	g.Splits[1].End--
	got := ggmltrace.Compare(tr, g)
	want := []string{
		"node 87 kqv-2: cause: ggml 2.sup, graphc 3.best",
		"node 134 result_norm: sources after scheduling: ggml CPU#norm_out#0, output_norm.weight, graphc CPU#norm_out#1, output_norm.weight",
		"split 1: end: ggml 134, graphc 133",
		"split 2 input 0 norm_out: copies: ggml CPU#norm_out#0 4.cpy, graphc CPU#norm_out#1 4.cpy",
	}
	var gs []string
	for _, d := range got {
		gs = append(gs, d.String())
	}
	if strings.Join(gs, "\n") != strings.Join(want, "\n") {
		t.Errorf("Compare:\n%s\nwant:\n%s", strings.Join(gs, "\n"), strings.Join(want, "\n"))
	}
}

// Graph refuses a trace whose recorded layout graphc would infer
// differently, rather than planning a different graph.
func TestGraphChecksLayout(t *testing.T) {
	tr := load(t, "testdata/mlp.json")
	node(t, tr, "fc0_mm").Ne[0] = 65
	_, _, _, err := tr.Graph()
	if err == nil || !strings.Contains(err.Error(), "graphc infers ne [64 4 1 1]") {
		t.Errorf("Graph: %v, want a layout mismatch", err)
	}
}

// Adding a BLAS backend in front of the CPU (they share host memory): every
// preallocated leaf and every view of the KV cache goes to BLAS (1.dst: the
// highest-priority backend that reads host memory and accepts NONE/VIEW),
// while the cpy into the cache, which BLAS cannot run, stays on the CPU; no
// matmul is big enough for BLAS, so all ops run on the CPU in one split
// with no copies (testdata/README.md, item 3).
func TestPerturbAddBLAS(t *testing.T) {
	_, g := plan(t, "llama_cpu", func(tr *ggmltrace.Trace) {
		cpu := tr.Backends[0]
		blas := cpu
		blas.Name, blas.Kind, blas.Device, blas.DeviceType = "BLAS", "BLAS", "BLAS", "ACCEL"
		tr.Backends = []ggmltrace.Backend{blas, cpu}
		for _, n := range tr.Nodes {
			ok := n.IsViewOp
			if n.Op == "MUL_MAT" {
				src1 := node(t, tr, *n.Src[1])
				ok = n.Ne[0] >= 32 && n.Ne[1] >= 32 && src1.Ne[0] >= 32
			}
			n.SupportsOp["BLAS"] = ok
			n.OffloadOp["BLAS"] = false
		}
	})
	wantPlaced(t, g, "token_embd.weight", "BLAS 1.dst")
	wantPlaced(t, g, "cache_k_l0", "BLAS 1.dst")
	wantPlaced(t, g, "k_cache_view-0", "BLAS 1.dst")
	wantPlaced(t, g, "k-0", "BLAS 1.dst")
	wantPlaced(t, g, "k_cache_cpy-0", "CPU 1.dst")
	wantPlaced(t, g, "inp_embd", "CPU 1.wgt0")
	wantPlaced(t, g, "Kcur-0", "CPU 1.wgt0")
	wantSplits(t, g, "CPU[0,136)")
}
