package passes

import (
	"fmt"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
)

// assignBackends is the first scheduling pass: it places every tensor whose
// location is already decided by where its memory is or what it reads.
//
//   - A node with a Placement is a user override (ggml_backend_sched_set_tensor_backend):
//     cause "usr"; no later pass reassigns it (upgrade_backends may still move
//     it to a higher-priority backend of the same buffer type, as ggml does).
//   - A preallocated tensor (a weight or state, or a view of one, cpy results
//     into the KV cache included) runs on the highest-priority backend that
//     reads its buffer type and supports its op: "1.dst" ("1.vsrc" when only
//     its view source qualifies). When none does it is an error: the tensor
//     cannot move.
//   - A graph input goes to the last backend, the CPU: "1.inp".
//   - An op reading a weight directly (its first weight source, ROPE
//     excepted: its frequency tensor is too small to decide) goes where that
//     weight's buffer is read, "1.wgtN" for source N; with op offload on, a
//     weight in host memory of the CPU yields the op to the first
//     higher-priority backend whose OffloadOp wants it: "1.off".
//
// Everything else stays unassigned (Backend -1) for the later passes.
// Weights live in the buffer type of the backend their Placement names
// (default: the last backend) with ggml usage "weights", states likewise
// with usage "any". The pass also resets earlier decisions and records
// which buffer types each backend reads (ir.Backend.Reads) for Verify.
//
// Invariant established: user overrides, preallocated tensors, graph inputs
// and ops on weights have their final pass-1 backend and cause; a view of a
// weight is not itself a weight (ggml sets a view's buffer only when it is
// allocated, after scheduling).
//
// Mirrors pass 1 "assign backends to ops with pre-allocated inputs" of
// ggml_backend_sched_split_graph and ggml_backend_sched_backend_id_from_cur
// (ggml-org/ggml src/ggml-backend.cpp, commit d99724f2). See
// testdata/assign_backends/.
func assignBackends(g *ir.Graph, pc *Context) error {
	checkTarget(g, pc)
	for _, t := range g.Tensors {
		t.Backend, t.Cause = -1, ""
	}
	g.Splits, g.InputCopies = nil, nil

	for _, list := range [][]*ir.Tensor{g.Leafs, g.Nodes} {
		for _, t := range list {
			if t.Placement == "" {
				continue
			}
			b := g.BackendIndex(t.Placement)
			if b < 0 {
				return fmt.Errorf("%s: %s is placed on %q, which is not a backend of the target (%s)", t.Pos, t.Name, t.Placement, backendNames(g))
			}
			if t.Kind == ir.KindWeight || t.Kind == ir.KindState {
				continue // where its buffer is, not an override
			}
			t.Backend, t.Cause = b, "usr"
			pc.Notef(t.Pos, "%s: on %s as the user asked (usr)", t.Name, g.Backends[b].Name)
		}
	}

	// ggml assigns the leafs first, then the nodes, in graph order.
	for _, list := range [][]*ir.Tensor{g.Leafs, g.Nodes} {
		for _, t := range list {
			if t.Backend != -1 {
				continue
			}
			b, cause, why, err := backendFromCur(g, pc, t)
			if err != nil {
				return err
			}
			t.Backend, t.Cause = b, cause
			if b >= 0 {
				pc.Notef(t.Pos, "%s: on %s (%s: %s)", t.Name, g.Backends[b].Name, cause, why)
			} else if cause != "" {
				pc.Notef(t.Pos, "%s: unassigned (%s: %s)", t.Name, cause, why)
			}
		}
	}
	return nil
}

// backendFromCur mirrors ggml_backend_sched_backend_id_from_cur: the
// backend t must or should run on given what is preallocated, -1 if that
// does not decide it. cause is set even then when a weight source was found
// that no backend can use with t's op (ggml records "1.wgtN" and returns
// -1); why explains the decision for debug notes.
func backendFromCur(g *ir.Graph, pc *Context, t *ir.Tensor) (b int, cause, why string, err error) {
	if b := backendFromBuffer(g, pc, t, t); b >= 0 {
		return b, "1.dst", fmt.Sprintf("its memory is in a %s buffer", g.Backends[g.PlacedBackend(t)].BufferType), nil
	}
	if t.ViewSrc != nil {
		if b := backendFromBuffer(g, pc, t.ViewSrc, t); b >= 0 {
			return b, "1.vsrc", fmt.Sprintf("its view source %s is in a %s buffer", t.ViewSrc.Name, g.Backends[g.PlacedBackend(t.ViewSrc)].BufferType), nil
		}
	}
	if t.Preallocated() {
		bt := g.Backends[g.PlacedBackend(t)].BufferType
		return -1, "", "", fmt.Errorf("%s: %s %s lives in a %s buffer, and no backend that reads %s buffers supports %s (%s)",
			t.Pos, t.Op, t.Name, bt, bt, t.Op, backendNames(g))
	}
	last := len(g.Backends) - 1
	if t.Kind == ir.KindInput {
		return last, "1.inp", "graph inputs start on the last backend", nil
	}
	// ggml also exempts FLASH_ATTN_EXT, which graphc does not have.
	if t.Op == ops.Rope {
		return -1, "", "", nil
	}
	for i, s := range t.Src {
		if !ownsWeightBuffer(s) {
			continue
		}
		sb := backendFromBuffer(g, pc, s, t)
		if pc.Options.OpOffload && sb == last && g.Backends[g.PlacedBackend(s)].Host {
			for b := 0; b < sb; b++ {
				if supportsOp(pc, b, t) && offloadOp(pc, b, t) {
					return b, "1.off", fmt.Sprintf("weight %s is in host memory and %s wants the op", s.Name, g.Backends[b].Name), nil
				}
			}
		}
		cause := fmt.Sprintf("1.wgt%d", i)
		if sb < 0 {
			return -1, cause, fmt.Sprintf("no backend that reads weight %s supports %s", s.Name, t.Op), nil
		}
		return sb, cause, fmt.Sprintf("it reads weight %s", s.Name), nil
	}
	return -1, "", "", nil
}

// Helpers shared by the scheduling passes, each the counterpart of a ggml
// utility of ggml_backend_sched.

// checkTarget checks the backends the passes plan for and records in the
// plan which buffer types each reads (ir.Backend.Reads).
func checkTarget(g *ir.Graph, pc *Context) {
	if len(g.Backends) != len(pc.Backends) {
		pc.Fatalf(ir.Pos{File: g.Source}, "graph has %d backends, context %d", len(g.Backends), len(pc.Backends))
	}
	var bufts []string
	seen := map[string]bool{}
	for _, b := range g.Backends {
		if !seen[b.BufferType] {
			seen[b.BufferType] = true
			bufts = append(bufts, b.BufferType)
		}
	}
	for i, b := range g.Backends {
		b.Reads = nil
		for _, bt := range bufts {
			if bt != b.BufferType && supportsBuft(pc, i, bt) {
				b.Reads = append(b.Reads, bt)
			}
		}
	}
}

func backendNames(g *ir.Graph) string {
	s := ""
	for i, b := range g.Backends {
		if i > 0 {
			s += ", "
		}
		s += b.Name
	}
	return s
}

// supportsOp is ggml_backend_supports_op. A backend without a SupportsOp
// function supports every op.
func supportsOp(pc *Context, b int, t *ir.Tensor) bool {
	f := pc.Backends[b].SupportsOp
	return f == nil || f(t)
}

// supportsBuft is ggml_backend_supports_buft. A backend without a
// SupportsBufferType function reads only its own buffer type.
func supportsBuft(pc *Context, b int, name string) bool {
	be := pc.Backends[b]
	if be.SupportsBufferType == nil {
		return name == be.BufferType
	}
	return be.SupportsBufferType(name)
}

// offloadOp is ggml_backend_offload_op.
func offloadOp(pc *Context, b int, t *ir.Tensor) bool {
	f := pc.Backends[b].OffloadOp
	return f != nil && f(t)
}

// backendFromBuffer mirrors ggml_backend_sched_backend_from_buffer: the
// highest-priority backend that reads the buffer t's memory is preallocated
// in and supports op; -1 if t is not preallocated or no backend qualifies.
func backendFromBuffer(g *ir.Graph, pc *Context, t, op *ir.Tensor) int {
	p := g.PlacedBackend(t)
	if p < 0 {
		return -1
	}
	bt := g.Backends[p].BufferType
	for b := range g.Backends {
		if supportsBuft(pc, b, bt) && supportsOp(pc, b, op) {
			return b
		}
	}
	return -1
}

// bufferSupported mirrors ggml_backend_sched_buffer_supported: whether
// backend b reads t where it is now (its preallocated buffer, else the
// compute buffer of its backend or of its view source's).
func bufferSupported(g *ir.Graph, pc *Context, t *ir.Tensor, b int) bool {
	bt, ok := g.BufferTypeOf(t)
	return ok && supportsBuft(pc, b, bt)
}

// ownsWeightBuffer is ggml's `src->buffer != NULL && src->buffer->usage ==
// GGML_BACKEND_BUFFER_USAGE_WEIGHTS` at scheduling time: a weight itself,
// not a view of one (views get their buffer when allocated).
func ownsWeightBuffer(t *ir.Tensor) bool { return t.Kind == ir.KindWeight && !t.IsView() }

// setIfSupported mirrors ggml_backend_sched_set_if_supported: t goes to b
// ("2.sup") if b supports its op.
func setIfSupported(pc *Context, t *ir.Tensor, b int) bool {
	if !supportsOp(pc, b, t) {
		return false
	}
	t.Backend, t.Cause = b, "2.sup"
	return true
}
