package planview

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/graphc/graphc/passes"
)

// StrategyEstimate is one placement strategy's plan, priced split by split.
type StrategyEstimate struct {
	Strategy string
	Splits   []passes.SplitEstimate
}

// EstimateTable renders the estimates of several strategies' plans for
// the same model, split by split, then their totals against the first.
func EstimateTable(model string, plans []StrategyEstimate) string {
	var b strings.Builder
	fmt.Fprintf(&b, "estimated evaluation time (cost model: %s)\n", model)
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "strategy\tsplit\tbackend\tnodes\tcompute\tcopied\tcopies\tsync\ttotal\t")
	for _, p := range plans {
		for k, s := range p.Splits {
			fmt.Fprintf(w, "%s\t%d\t%s\t%d\t%s\t%d B\t%s\t%s\t%s\t\n", p.Strategy, k, s.Backend, s.Nodes, micros(s.ComputeNs), s.CopyBytes, micros(s.CopyNs), micros(s.SplitNs), micros(s.Total()))
		}
	}
	w.Flush()
	var base float64
	for i, p := range plans {
		total, bytes := passes.TotalNs(p.Splits), int64(0)
		for _, s := range p.Splits {
			bytes += s.CopyBytes
		}
		fmt.Fprintf(&b, "%s: %s, %d splits, %d bytes copied per evaluation", p.Strategy, micros(total), len(p.Splits), bytes)
		if i == 0 {
			base = total
		} else if base > 0 {
			fmt.Fprintf(&b, " (%+.1f%% against %s)", 100*(total-base)/base, plans[0].Strategy)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func micros(ns float64) string { return fmt.Sprintf("%.1f µs", ns/1000) }
