package planview

import (
	"fmt"
	"strings"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/passes"
)

// DebugReport explains a plan in the spirit of GGML_SCHED_DEBUG=2: each
// split with its backend and inputs, each node with op, size, backend and
// cause, and its sources with theirs.
func DebugReport(g *ir.Graph) string {
	var b strings.Builder
	where := func(t *ir.Tensor) string {
		be := "-"
		if t.Backend >= 0 && t.Backend < len(g.Backends) {
			be = g.Backends[t.Backend].Name
		}
		return fmt.Sprintf("%s (%s) [%s %s]", t.Name, kib(t.MaxBytes()), be, t.Cause)
	}
	for k, s := range g.Splits {
		var ins []string
		for _, in := range s.Inputs {
			ins = append(ins, fmt.Sprintf("%s (%s)", in.Tensor.Name, kib(in.Tensor.MaxBytes())))
		}
		fmt.Fprintf(&b, "\n## SPLIT #%d: %s # %d inputs", k, g.Backends[s.Backend].Name, len(s.Inputs))
		if len(ins) > 0 {
			fmt.Fprintf(&b, ": [%s]", strings.Join(ins, ", "))
		}
		b.WriteString("\n")
		for i := s.First; i < s.End; i++ {
			t := g.Nodes[i]
			if r := g.RegionOf(i); r != nil && r.First == i {
				fmt.Fprintf(&b, "## REGION over %s: nodes #%d..#%d, one part per thread, no barrier\n", r.Units, r.First, r.End-1)
			}
			fmt.Fprintf(&b, "node #%3d (%10s): %s:", i, t.Op.GGMLName(), where(t))
			for _, src := range t.Src {
				fmt.Fprintf(&b, " %s", where(src))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func kib(n int64) string { return fmt.Sprintf("%4dK", n/1024) }

// Notes renders the passes' explanations of their decisions (collected at
// debug level 1, passes.Context.Notef), one line each after a heading, or
// "" when there are none.
func Notes(diags []passes.Diag) string {
	if len(diags) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## pass notes\n")
	for _, d := range diags {
		fmt.Fprintf(&b, "%s: %s: %s\n", d.Pos, d.Pass, d.Msg)
	}
	return b.String()
}
