package planview

import (
	"fmt"
	"strings"

	"github.com/graphc/graphc/ir"
)

// backendColors fill each backend's split clusters, in target order.
var backendColors = []string{"#cfe2ff", "#d1e7dd", "#fff3cd", "#f8d7da", "#e2d9f3", "#cff4fc"}

// Dot renders the plan as a Graphviz graph: one cluster per split, coloured
// by backend, with a dashed cluster per parallel region; nodes with op,
// shape and buffer offset; leaves (weights, state, inputs) outside the
// clusters; copies between backends as bold edges labelled with their
// bytes.
func Dot(g *ir.Graph) string {
	var b strings.Builder
	id := func(t *ir.Tensor) string { return fmt.Sprintf("t%d", t.ID) }
	color := func(be int) string {
		if be < 0 {
			return "white"
		}
		return backendColors[be%len(backendColors)]
	}
	fmt.Fprintf(&b, "digraph plan {\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=9];\n")
	fmt.Fprintf(&b, "  label=%q; labelloc=t;\n", fmt.Sprintf("%s — %d splits, %d bytes copied per evaluation", g.Source, len(g.Splits), g.BytesCopiedPerEval()))
	for _, t := range g.Leafs {
		shape := "note"
		if t.Kind == ir.KindInput {
			shape = "invhouse"
		}
		be := ""
		if t.Backend >= 0 {
			be = "\\n@" + g.Backends[t.Backend].Name
		}
		fmt.Fprintf(&b, "  %s [shape=%s, fillcolor=%q, label=\"%s\\n%s%s%s\"];\n", id(t), shape, color(t.Backend), esc(t.Name), t.Type, esc(t.ShapeString()), be)
	}
	for k, s := range g.Splits {
		be := g.Backends[s.Backend]
		fmt.Fprintf(&b, "  subgraph cluster_split%d {\n    label=%q; style=filled; fillcolor=%q; color=gray;\n", k, fmt.Sprintf("split %d: %s", k, be.Name), color(s.Backend))
		for _, in := range s.Inputs {
			for _, c := range in.Copies {
				fmt.Fprintf(&b, "    %s [shape=cds, fillcolor=white, label=\"%s\\n%d bytes\"];\n", id(c), esc(c.Name), in.Tensor.MaxBytes())
			}
		}
		for i := s.First; i < s.End; i++ {
			t := g.Nodes[i]
			r := g.RegionOf(i)
			if r != nil && r.First == i {
				fmt.Fprintf(&b, "    subgraph cluster_region%d {\n      label=%q; style=dashed; color=gray40;\n", i, "parallel region over "+r.Units.String())
			}
			where := ""
			if t.Alloc.Kind == ir.AllocCompute {
				where = fmt.Sprintf("\\n%s+%d", g.Buffers[t.Alloc.Buffer].BufferType, t.Alloc.Offset)
			}
			style := "rounded,filled"
			if t.Op.IsView() {
				style = "rounded,dashed,filled"
			}
			fmt.Fprintf(&b, "    %s [style=%q, fillcolor=white, label=\"%s\\n%s %s%s\\n%s%s\"];\n", id(t), style, esc(t.Name), t.Op, t.Type, esc(t.ShapeString()), t.Cause, where)
			if r != nil && r.End-1 == i {
				b.WriteString("    }\n")
			}
		}
		b.WriteString("  }\n")
	}
	for _, s := range g.Splits {
		for _, in := range s.Inputs {
			for _, c := range in.Copies {
				fmt.Fprintf(&b, "  %s -> %s [style=bold, color=red, label=\"%d B\"];\n", id(in.Tensor), id(c), in.Tensor.MaxBytes())
			}
		}
	}
	for _, t := range g.Nodes {
		for _, s := range t.Src {
			fmt.Fprintf(&b, "  %s -> %s;\n", id(s), id(t))
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func esc(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) }
