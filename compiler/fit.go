package compiler

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/graphc/graphc/dsl"
	"github.com/graphc/graphc/ir"
)

// DefaultFitMargin is the share of every budget -fit keeps free. The plan's
// own sizes are exact: weights and state are known to the byte, and the
// compute buffers have static offsets, so unlike ggml's allocator nothing
// grows at run time. What the plan cannot see is the backend's own memory
// beside its buffers: a GPU driver's context and scratch, the allocator's
// rounding of each buffer, the Go heap beside host buffers. 5% covers that
// for a budget of gigabytes without wasting a small device. llama.cpp's
// --fit keeps a fixed 1 GiB free per device instead (--fit-target), which
// would leave nothing of the kilobyte budgets the examples run with.
const DefaultFitMargin = 0.05

// Fit asks Compile to choose the layer placement (Placement.Layers) that
// keeps the most layers on the highest-priority backends while every
// backend's weights, state and compute buffers fit its budget.
type Fit struct {
	// Budgets are bytes per backend name; a backend without one is
	// unlimited. Backends sharing a buffer type (cpu and blas) share the
	// smallest of their budgets.
	Budgets map[string]int64
	// Margin is the share of each budget kept free (0 to 1); negative
	// means DefaultFitMargin.
	Margin float64
}

// FitReport is what -fit chose and why it fits.
type FitReport struct {
	Layers []int // layers on each backend but the last, as Placement.Layers
	// CPUMoE is how many layers, from the first, keep their experts'
	// weights on the last backend (as -n-cpu-moe), the rest of them on
	// the first backend with every other layer.
	CPUMoE  int
	NLayer  int // layers of the model
	Margin  float64
	Plans   int // candidate plans tried
	Memory  []MemoryUse
	Backend []string // the target, in priority order
}

// MemoryUse is what one buffer type holds under a plan.
type MemoryUse struct {
	Backends   []string // the target's backends that use this buffer type
	BufferType string
	Weights    int64
	Packed     int64 // packed copies its backends make of weights (pack_weights), beside them
	State      int64
	Compute    int64 // the planned compute buffer, all pipeline copies included
	Budget     int64 // 0: none
	Usable     int64 // Budget less the margin
}

// Total is weights, packed copies, state and compute together.
func (m MemoryUse) Total() int64 { return ir.SumBytes(m.Weights, m.Packed, m.State, m.Compute) }

// Over is by how many bytes the total exceeds the usable budget (0 when it
// fits or has no budget).
func (m MemoryUse) Over() int64 {
	if m.Budget == 0 || m.Total() <= m.Usable {
		return 0
	}
	return m.Total() - m.Usable
}

// MemoryOf measures a compiled plan per buffer type, in target order:
// weights and state where their placement puts them, each padded to the
// buffer's alignment as the runtime allocates them, the packed copies of
// weights in the memory of the backend that packs them, and the planned
// compute buffers.
func MemoryOf(g *ir.Graph) []MemoryUse {
	var out []MemoryUse
	index := map[string]int{}
	for _, b := range g.Backends {
		k, ok := index[b.BufferType]
		if !ok {
			k = len(out)
			index[b.BufferType] = k
			out = append(out, MemoryUse{BufferType: b.BufferType})
		}
		out[k].Backends = append(out[k].Backends, b.Name)
	}
	for _, t := range g.Params {
		b := g.PlacedBackend(t)
		if b < 0 {
			continue
		}
		m := &out[index[g.Backends[b].BufferType]]
		n := alignUp(t.MaxBytes(), g.Backends[b].Alignment)
		if t.Kind == ir.KindWeight {
			m.Weights = ir.SumBytes(m.Weights, n)
			if t.IsPacked() {
				p := &out[index[g.Backends[t.Packed.Backend].BufferType]]
				p.Packed = ir.SumBytes(p.Packed, t.Packed.Bytes)
			}
		} else {
			m.State = ir.SumBytes(m.State, n)
		}
	}
	for _, buf := range g.Buffers {
		if k, ok := index[buf.BufferType]; ok {
			out[k].Compute = ir.SumBytes(out[k].Compute, buf.Size)
		}
	}
	return out
}

func alignUp(n, align int64) int64 {
	if align <= 1 || n > math.MaxInt64-align {
		return n
	}
	return (n + align - 1) / align * align
}

// withBudgets sets each row's budget: the smallest given for any backend
// sharing its buffer type.
func withBudgets(rows []MemoryUse, budgets map[string]int64, margin float64) []MemoryUse {
	for i := range rows {
		for _, name := range rows[i].Backends {
			if v, ok := budgets[name]; ok && (rows[i].Budget == 0 || v < rows[i].Budget) {
				rows[i].Budget = v
			}
		}
		rows[i].Usable = rows[i].Budget - int64(float64(rows[i].Budget)*margin)
	}
	return rows
}

// fitPlan compiles the model once per candidate layer placement and keeps
// the first that fits: for each backend in priority order but the last,
// the most layers (the output layer counting as one more on the first)
// that fit its budget given the backends before it, trying every count
// from all down to none. The counts are few, and trying each with the real
// planner is exact where a bisection would trust the compute buffer to
// grow with the layers.
func fitPlan(f *dsl.File, src []byte, cfg Config, settings *Settings) (*Result, error) {
	fit := cfg.Fit
	margin := fit.Margin
	if margin < 0 {
		margin = DefaultFitMargin
	}
	if margin >= 1 {
		return nil, &UserError{fmt.Sprintf("-fit margin %.0f%%: want less than 100%%", margin*100)}
	}
	if cfg.Placement.GPULayers != nil || cfg.Placement.Layers != nil {
		return nil, &UserError{"-fit chooses the layers on each backend itself: drop -ngl (or the model's set gpu_layers)"}
	}
	target := cfg.Backends
	if len(target) == 0 {
		target = settings.Backends
	}
	if len(target) == 0 {
		target = []string{"cpu"}
	}
	var names []string
	for name := range fit.Budgets {
		if !slices.Contains(target, name) {
			names = append(names, name)
		}
	}
	if len(names) > 0 {
		sort.Strings(names)
		return nil, &UserError{fmt.Sprintf("-mem: %s not in the target (%s)", strings.Join(names, ", "), strings.Join(target, ", "))}
	}
	// compile plans layers on the backends, and the experts of the first
	// cpuMoE layers on the last backend: rules after the user's, which win.
	compile := func(layers []int, cpuMoE int) (*Result, []MemoryUse, error) {
		g, s, err := Lower(f, cfg.weightTypes(), cfg.File, cfg.Flags)
		if err != nil {
			return nil, nil, &UserError{dsl.Render(err, src)}
		}
		c := s.merge(cfg)
		c.Backends = target
		c.Placement.Layers = layers
		c.Placement.Overrides = slices.Clone(c.Placement.Overrides)
		for _, o := range NCPUMoE(cpuMoE) {
			o.Backend, o.Flag = target[len(target)-1], "-fit"
			c.Placement.Overrides = append(c.Placement.Overrides, o)
		}
		res, err := plan(g, c)
		if err != nil {
			return nil, nil, err
		}
		return res, withBudgets(MemoryOf(res.Graph), fit.Budgets, margin), nil
	}
	nLayer := 0
	hasExperts := false
	{
		g, _, err := Lower(f, cfg.weightTypes(), cfg.File, cfg.Flags)
		if err != nil {
			return nil, &UserError{dsl.Render(err, src)}
		}
		experts := CPUMoE().Pattern
		for _, t := range g.Params {
			nLayer = max(nLayer, layerOf(t.Name)+1)
			hasExperts = hasExperts || t.Kind == ir.KindWeight && experts.MatchString(t.Name)
		}
	}
	report := &FitReport{NLayer: nLayer, Margin: margin, Backend: target}
	var layers []int
	left := nLayer
	var res *Result
	var rows []MemoryUse
	for b := 0; b < len(target)-1; b++ {
		most := left
		if b == 0 {
			most++ // the output layer
		}
		found := false
		// A mixture of experts keeps every layer on the first backend
		// as long as moving the experts of its first layers to the last
		// backend makes room (-n-cpu-moe's placement, the fewest layers'
		// that fit) before whole layers move: the experts are most of a
		// layer's weights and the least of its work per token.
		start := most
		if b == 0 && hasExperts {
			start = most - 1 // most with no experts moved is tried here
			for k := 0; k <= nLayer && !found; k++ {
				cand := []int{most}
				r, m, err := compile(cand, k)
				if err != nil {
					return nil, err
				}
				report.Plans++
				if rowOf(m, target[b]).Over() == 0 {
					layers, res, rows, found = cand, r, m, true
					report.CPUMoE = k
				}
			}
		}
		for n := start; n >= 0 && !found; n-- {
			cand := append(slices.Clone(layers), n)
			r, m, err := compile(cand, 0)
			if err != nil {
				return nil, err
			}
			report.Plans++
			if rowOf(m, target[b]).Over() == 0 {
				layers, res, rows, found = cand, r, m, true
				break
			}
			if n == 0 {
				res, rows = r, m
			}
		}
		if !found {
			// Even no layers is too much: the backend's compute buffer
			// alone exceeds its budget. The CPU check below says by how
			// much.
			layers = append(layers, 0)
		}
		left = max(left-layers[b], 0)
	}
	if res == nil { // a target of one backend: nothing to choose
		r, m, err := compile(nil, 0)
		if err != nil {
			return nil, err
		}
		report.Plans++
		res, rows = r, m
	}
	report.Layers, report.Memory = layers, rows
	var over []string
	for _, m := range rows {
		if m.Over() > 0 {
			packed := ""
			if m.Packed > 0 {
				packed = ", packed " + Size(m.Packed)
			}
			over = append(over, fmt.Sprintf("%s needs %s (weights %s%s, state %s, compute %s) but its budget %s leaves %s usable (%.0f%% margin): %s over",
				strings.Join(m.Backends, "+"), Size(m.Total()), Size(m.Weights), packed, Size(m.State), Size(m.Compute), Size(m.Budget), Size(m.Usable), margin*100, Size(m.Over())))
		}
	}
	if len(over) > 0 {
		return nil, &UserError{fmt.Sprintf("%s: the model fits no placement on %s with layers %s:\n  %s\nraise the budgets (-mem), or add a device to -backends",
			f.Pos.Filename, strings.Join(target, ", "), formatLayers(layers, target), strings.Join(over, "\n  "))}
	}
	res.Fit = report
	return res, nil
}

func rowOf(rows []MemoryUse, backend string) MemoryUse {
	for _, m := range rows {
		if slices.Contains(m.Backends, backend) {
			return m
		}
	}
	return MemoryUse{}
}

// formatLayers renders a layer placement as -ngl would say it, per backend.
func formatLayers(layers []int, target []string) string {
	var parts []string
	for b, n := range layers {
		parts = append(parts, fmt.Sprintf("%s=%d", target[b], n))
	}
	if len(parts) == 0 {
		return "(none to place)"
	}
	return strings.Join(parts, ", ")
}

// ParseBudgets parses -mem's "BACKEND=SIZE,…", e.g. "sim0=64KiB,cpu=1GiB".
func ParseBudgets(s string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, part := range strings.Split(s, ",") {
		name, size, ok := strings.Cut(strings.TrimSpace(part), "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("%q: want BACKEND=SIZE, e.g. sim0=64KiB", part)
		}
		n, err := ParseSize(size)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%s: budget given twice", name)
		}
		out[name] = n
	}
	return out, nil
}

var sizeUnits = []struct {
	suffix string
	shift  uint
}{{"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40}, {"B", 0}, {"", 0}}

// ParseSize parses a byte count with an optional binary suffix: 4096,
// 64KiB, 1.5GiB.
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	for _, u := range sizeUnits {
		num, ok := strings.CutSuffix(s, u.suffix)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || v <= 0 || math.IsInf(v, 0) || v*float64(int64(1)<<u.shift) >= math.MaxInt64 {
			return 0, fmt.Errorf("%q: want a positive size such as 4096, 64KiB, 512MiB or 1.5GiB", s)
		}
		return int64(v * float64(int64(1)<<u.shift)), nil
	}
	return 0, fmt.Errorf("%q: want a size such as 64KiB", s)
}

// Size renders a byte count the way -mem reads it.
func Size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2fGiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2fMiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2fKiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}
