package passes

import (
	"fmt"
	"strings"

	"github.com/graphc/graphc/ir"
)

// Pass is one step of the pipeline.
type Pass struct {
	Name     string
	Fn       func(g *ir.Graph, pc *Context) error
	Required bool // cannot be turned off
}

// pipeline is the only source of truth for pass order. The scheduling
// passes are ggml_backend_sched_split_graph's passes 1–5 in ggml's order;
// memory planning needs the final splits and copies.
var pipeline = [...]Pass{
	{Name: "assign_backends", Fn: assignBackends, Required: true},   // ggml pass 1: weights, inputs, user overrides
	{Name: "expand_backends", Fn: expandBackends, Required: true},   // ggml pass 2: spread assignments to neighbours
	{Name: "upgrade_backends", Fn: upgradeBackends, Required: true}, // ggml pass 3: same buffer type, higher priority
	{Name: "assign_srcs", Fn: assignSrcs, Required: true},           // ggml pass 4: views, leaves, leftovers
	{Name: "split_graph", Fn: splitGraph, Required: true},           // ggml pass 5: splits and input copies
	{Name: "plan_regions", Fn: planRegions, Required: true},         // graphc: barrier-free parallel regions (Options.Regions)
	{Name: "plan_memory", Fn: planMemory, Required: true},           // ggml-alloc: offsets in compute buffers
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
// empty, stops after the named pass.
func Run(g *ir.Graph, pc *Context, verify bool, through string) error {
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
		pc.pass = p.Name
		if err := p.Fn(g, pc); err != nil {
			return err
		}
		if verify {
			if err := g.Verify(); err != nil {
				panic(fmt.Sprintf("BUG: ir.Verify after pass %s: %v", p.Name, strings.ReplaceAll(err.Error(), "\n", "; ")))
			}
		}
		if p.Name == through {
			break
		}
	}
	return nil
}
