package planview

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// MemoryRow is one buffer type's memory under a plan, as -fit measured it.
type MemoryRow struct {
	Device                  string // the backends sharing the buffer type, e.g. "blas+cpu"
	Weights, State, Compute int64
	Budget                  int64 // 0: none
	Usable                  int64 // the budget less -fit's margin
}

// MemoryTable renders a per-device memory table like llama.cpp's --fit
// report: what the plan puts on each device against its budget.
func MemoryTable(rows []MemoryRow) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "device\tweights\tstate\tcompute\ttotal\tbudget\tusable\tfree\t")
	for _, r := range rows {
		total := r.Weights + r.State + r.Compute
		budget, usable, free := "-", "-", "-"
		if r.Budget > 0 {
			budget, usable, free = bytesText(r.Budget), bytesText(r.Usable), bytesText(r.Usable-total)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Device, bytesText(r.Weights), bytesText(r.State), bytesText(r.Compute), bytesText(total), budget, usable, free)
	}
	w.Flush()
	return b.String()
}

// bytesText is a byte count short enough for a table column.
func bytesText(n int64) string {
	sign := ""
	if n < 0 {
		sign, n = "-", -n
	}
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%s%.2f GiB", sign, float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%s%.2f MiB", sign, float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%s%.2f KiB", sign, float64(n)/(1<<10))
	}
	return fmt.Sprintf("%s%d B", sign, n)
}
