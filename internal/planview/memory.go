package planview

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
)

// MemoryRow is one buffer type's memory under a plan, as -fit measured it.
type MemoryRow struct {
	Device                  string // the backends sharing the buffer type, e.g. "blas+cpu"
	Weights, State, Compute int64
	Packed                  int64 // packed copies of weights (pack_weights)
	Budget                  int64 // 0: none
	Usable                  int64 // the budget less -fit's margin
}

// MemoryTable renders a per-device memory table like llama.cpp's --fit
// report: what the plan puts on each device against its budget. A
// "packed" column follows the weights when some device packs weights.
func MemoryTable(rows []MemoryRow) string {
	packs := false
	for _, r := range rows {
		packs = packs || r.Packed > 0
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	line := func(cols ...string) { fmt.Fprintln(w, strings.Join(cols, "\t")+"\t") }
	head := []string{"device", "weights", "state", "compute", "total", "budget", "usable", "free"}
	if packs {
		head = slices.Insert(head, 2, "packed")
	}
	line(head...)
	for _, r := range rows {
		total := r.Weights + r.Packed + r.State + r.Compute
		budget, usable, free := "-", "-", "-"
		if r.Budget > 0 {
			budget, usable, free = bytesText(r.Budget), bytesText(r.Usable), bytesText(r.Usable-total)
		}
		cols := []string{r.Device, bytesText(r.Weights), bytesText(r.State), bytesText(r.Compute), bytesText(total), budget, usable, free}
		if packs {
			cols = slices.Insert(cols, 2, bytesText(r.Packed))
		}
		line(cols...)
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
