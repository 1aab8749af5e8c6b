package passes

import "github.com/graphc/graphc/ir"

// expandBackends is the second scheduling pass: it spreads the assignments
// of pass 1 to unassigned neighbouring nodes, in four sweeps over the nodes
// in graph order, skipping view ops (VIEW, RESHAPE, PERMUTE, TRANSPOSE):
//
//  1. "gpu down": each non-CPU assignment carries forward to the unassigned
//     nodes after it, until the next assigned node (a CPU node stops it);
//  2. "gpu up": the same backwards;
//  3. "rest down" and 4. "rest up": every assignment, the CPU's included,
//     carries forward, then backwards.
//
// A node only takes the carried backend if that backend supports its op
// ("2.sup"); otherwise it stays unassigned and the carried backend keeps
// going, so that upgrade_backends can place it once its inputs' locations
// are known. Expanding the non-CPU backends first means the CPU only runs
// what its weights, or the lack of any other candidate, put there.
//
// Invariant established: a non-view node is unassigned only if no backend
// reached by the sweeps supports it (or the graph has no assignment at all).
//
// Mirrors pass 2 "expand current backend assignments" of
// ggml_backend_sched_split_graph (ggml-org/ggml src/ggml-backend.cpp,
// commit d99724f2). See testdata/expand_backends/.
func expandBackends(g *ir.Graph, pc *Context) error {
	cpu := len(g.Backends) - 1
	sweep := func(name string, down, skipCPU bool) {
		cur := -1
		for k := range g.Nodes {
			i := k
			if !down {
				i = len(g.Nodes) - 1 - k
			}
			t := g.Nodes[i]
			if t.Op.IsView() {
				continue
			}
			switch {
			case t.Backend != -1:
				cur = t.Backend
				if skipCPU && t.Backend == cpu {
					cur = -1
				}
			case cur != -1:
				if setIfSupported(pc, t, cur) {
					pc.Notef(t.Pos, "%s: on %s by expansion %s (2.sup)", t.Name, g.Backends[cur].Name, name)
				} else {
					pc.Notef(t.Pos, "%s: expansion %s skips it: %s does not support %s", t.Name, name, g.Backends[cur].Name, t.Op)
				}
			}
		}
	}
	sweep("gpu down", true, true)
	sweep("gpu up", false, true)
	sweep("rest down", true, false)
	sweep("rest up", false, false)
	return nil
}
