package passes

import (
	"fmt"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/ir"
)

// Backend is a target backend as the passes see it: the plan's static
// description plus the capability queries, answered either from a
// backend.Description or from a recorded ggml trace.
type Backend struct {
	ir.Backend
	Device string // "CPU", "GPU" or "ACCEL"
	// SupportsOp reports whether the backend can compute node t.
	SupportsOp func(t *ir.Tensor) bool
	// SupportsBufferType reports whether the backend reads buffers of the
	// named type directly.
	SupportsBufferType func(name string) bool
	// OffloadOp reports whether the backend wants node t although its
	// weight is in host memory. Nil means never.
	OffloadOp func(t *ir.Tensor) bool
	// Parts: the backend runs parallel regions (backend.Description.Parts).
	Parts bool
	// PackWeight is, for node t reading a weight as its source 0, the
	// bytes of the packed copy of that weight the backend would read
	// instead (backend.Description.PackWeight); 0: the weight as it is.
	// Nil means never.
	PackWeight func(t *ir.Tensor) int64
	// GroupProducts is the most products of packed weights sharing an
	// activation the backend runs as one call
	// (backend.Description.GroupProducts); 0: none.
	GroupProducts int
}

// FromDescription adapts a backend description (package backend) for
// planning.
// others lists every buffer type of the target, so that name lookups in
// SupportsBufferType can be answered; minBatch overrides the backend's
// offload threshold when positive.
func FromDescription(d *backend.Description, others []backend.BufferType, minBatch int) *Backend {
	bufts := map[string]backend.BufferType{}
	for _, b := range others {
		bufts[b.Name] = b
	}
	bufts[d.BufferType.Name] = d.BufferType
	b := &Backend{
		Backend:       ir.Backend{Name: d.Name, BufferType: d.BufferType.Name, Host: d.BufferType.Host, Alignment: d.BufferType.Alignment, MaxSize: d.BufferType.MaxSize},
		Device:        d.Device,
		Parts:         d.Parts,
		GroupProducts: d.GroupProducts,
		SupportsOp: func(t *ir.Tensor) bool {
			return d.SupportsOp(Query(t))
		},
		SupportsBufferType: func(name string) bool {
			bt, ok := bufts[name]
			return ok && d.SupportsBufferType(bt)
		},
	}
	if d.PackWeight != nil {
		b.PackWeight = func(t *ir.Tensor) int64 { return d.PackWeight(Query(t)) }
	}
	if d.OffloadOp != nil {
		if minBatch <= 0 {
			minBatch = d.OffloadMinBatch
		}
		b.OffloadOp = func(t *ir.Tensor) bool { return d.OffloadOp(Query(t), minBatch) }
	}
	return b
}

// Query describes node t to a backend, shapes at the dims' bounds.
func Query(t *ir.Tensor) *backend.OpQuery {
	q := &backend.OpQuery{Op: t.Op, Type: t.Type, Ne: bounds(t.Ne)}
	for _, s := range t.Src {
		q.Src = append(q.Src, backend.OpSrc{Type: s.Type, Ne: bounds(s.Ne), Nb: bounds(s.Nb), Contiguous: s.Contiguous()})
	}
	return q
}

func bounds(ne [4]*ir.Expr) [4]int64 {
	var out [4]int64
	for i, e := range ne {
		out[i] = e.AtBounds()
	}
	return out
}

// Options are the planning knobs users set in the DSL or on the command line.
type Options struct {
	NCopies int // pipeline copies of split inputs (ggml's n_copies); 1 = none
	// OpOffload enables backends' OffloadOp (ggml_backend_sched op_offload).
	OpOffload bool
	// MemoryStrategy picks plan_memory's strategy (MemoryStrategies); ""
	// means StrategyBest.
	MemoryStrategy string
	// Regions enables plan_regions: runs of per-token nodes on
	// multi-threaded backends become barrier-free parallel regions.
	Regions bool
	// Placement picks the placement strategy: "" or PlacementGGML for
	// ggml's, PlacementCost for place_by_cost's.
	Placement string
	// Cost is place_by_cost's model; nil means DefaultCostModel.
	Cost *CostModel
	// NoPack turns pack_weights off, and with it group_products: every op
	// reads the weights as loaded, as in ggml without its CPU_REPACK
	// buffer type.
	NoPack bool
}

// Context carries the target and options through the pipeline, and
// collects diagnostics.
type Context struct {
	Backends []*Backend
	Options  Options
	Debug    int
	Diags    []Diag

	pass string
}

// Diag is a positioned note a pass makes about one of its decisions.
type Diag struct {
	Pos  ir.Pos
	Pass string
	Msg  string
}

// Notef records an explanation at debug level 1 and above.
func (pc *Context) Notef(pos ir.Pos, format string, a ...any) {
	if pc.Debug > 0 {
		pc.Diags = append(pc.Diags, Diag{pos, pc.pass, fmt.Sprintf(format, a...)})
	}
}

// Fatalf reports a broken invariant: a bug in graphc, never the user's
// fault. The driver turns the panic into an internal-error exit.
func (pc *Context) Fatalf(pos ir.Pos, format string, a ...any) {
	panic(fmt.Sprintf("BUG: pass %s: %s: %s", pc.pass, pos, fmt.Sprintf(format, a...)))
}
