package passes

import (
	"fmt"

	"github.com/graphc/graphc/ir"
)

// assignSrcs is the fourth scheduling pass. Over all nodes in graph order,
// views included:
//
//   - an unassigned view goes where its view source is ("4.vsrc");
//   - each unassigned source of the node goes where its own view source is
//     if it is a view ("4.vsrc"), else where the node is ("4.cur": leaves
//     that are neither weights nor inputs follow their first consumer);
//   - a node still unassigned goes to the first backend that supports it
//     ("2.sup", as ggml records it).
//
// It is an error, with the node's position, when no backend supports a node
// left for this pass.
//
// Invariant established: every node and every source of a node has a
// backend; split_graph needs nothing else.
//
// Mirrors pass 4 "assign backends to remaining src from dst and view_src"
// of ggml_backend_sched_split_graph (ggml-org/ggml src/ggml-backend.cpp,
// commit d99724f2). See testdata/assign_srcs/.
func assignSrcs(g *ir.Graph, pc *Context) error {
	for _, t := range g.Nodes {
		if t.ViewSrc != nil && t.Backend == -1 {
			t.Backend, t.Cause = t.ViewSrc.Backend, "4.vsrc"
			if t.Backend >= 0 {
				pc.Notef(t.Pos, "%s: on %s with its view source %s (4.vsrc)", t.Name, g.Backends[t.Backend].Name, t.ViewSrc.Name)
			}
		}
		for _, s := range t.Src {
			if s.Backend != -1 {
				continue
			}
			if s.ViewSrc != nil {
				s.Backend, s.Cause = s.ViewSrc.Backend, "4.vsrc"
			} else {
				s.Backend, s.Cause = t.Backend, "4.cur"
			}
			if s.Backend >= 0 {
				pc.Notef(s.Pos, "%s: on %s with %s (%s)", s.Name, g.Backends[s.Backend].Name, t.Name, s.Cause)
			}
		}
		for b := 0; b < len(g.Backends) && t.Backend == -1; b++ {
			if setIfSupported(pc, t, b) {
				pc.Notef(t.Pos, "%s: on %s, the first backend that supports %s (2.sup)", t.Name, g.Backends[b].Name, t.Op)
			}
		}
		if t.Backend == -1 {
			return fmt.Errorf("%s: no backend supports %s %s%s (%s)", t.Pos, t.Op, t.Name, t.ShapeString(), backendNames(g))
		}
	}
	return nil
}
