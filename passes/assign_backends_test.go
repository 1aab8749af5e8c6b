package passes_test

import (
	"testing"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

func TestAssignBackends(t *testing.T) {
	runGolden(t, "assign_backends", []goldenCase{{
		name: "weights_and_inputs",
		doc:  "Weights and their ops go where the weights are (1.dst, 1.wgtN for the weight's operand index); the input goes to the last backend (1.inp); ops without weights wait.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}},
		build: func(b *builder) {
			mlp(b, "gpu", "", 32, 4)
		},
	}, {
		name: "kv_cache",
		doc:  "Views of the KV cache and the cpy writing into it are preallocated: 1.dst on the cache's backend. Views of computed tensors wait for assign_srcs.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}},
		build: func(b *builder) {
			attention(b, "gpu", "gpu")
		},
	}, {
		name: "rope_exception",
		doc:  "ROPE never follows a weight it reads (its frequency tensor is too small to decide); mul_mat does.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}},
		build: func(b *builder) {
			w := b.weight("gpu", "rot.weight", 16, 4, 8)
			pos := b.input("pos", tensor.I32, 8)
			b.out(b.op(ops.Rope, "roped", ir.Args{Params: ops.RopeParams{NDims: 16, FreqBase: 10000, FreqScale: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}}, w, pos))
			b.out(b.mulMat("mm", w, b.input("x", tensor.F32, 16, 2, 8)))
		},
	}, {
		name: "host_weights_blas",
		doc:  "Host-memory weights go to the highest-priority backend that reads host memory and supports the op: BLAS for leaves and big matmuls, the CPU for the rest. The GPU cannot read them.",
		opts: caseOptions{Backends: []string{"gpu", "blas", "cpu"}},
		build: func(b *builder) {
			mlp(b, "", "", 64, 32)
		},
	}, {
		name: "user_override",
		doc:  "A node or input with a placement is a user override (usr), kept as is; a weight's placement only says where its buffer is.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}},
		build: func(b *builder) {
			x := b.on("gpu", b.input("x", tensor.F32, 32, 4))
			h := b.on("cpu", b.mulMat("mm", b.weight("gpu", "w", 32, 64), x))
			b.out(b.on("gpu", b.unary(ops.Relu, "relu", h)))
		},
	}, {
		name: "op_offload",
		doc:  "With op_offload, an op on a CPU host weight goes to the first higher-priority backend that wants it (1.off: the GPU takes matmuls and adds over 32 tokens or more).",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}, OpOffload: true},
		build: func(b *builder) {
			mlp(b, "", "", 32, 32)
		},
	}, {
		name: "op_offload_small_batch",
		doc:  "With op_offload, a batch below the GPU's threshold stays with the weights (1.wgtN).",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}, OpOffload: true},
		build: func(b *builder) {
			mlp(b, "", "", 32, 4)
		},
	}, {
		name: "weight_no_backend",
		doc:  "An op on a weight that no backend reading the weight's buffer supports: ggml records 1.wgt0 and leaves the op unassigned for the later passes.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}, Reject: map[string][]string{"gpu": {"mul_mat"}}},
		build: func(b *builder) {
			b.out(b.mulMat("mm", b.weight("gpu", "w", 32, 64), b.input("x", tensor.F32, 32, 4)))
		},
	}, {
		name: "error_prealloc_unsupported",
		doc:  "A cpy into a GPU KV cache that the GPU cannot run: the cache cannot move, so this is an error.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}, Reject: map[string][]string{"gpu": {"cpy"}}},
		build: func(b *builder) {
			attention(b, "gpu", "gpu")
		},
	}, {
		name: "error_unknown_placement",
		doc:  "A weight placed on a backend the target does not have.",
		opts: caseOptions{Backends: []string{"gpu", "cpu"}},
		build: func(b *builder) {
			mlp(b, "tpu", "", 32, 4)
		},
	}, {
		name: "op_offload_mul_mat_id",
		doc:  "ggml-cuda's batch of a mul_mat_id is its ne[2], the tokens (not ne[1], the experts each token uses): with 32 tokens the simulated GPU takes the products on the host experts (1.off).",
		opts: caseOptions{Backends: []string{"sim0", "cpu"}, OpOffload: true},
		build: func(b *builder) {
			moe(b, "sim0", "", 32)
		},
	}, {
		name: "op_offload_mul_mat_id_small_batch",
		doc:  "With 31 tokens the products stay with the host experts (1.wgt0).",
		opts: caseOptions{Backends: []string{"sim0", "cpu"}, OpOffload: true},
		build: func(b *builder) {
			moe(b, "sim0", "", 31)
		},
	}})
}
