package passes

import (
	"fmt"
	"slices"
	"strings"

	"github.com/graphc/graphc/ir"
)

// Pass is one step of the pipeline.
type Pass struct {
	Name string
	Fn   func(g *ir.Graph, pc *Context) error
	// Enabled says whether the pass runs under the given options; nil
	// means always. A disabled pass leaves the graph as it found it, so
	// what it provides is then the empty answer (no regions).
	Enabled func(*Options) bool
	// Needs lists the facts about the graph that the pass reads, and
	// Provides the facts it establishes. checkPipeline requires every need
	// to be provided by an earlier pass, which is what fixes the order.
	Needs, Provides []fact
}

// A fact is a property of the graph that passes establish and rely on.
type fact string

const (
	seeded   fact = "weights, inputs and user overrides assigned (ggml pass 1)"
	expanded fact = "assignments spread to neighbours (ggml pass 2)"
	upgraded fact = "nodes upgraded to higher-priority backends (ggml pass 3)"
	assigned fact = "every node and leaf on a backend (ggml pass 4)"
	costed   fact = "assignment improved by the cost model, where asked"
	split    fact = "splits and their input copies"
	regions  fact = "parallel regions"
	packed   fact = "weights packed for their matrix products"
	grouped  fact = "products of packed weights sharing an activation grouped"
	offsets  fact = "compute buffer offsets"
)

// pipeline is the only source of truth for pass order. The scheduling
// passes are ggml_backend_sched_split_graph's passes 1–5 in ggml's order,
// place_by_cost (off unless asked) between 4 and 5, where every node has a
// backend and none is split yet; regions need the final splits; memory planning needs splits and regions
// (a region stretches its tensors' lifetimes). pack_weights needs the
// final splits too: a mul_mat reads a weight itself only where no copy
// was inserted for it. group_products moves nodes, so memory planning
// follows it.
var pipeline = []Pass{
	{Name: "assign_backends", Fn: assignBackends, Provides: []fact{seeded}},
	{Name: "expand_backends", Fn: expandBackends, Needs: []fact{seeded}, Provides: []fact{expanded}},
	{Name: "upgrade_backends", Fn: upgradeBackends, Needs: []fact{expanded}, Provides: []fact{upgraded}},
	{Name: "assign_srcs", Fn: assignSrcs, Needs: []fact{upgraded}, Provides: []fact{assigned}},
	{Name: "place_by_cost", Fn: placeByCost, Enabled: func(o *Options) bool { return o.Placement == PlacementCost },
		Needs: []fact{assigned}, Provides: []fact{costed}},
	{Name: "split_graph", Fn: splitGraph, Needs: []fact{assigned, costed}, Provides: []fact{split}},
	{Name: "plan_regions", Fn: planRegions, Enabled: func(o *Options) bool { return o.Regions },
		Needs: []fact{split}, Provides: []fact{regions}},
	{Name: "pack_weights", Fn: packWeights, Enabled: func(o *Options) bool { return !o.NoPack },
		Needs: []fact{split}, Provides: []fact{packed}},
	{Name: "group_products", Fn: groupProducts, Enabled: func(o *Options) bool { return !o.NoPack },
		Needs: []fact{split, regions, packed}, Provides: []fact{grouped}},
	{Name: "plan_memory", Fn: planMemory, Needs: []fact{split, regions, grouped}, Provides: []fact{offsets}},
}

func init() {
	if err := checkPipeline(pipeline); err != nil {
		panic("BUG: " + err.Error())
	}
}

// checkPipeline reports a table whose order breaks a pass's needs, or in
// which two passes share a name or establish the same fact.
func checkPipeline(ps []Pass) error {
	have := map[fact]string{}
	var names []string
	for _, p := range ps {
		if p.Name == "" || p.Fn == nil {
			return fmt.Errorf("pass table: row %d has no name or function", len(names))
		}
		if slices.Contains(names, p.Name) {
			return fmt.Errorf("pass table: pass %s listed twice", p.Name)
		}
		names = append(names, p.Name)
		for _, f := range p.Needs {
			if _, ok := have[f]; !ok {
				return fmt.Errorf("pass table: %s needs %q, which no earlier pass provides", p.Name, f)
			}
		}
		for _, f := range p.Provides {
			if by, ok := have[f]; ok {
				return fmt.Errorf("pass table: %s and %s both provide %q", by, p.Name, f)
			}
			have[f] = p.Name
		}
	}
	return nil
}

// Passes returns the pipeline's pass names in order.
func Passes() []string {
	names := make([]string, len(pipeline))
	for i, p := range pipeline {
		names[i] = p.Name
	}
	return names
}

// Run runs the pipeline on g. With verify set, ir.Verify runs after every
// pass and a failure is reported as a bug in that pass. through, when not
// empty, names the pass to stop after.
func Run(g *ir.Graph, pc *Context, verify bool, through string) error {
	if through != "" && !slices.Contains(Passes(), through) {
		return fmt.Errorf("no pass %q (passes: %s)", through, strings.Join(Passes(), ", "))
	}
	if len(pc.Backends) == 0 {
		return fmt.Errorf("no backends in the target")
	}
	g.Backends = g.Backends[:0]
	for _, b := range pc.Backends {
		be := b.Backend
		g.Backends = append(g.Backends, &be)
	}
	if pc.Options.NCopies < 1 {
		pc.Options.NCopies = 1
	}
	g.NCopies = pc.Options.NCopies
	if pc.Options.MemoryStrategy != "" {
		g.MemoryStrategy = pc.Options.MemoryStrategy
	}
	for _, p := range pipeline {
		if p.Enabled == nil || p.Enabled(&pc.Options) {
			pc.pass = p.Name
			if err := p.Fn(g, pc); err != nil {
				return err
			}
			if verify {
				if err := g.Verify(); err != nil {
					panic(fmt.Sprintf("BUG: ir.Verify after pass %s: %v", p.Name, strings.ReplaceAll(err.Error(), "\n", "; ")))
				}
			}
		}
		if p.Name == through {
			break
		}
	}
	return nil
}
