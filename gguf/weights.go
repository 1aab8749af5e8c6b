package gguf

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/graphc/graphc/tensor"
)

func supportedTypes() string {
	var s []string
	for _, dt := range tensor.DTypes() {
		s = append(s, dt.String())
	}
	return strings.Join(s, ", ")
}

// Weights returns the file's tensors for a generated model's weight
// declarations (its package's Weights), ready for its New: each a
// contiguous tensor.Tensor whose Data is the tensor's bytes in the
// mapping, not a copy. Declarations match tensors by name, so llama.cpp
// names such as blk.0.attn_q.weight work as they are.
//
// Every missing tensor, unsupported or different type and different shape
// is reported at once. Tensors that no declaration names are an error too,
// unless opts has AllowUnused: a model that ignores one of its file's
// tensors (Llama 3's rope_freqs.weight) computes something else than the
// file means.
func (m *Mapped) Weights(decls []tensor.Decl, opts ...WeightsOption) (map[string]tensor.Tensor, error) {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("gguf: %s: "+format, append([]any{m.path}, args...)...))
	}
	out := make(map[string]tensor.Tensor, len(decls))
	for i := range decls {
		d := &decls[i]
		t, ok := m.Lookup(d.Name)
		if !ok {
			bad("weight %q is missing (the model wants %s)", d.Name, d)
			continue
		}
		dt := t.Type
		if !dt.Supported() {
			bad("tensor %q is %s; this build supports %s", d.Name, t.Type, supportedTypes())
			continue
		}
		var ne [4]int
		for j, n := range t.Ne {
			ne[j] = int(n)
		}
		if dt != d.Type || ne != d.Ne {
			got := tensor.Decl{Type: dt, Ne: ne}
			bad("weight %q is %s in the file, the model wants %s", d.Name, &got, d)
			continue
		}
		data := m.Data(t)
		// Kernels read whole elements of unquantized types; quantized
		// blocks are read byte-wise.
		align := uintptr(dt.Size())
		if dt.Quantized() {
			align = 1
		}
		if p := uintptr(unsafe.Pointer(unsafe.SliceData(data))); p%align != 0 {
			bad("weight %q: data at file byte %d is not aligned to its %d-byte elements (%s = %d)",
				d.Name, m.DataOffset+t.Offset, dt.Size(), AlignmentKey, m.Alignment)
			continue
		}
		out[d.Name] = tensor.Tensor{Type: dt, Ne: ne, Nb: tensor.ContiguousStrides(dt, ne), Data: data}
	}
	if unused := m.Unused(decls); len(unused) > 0 && !slices.Contains(opts, AllowUnused) {
		bad("%s (-allow-unused, or gguf.AllowUnused, ignores them)", UnusedList(unused))
	}
	if len(errs) == 0 {
		return out, nil
	}
	return nil, errors.Join(errs...)
}

// WeightsOption changes what Weights accepts.
type WeightsOption int

// AllowUnused lets Weights load a file with tensors that no declaration
// names, ignoring them.
const AllowUnused WeightsOption = 1

// UnusedList describes tensors of a file that a model does not read: their
// count and the first few names.
func UnusedList(unused []string) string {
	const show = 8
	list := strings.Join(unused[:min(len(unused), show)], ", ")
	if len(unused) > show {
		list += ", …"
	}
	return fmt.Sprintf("%d tensors in the file are not read by the model: %s", len(unused), list)
}

// Unused lists, in file order, the tensors that no declaration names.
func (f *File) Unused(decls []tensor.Decl) []string {
	declared := make(map[string]bool, len(decls))
	for _, d := range decls {
		declared[d.Name] = true
	}
	var out []string
	for _, t := range f.Tensors {
		if !declared[t.Name] {
			out = append(out, t.Name)
		}
	}
	return out
}
