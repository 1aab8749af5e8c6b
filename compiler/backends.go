package compiler

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/graphc/graphc/passes"
	"github.com/graphc/graphc/runtime"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/runtime/cuda"
	"github.com/graphc/graphc/runtime/metal"
)

// KnownBackends describes the backend names a target may list.
const KnownBackends = "cpu, cuda<N>, metal"

// describe returns the runtime description of a backend named in a target.
func describe(name string) (*runtime.Description, error) {
	switch {
	case name == "cpu":
		return &cpu.Description, nil
	case name == "metal":
		return &metal.Description, nil
	case strings.HasPrefix(name, "cuda"):
		if n, err := strconv.Atoi(name[len("cuda"):]); err == nil && n >= 0 {
			return cuda.Description(n), nil
		}
	}
	return nil, fmt.Errorf("unknown backend %q (known: %s)", name, KnownBackends)
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
