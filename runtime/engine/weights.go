package engine

import (
	"fmt"
	"sort"
	"strings"

	"github.com/graphc/graphc/tensor"
)

// Named pairs a tensor with its name for printing.
type Named struct {
	Name   string
	Tensor tensor.Tensor
}

// BindWeights matches the weights a caller supplies against a model's
// declarations, in declaration order. It reports every missing, unknown,
// mis-typed, mis-shaped or short weight at once. The tensors' memory is
// used in place, not copied.
func BindWeights(decls []tensor.Decl, given map[string]tensor.Tensor) ([]tensor.Tensor, error) {
	var errs []string
	out := make([]tensor.Tensor, len(decls))
	known := map[string]bool{}
	for i := range decls {
		d := &decls[i]
		known[d.Name] = true
		t, ok := given[d.Name]
		switch {
		case !ok:
			errs = append(errs, fmt.Sprintf("weight %s: missing (want %s)", d.Name, d))
		case t.Type != d.Type || t.Ne != d.Ne:
			got := tensor.Decl{Type: t.Type, Ne: t.Ne}
			errs = append(errs, fmt.Sprintf("weight %s: want %s, got %s", d.Name, d, &got))
		case !t.Contiguous():
			errs = append(errs, fmt.Sprintf("weight %s: not contiguous", d.Name))
		case len(t.Data) < t.Span():
			errs = append(errs, fmt.Sprintf("weight %s: %d bytes of data, want %d", d.Name, len(t.Data), t.Span()))
		default:
			out[i] = t
		}
	}
	var unknown []string
	for name := range given {
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		errs = append(errs, fmt.Sprintf("unknown weights: %s", strings.Join(unknown, ", ")))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return out, nil
}
