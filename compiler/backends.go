package compiler

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/graphc/graphc/passes"
	"github.com/graphc/graphc/runtime"
	"github.com/graphc/graphc/runtime/blas"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/runtime/cuda"
	"github.com/graphc/graphc/runtime/metal"
)

// KnownBackends describes the backend names a target may list.
const KnownBackends = "cpu, blas, cuda<N>, metal, sim<N>"

// describe returns the runtime description of a backend named in a target:
// the CPU; BLAS (OpenBLAS, sharing the CPU's memory); CUDA and Metal GPUs;
// and sim<N>, simulated discrete devices that run the CPU kernels on
// memory of their own, for running multi-backend plans on any machine.
func describe(name string) (*runtime.Description, error) {
	device := func(prefix string) (int, bool) {
		if !strings.HasPrefix(name, prefix) || len(name) == len(prefix) {
			return 0, false
		}
		n, err := strconv.Atoi(name[len(prefix):])
		return n, err == nil && n >= 0 && strconv.Itoa(n) == name[len(prefix):]
	}
	switch {
	case name == "cpu":
		return &cpu.Description, nil
	case name == "blas":
		return &blas.Description, nil
	case name == "metal":
		return &metal.Description, nil
	}
	if n, ok := device("cuda"); ok {
		return cuda.Description(n), nil
	}
	if n, ok := device("sim"); ok {
		return cpu.SimDescription(n), nil
	}
	return nil, fmt.Errorf("unknown backend %q (known: %s)", name, KnownBackends)
}

// Unavailable returns, for the backends of target that this machine cannot
// run, why not. It only looks for what the backend needs (BLAS: its shared
// library), without loading anything.
func Unavailable(target []string) map[string]string {
	why := map[string]string{}
	for _, name := range target {
		switch {
		case name == "blas":
			if _, err := blas.Library(); err != nil {
				why[name] = err.Error()
			}
		case name == "metal":
			if ok, msg := metal.Available(); !ok {
				why[name] = msg
			}
		case strings.HasPrefix(name, "cuda"):
			if ok, msg := cuda.Available(); !ok {
				why[name] = msg
			}
		}
	}
	return why
}

// Target resolves an ordered list of backend names into planning backends;
// offloadMinBatch > 0 overrides the backends' op offload threshold.
// The CPU must come last: it is the fallback that supports every op.
func Target(names []string, offloadMinBatch int) ([]*passes.Backend, error) {
	if len(names) == 0 {
		names = []string{"cpu"}
	}
	var descs []*runtime.Description
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return nil, fmt.Errorf("backend %s listed twice", n)
		}
		seen[n] = true
		d, err := describe(n)
		if err != nil {
			return nil, err
		}
		descs = append(descs, d)
	}
	if descs[len(descs)-1].Device != "CPU" {
		return nil, fmt.Errorf("the last backend must be the cpu, which supports every op (got %s)", names[len(names)-1])
	}
	var bufts []runtime.BufferType
	for _, d := range descs {
		bufts = append(bufts, d.BufferType)
	}
	out := make([]*passes.Backend, len(descs))
	for i, d := range descs {
		out[i] = passes.FromDescription(d, bufts, offloadMinBatch)
	}
	return out, nil
}

// DropUnavailable removes from target the backends this machine cannot run
// but a plan can do without, and says why in one warning each. Only blas
// qualifies: it shares the CPU's memory and its ops are a subset of the
// CPU's, so without it the CPU computes its matrix products and nothing
// else changes. Other missing backends (a GPU) stay: their weights and
// state are placed there, and the generated program reports them
// unavailable when it starts.
func DropUnavailable(target []string) (kept, warnings []string) {
	why := Unavailable(target)
	for _, name := range target {
		if msg, ok := why[name]; ok && name == "blas" {
			warnings = append(warnings, fmt.Sprintf("backend blas dropped from the target, the cpu computes its matrix products: %s", msg))
			continue
		}
		kept = append(kept, name)
	}
	return kept, warnings
}
