package passes

import "github.com/graphc/graphc/ir"

// upgradeBackends is the third scheduling pass. Over the non-view nodes in
// graph order:
//
//   - an assigned node moves to the highest-priority backend before its
//     own that has the same buffer type, supports the op and reads every
//     source where it is ("3.upg"; e.g. CPU → BLAS, which share host
//     memory). ggml requires the same buffer type, not merely a readable
//     one, to stay cheap to check; user overrides are upgraded too.
//   - a node still unassigned (the expansion reached it only with backends
//     that do not support it) goes to the backend, among those supporting
//     it, that reads the most of its already-placed sources in place; ties
//     go to the higher priority ("3.best").
//
// Invariant established: every non-view node that some backend supports
// and that has any placed neighbour is assigned; the remaining unassigned
// tensors are views and leaves, which assign_srcs places.
//
// Mirrors pass 3 "upgrade nodes to higher prio backends with compatible
// buffer types" of ggml_backend_sched_split_graph (ggml-org/ggml
// src/ggml-backend.cpp, commit d99724f2). See testdata/upgrade_backends/.
func upgradeBackends(g *ir.Graph, pc *Context) error {
	for _, t := range g.Nodes {
		if t.Op.IsView() {
			continue
		}
		if t.Backend == -1 {
			best := -1
			for b := range g.Backends {
				if !supportsOp(pc, b, t) {
					continue
				}
				n := 0
				for _, s := range t.Src {
					placed := s.Backend != -1 || (s.ViewSrc != nil && s.ViewSrc.Backend != -1)
					if placed && bufferSupported(g, pc, s, b) {
						n++
					}
				}
				if n > best {
					best = n
					t.Backend, t.Cause = b, "3.best"
				}
			}
			if t.Backend >= 0 {
				pc.Notef(t.Pos, "%s: on %s, which reads %d of its sources in place (3.best)", t.Name, g.Backends[t.Backend].Name, best)
			}
			continue
		}
		cur := t.Backend
		for b := 0; b < cur; b++ {
			if g.Backends[b].BufferType != g.Backends[cur].BufferType || !supportsOp(pc, b, t) {
				continue
			}
			ok := true
			for _, s := range t.Src {
				if !bufferSupported(g, pc, s, b) {
					ok = false
					break
				}
			}
			if ok {
				t.Backend, t.Cause = b, "3.upg"
				pc.Notef(t.Pos, "%s: moved from %s to %s (3.upg: same buffer type, higher priority)", t.Name, g.Backends[cur].Name, g.Backends[b].Name)
				break
			}
		}
	}
	return nil
}
