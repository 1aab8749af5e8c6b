package compiler

import (
	"fmt"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/passes"
)

// Unavailable returns, for the backends of target that this machine cannot
// run, why not. It only looks for what the backend needs (BLAS: its shared
// library), without loading anything. Names that are not backends are left
// to Target to report.
func Unavailable(target []string) map[string]string {
	why := map[string]string{}
	for _, name := range target {
		k, _, err := backend.Parse(name)
		if err != nil || k.Available == nil {
			continue
		}
		if ok, msg := k.Available(); !ok {
			why[name] = msg
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
	var descs []*backend.Description
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return nil, fmt.Errorf("backend %s listed twice", n)
		}
		seen[n] = true
		d, err := backend.Describe(n)
		if err != nil {
			return nil, err
		}
		descs = append(descs, d)
	}
	if descs[len(descs)-1].Device != "CPU" {
		return nil, fmt.Errorf("the last backend must be the cpu, which supports every op (got %s)", names[len(names)-1])
	}
	var bufts []backend.BufferType
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
// but a plan can do without (those whose kind has a Fallback: blas), and
// says why in one warning each. Other missing backends stay.
func DropUnavailable(target []string) (kept, warnings []string) {
	why := Unavailable(target)
	for _, name := range target {
		if msg, ok := why[name]; ok {
			if k, _, _ := backend.Parse(name); k.Fallback != "" {
				warnings = append(warnings, fmt.Sprintf("backend %s dropped from the target, %s: %s", name, k.Fallback, msg))
				continue
			}
		}
		kept = append(kept, name)
	}
	return kept, warnings
}
