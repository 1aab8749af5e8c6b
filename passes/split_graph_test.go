package passes_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/passes"
	"github.com/graphc/graphc/tensor"
)

func TestSplitGraph(t *testing.T) {
	runGolden(t, "split_graph", []goldenCase{{
		name: "mlp",
		doc:  "Two splits; each copies in what it reads from the other backend (4.cpy) and its nodes read the copy.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}},
		build: func(b *builder) {
			mlp(b, "gpu", "", 32, 4)
		},
	}, {
		name: "input_copied_once",
		doc:  "x is copied to the GPU once, by the first GPU split; the later GPU split reads the same copy.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}},
		build: func(b *builder) {
			x := b.input("x", tensor.F32, 64, 4)
			h := b.mulMat("a", b.weight("gpu", "w0", 64, 64), x)
			h = b.on("cpu", b.unary(ops.Relu, "b", h))
			h = b.mulMat("c", b.weight("gpu", "w1", 64, 64), h)
			b.out(b.add("d", h, x))
		},
	}, {
		name: "weight_starts_split",
		doc:  "Every op is offloaded to the GPU but its weights stay in host memory: a GPU split that already has inputs ends at each op needing another CPU weight, so the memory of the weights copied before can be reused.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}, OpOffload: true},
		build: func(b *builder) {
			mlp(b, "", "", 32, 32)
		},
	}, {
		name: "inputs_full",
		doc:  fmt.Sprintf("A GPU split reading 31 CPU inputs: its input list is full at %d, so the node needing the 31st starts a new split on the same backend.", passes.MaxSplitInputs),
		opts: caseOptions{Backends: []string{"gpu", "cpu"}},
		build: func(b *builder) {
			h := b.mulMat("n0", b.weight("gpu", "w", 64, 64), b.input("in0", tensor.F32, 64, 4))
			for k := 1; k <= passes.MaxSplitInputs; k++ {
				h = b.add(fmt.Sprintf("n%d", k), h, b.input(fmt.Sprintf("in%d", k), tensor.F32, 64, 4))
			}
			b.out(h)
		},
	}, {
		name: "inputs_overfull",
		doc:  fmt.Sprintf("A node adding two inputs to a split holding %d overfills the list, which doubles: the split then takes more inputs without splitting.", passes.MaxSplitInputs-1),
		opts: caseOptions{Backends: []string{"gpu", "cpu"}},
		build: func(b *builder) {
			in := func(k int) *ir.Tensor { return b.input(fmt.Sprintf("in%d", k), tensor.F32, 64, 4) }
			h := b.mulMat("n0", b.weight("gpu", "w", 64, 64), in(0))
			k := 1
			for ; k < passes.MaxSplitInputs-1; k++ {
				h = b.add(fmt.Sprintf("n%d", k), h, in(k))
			}
			pair := b.add("pair", in(k), in(k+1))
			h = b.add("joined", h, pair)
			b.out(b.add("last", h, in(k+2)))
		},
	}, {
		name: "n_copies",
		doc:  "Pipeline parallelism with 3 copies: the splits are unchanged; every split input gets 3 copies (nodes read copy 0) and every graph input a node reads 3 versions on its own backend, the input itself first.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}, NCopies: 3},
		build: func(b *builder) {
			mlp(b, "gpu", "", 32, 4)
		},
	}, {
		name: "views_in_split",
		doc:  "A KV cache in host memory with the layer on the GPU: the cache's views stay on the CPU inside the GPU split (view ops do not split), the GPU copies the views it reads, and the cpy into the cache runs on the CPU.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}},
		build: func(b *builder) {
			attention(b, "gpu", "")
		},
	}, {
		name: "shared_buffer_type",
		doc:  "BLAS and the CPU share host memory: their splits alternate without copies; the GPU's and the CPU's do not.",
		opts: caseOptions{Backends: []string{"gpu", "blas", "cpu"}},
		build: func(b *builder) {
			x := b.input("x_in", tensor.F32, 64, 32)
			gpu := b.mulMat("gpu_mm", b.weight("gpu", "w_gpu", 64, 64), x)
			b.out(b.add("gpu_add", gpu, b.weight("", "b_cpu", 64)))
			h := b.mulMat("mm0", b.weight("", "w0", 64, 64), x)
			h = b.add("add0", h, b.weight("", "b0", 64))
			h = b.unary(ops.Relu, "relu0", h)
			b.out(b.mulMat("gram", h, h))
		},
	}, {
		name: "uma_reads_host",
		doc:  "An integrated GPU reads host memory in place: it takes the CPU's weights and their ops too (the highest-priority backend reading their buffer), and reads the input without a copy; the CPU cannot read the GPU's buffer and copies add.",
		opts: caseOptions{Backends: []string{"uma", "cpu"}},
		build: func(b *builder) {
			x := b.input("x", tensor.F32, 64, 4)
			h := b.mulMat("mm", b.weight("uma", "w_uma", 64, 64), x)
			h = b.add("add", h, b.weight("", "b_cpu", 64))
			b.out(b.on("cpu", b.unary(ops.Relu, "relu", h)))
		},
	}, {
		name: "expert_copies",
		doc:  "Experts in host memory, their products offloaded (1.off): each mul_mat_id starts a split (it reads a weight the GPU cannot, and the split has inputs) whose first input, the experts, is an expert copy: at run time only the experts the ids name are copied.",
		opts: caseOptions{Backends: []string{"sim0", "cpu"}, OpOffload: true},
		build: func(b *builder) {
			moe(b, "sim0", "", 32)
		},
	}, {
		name: "expert_copies_ids_copied",
		doc:  "The ids are computed on the CPU (argsort placed there): the first expert split copies them in after the experts, so its expert copy reads them from the CPU's original; the later splits read the copy already made.",
		opts: caseOptions{Backends: []string{"sim0", "cpu"}, OpOffload: true},
		build: func(b *builder) {
			moe(b, "sim0", "", 32)
			for _, t := range b.g.Tensors {
				if t.Name == "ffn_moe_argsort" {
					t.Placement = "cpu"
				}
			}
		},
	}, {
		name: "expert_copies_router_offloaded",
		doc:  "The router's weight in host memory too: its mul_mat is offloaded and copies the weight whole (a mul_mat, not a mul_mat_id); the experts' splits copy only the used experts.",
		opts: caseOptions{Backends: []string{"sim0", "cpu"}, OpOffload: true},
		build: func(b *builder) {
			moe(b, "", "", 32)
		},
	}, {
		name: "experts_on_cpu_small_batch",
		doc:  "Below the offload batch the products run on the CPU with the experts, which copy nothing: the ids come to the CPU in an ordinary copy.",
		opts: caseOptions{Backends: []string{"sim0", "cpu"}, OpOffload: true},
		build: func(b *builder) {
			moe(b, "sim0", "", 4)
		},
	}})
}

// TestVerifyCatchesMissingCopy: once split_graph ran, ir.Verify rejects a
// node that reads another backend's memory its backend cannot read.
func TestVerifyCatchesMissingCopy(t *testing.T) {
	c := goldenCase{opts: caseOptions{Backends: []string{"gpu", "cpu"}}, build: func(b *builder) { mlp(b, "gpu", "", 32, 4) }}
	g, _, _, err := c.plan(t, "split_graph")
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Verify(); err != nil {
		t.Fatalf("Verify after split_graph: %v", err)
	}
	fc1 := g.Nodes[3]
	if fc1.Src[1].Kind != ir.KindCopy {
		t.Fatalf("%s reads %s, want a copy", fc1.Name, fc1.Src[1].Name)
	}
	fc1.Src[1] = fc1.Src[1].CopyOf
	err = g.Verify()
	if err == nil || !strings.Contains(err.Error(), "node fc1_mm on cpu reads fc0_relu from backend 0 (buffer type \"gpu\") without a copy") {
		t.Errorf("Verify = %v, want the missing copy reported", err)
	}
}

// TestSplitGraphAlone runs split_graph on assignments made by hand, not by
// the earlier passes: the split rules depend on the assignments only.
func TestSplitGraphAlone(t *testing.T) {
	b := &builder{t: t, g: ir.NewGraph("test.g")}
	x := b.input("x", tensor.F32, 64, 4)
	h := b.unary(ops.Relu, "r0", x)
	h = b.unary(ops.Relu, "r1", h)
	h = b.op(ops.Reshape, "r1_3d", ir.Args{Ne: dims([]int64{16, 4, 4})}, h)
	b.out(b.unary(ops.Relu, "r2", h))
	g := b.g
	pc := &passes.Context{Backends: []*passes.Backend{fakeBackend("gpu", nil), fakeBackend("cpu", nil)}}
	for _, be := range pc.Backends {
		g.Backends = append(g.Backends, &be.Backend)
	}
	for i, t := range []*ir.Tensor{x, g.Nodes[0], g.Nodes[1], g.Nodes[2], g.Nodes[3]} {
		t.Backend = []int{1, 0, 1, 1, 0}[i]
	}
	if err := passes.SplitGraph(g, pc); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range g.Splits {
		p := fmt.Sprintf("%s[%d,%d)", g.Backends[s.Backend].Name, s.First, s.End)
		for _, in := range s.Inputs {
			p += " " + in.Copies[0].Name
		}
		got = append(got, p)
	}
	// r2 on the gpu reads the view r1_3d of r1 on the cpu: copied.
	want := "gpu[0,1) gpu#x#0 | cpu[1,3) cpu#r0#0 | gpu[3,4) gpu#r1_3d#0"
	if strings.Join(got, " | ") != want {
		t.Errorf("splits %s, want %s", strings.Join(got, " | "), want)
	}
	if err := g.Verify(); err != nil {
		t.Error(err)
	}
}
