package codegen

import (
	"fmt"
	"strings"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/ir"
)

func (gen *generator) prepare() error {
	g := gen.g
	gen.dimField = map[*ir.Dim]string{}
	gen.boundConst = map[*ir.Dim]string{}
	gen.inField = map[*ir.Tensor]string{}
	gen.outField = map[*ir.Tensor]string{}
	gen.paramIndex = map[*ir.Tensor]int{}
	gen.paramConst = map[*ir.Tensor]string{}
	gen.versions = map[*ir.Tensor][]*ir.Tensor{}
	gen.versionVar = map[*ir.Tensor]string{}
	gen.regionAt = map[int]int{}
	for k, r := range g.Regions {
		gen.regionAt[r.First] = k
	}
	for _, n := range []string{"Model", "New", "Inputs", "Outputs", "Dims", "Weights", "States", "Bounds",
		"Pending", "NCopies", "splits", "bufferTypes", "weightBackend", "stateBackend", "driver"} {
		gen.names.used[n] = true
	}
	if len(g.Splits) == 0 && len(g.Nodes) > 0 {
		return fmt.Errorf("BUG: the plan has nodes but no splits")
	}
	dimNames := newNamer()
	for _, d := range g.Dims {
		if d.Bounded {
			gen.bounded = append(gen.bounded, d)
			gen.dimField[d] = dimNames.exported("", d.Name)
			gen.boundConst[d] = gen.names.exported("Max", d.Name)
		}
	}
	fieldNames := newNamer("Dims", "Reuse")
	for _, t := range g.Inputs {
		gen.inField[t] = fieldNames.exported("", t.Name)
	}
	outNames := newNamer("Named") // Outputs has a method Named
	for _, t := range g.Outputs {
		gen.outField[t] = outNames.exported("", t.Name)
	}
	for _, t := range g.Params {
		if t.Kind == ir.KindWeight {
			gen.paramIndex[t] = len(gen.weights)
			gen.weights = append(gen.weights, t)
		} else {
			gen.paramIndex[t] = len(gen.states)
			gen.paramConst[t] = gen.names.local("state", t.Name)
			gen.states = append(gen.states, t)
		}
		for _, ne := range t.Ne {
			if _, ok := ne.Constant(); !ok {
				return fmt.Errorf("%s: %s %s: shape %s depends on a bounded dim; weights and state need fixed shapes", t.Pos, t.Kind, t.Name, t.ShapeString())
			}
		}
		if b := gen.g.PlacedBackend(t); b < 0 {
			return fmt.Errorf("%s: %s %s is placed on %s, which is not in the target", t.Pos, t.Kind, t.Name, t.Placement)
		}
	}
	for _, be := range g.Backends {
		k, n, err := backend.Parse(be.Name)
		if err != nil {
			return err
		}
		gen.kinds = append(gen.kinds, k)
		gen.devNum = append(gen.devNum, n)
		gen.beField = append(gen.beField, gen.names.local("", be.Name+"_backend"))
		gen.beConst = append(gen.beConst, gen.names.local("backend", be.Name))
		ops := ""
		if k.CheckOps {
			ops = gen.names.local("", be.Name+"_ops")
		}
		gen.opsVar = append(gen.opsVar, ops)
	}
	for k, be := range g.Backends {
		packed := ""
		if ws, _ := g.PackedWeights(k); len(ws) > 0 {
			// Pack is a method only of kinds whose description packs
			// (package backend's tests check that).
			if d := gen.kinds[k].Describe(gen.devNum[k]); d.PackWeight == nil {
				return fmt.Errorf("BUG: the plan packs %d weights for %s, whose description packs none", len(ws), be.Name)
			}
			packed = gen.names.local("", be.Name+"_packed")
		}
		gen.packedVar = append(gen.packedVar, packed)
	}
	for _, b := range g.Buffers {
		if len(b.Chunks) > 1 {
			return fmt.Errorf("buffer %s: %d bytes in %d chunks; generated code allocates one piece per buffer type", b.BufferType, b.Size, len(b.Chunks))
		}
		gen.bufField = append(gen.bufField, gen.names.local("buf", b.BufferType))
		gen.bufConst = append(gen.bufConst, gen.names.local("", strings.ToLower(b.BufferType)+"_buffer_size"))
	}
	if g.NCopies > 1 {
		for _, in := range g.InputCopies {
			gen.versions[in.Tensor] = in.Copies
			gen.versionVar[in.Tensor] = gen.names.local("offs", in.Tensor.Name)
		}
		for _, s := range g.Splits {
			for _, in := range s.Inputs {
				c := in.Copies[0]
				if _, ok := gen.versions[c]; !ok {
					gen.versions[c] = in.Copies
					gen.versionVar[c] = gen.names.local("offs", c.Name)
				}
			}
		}
		for t, vs := range gen.versions {
			if len(vs) != g.NCopies {
				return fmt.Errorf("BUG: %s has %d pipeline versions, want %d", t.Name, len(vs), g.NCopies)
			}
			for _, v := range vs {
				if v.Alloc.Kind != ir.AllocCompute {
					return fmt.Errorf("BUG: pipeline version %s of %s is not in a compute buffer", v.Name, t.Name)
				}
			}
		}
	}
	for _, t := range g.Inputs {
		if g.InGraph(t) && !gen.kinds[gen.memBackend(t)].Host {
			return fmt.Errorf("%s: input %s lives on %s; generated code writes inputs in host memory only", t.Pos, t.Name, g.Backends[gen.memBackend(t)].Name)
		}
	}
	gen.collectParams()
	gen.collectViewChecks()
	gen.decoder = findDecoder(g)
	return nil
}

// memBackend is the backend whose memory holds t's bytes: the backend
// owning its weight or state placement, or the first backend of its
// compute buffer's type.
func (gen *generator) memBackend(t *ir.Tensor) int {
	r := t.Root()
	switch r.Alloc.Kind {
	case ir.AllocWeight, ir.AllocState:
		return gen.g.PlacedBackend(r)
	case ir.AllocCompute:
		return gen.g.Buffers[r.Alloc.Buffer].Backend
	}
	panic(fmt.Sprintf("BUG: tensor %s (root %s) has no allocation", t.Name, r.Name))
}

// allocated lists the tensors with their own place in a compute buffer, in
// buffer then offset order.
func (gen *generator) allocated() []*ir.Tensor {
	var ts []*ir.Tensor
	seen := map[*ir.Tensor]bool{}
	add := func(t *ir.Tensor) {
		if t.Alloc.Kind == ir.AllocCompute && !seen[t] {
			seen[t] = true
			ts = append(ts, t)
		}
	}
	for _, t := range gen.g.Leafs {
		add(t)
	}
	for _, in := range gen.g.InputCopies {
		for _, c := range in.Copies {
			add(c)
		}
	}
	for _, s := range gen.g.Splits {
		for _, in := range s.Inputs {
			for _, c := range in.Copies {
				add(c)
			}
		}
	}
	for _, t := range gen.g.Nodes {
		add(t)
	}
	return ts
}

// versionKeys lists the tensors with pipeline versions in allocation order.
func (gen *generator) versionKeys() []*ir.Tensor {
	var keys []*ir.Tensor
	for _, t := range gen.allocated() {
		if _, ok := gen.versions[t]; ok {
			keys = append(keys, t)
		}
	}
	return keys
}
