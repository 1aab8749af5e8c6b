package passes

import (
	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
)

// packWeights marks every weight that some mul_mat or mul_mat_id reads directly (as its
// source 0, not through a split input's copy) on a backend that keeps a
// packed copy of such weights (Backend.PackWeight: the CPU, for q4_0 and
// q8_0). The mark (ir.Tensor.Packed) names that backend and the copy's
// bytes; generated code and the interpreter make the copy once, when the
// model is made, and every memory figure of the plan counts it.
//
// A weight other ops read as well (a tied token_embd.weight, read by
// get_rows and by the output's mul_mat) is packed all the same: the copy
// serves the backend's matrix products (and the CPU's get_rows, which
// rebuilds the rows it picks from it), the weight stays as loaded for the
// rest. A weight nothing else reads, or only get_rows besides (on the CPU
// it reads the copy; elsewhere it touches the rows it picks, which come
// back from the mapped file), is marked Release: programs release its
// memory once the copy is made, so that the copy does not double it. The
// first backend in node order to pack a weight makes its copy; products on
// any other backend read the weight as loaded.
//
// Mirrors llama.cpp's select_weight_buft (src/llama-model.cpp), which at
// load puts each weight in the first buffer type of its device whose
// supports_op takes the op that reads the weight, extra buffer types first
// (ggml-cpu's ggml_backend_cpu_get_extra_buffer_types: CPU_REPACK), and
// repack.cpp's extra_buffer_type::supports_op, which takes MUL_MAT with a
// repackable src0. Departures: llama.cpp decides from the kind of op each
// weight is meant for, before scheduling; this pass decides from the plan's
// own nodes after splitting, so a weight whose products all run elsewhere
// is not packed. And llama.cpp's repacked weight replaces the original
// (a tied embedding is loaded twice, TENSOR_DUPLICATED), where here the
// original stays: the copy costs its bytes again.
//
// On unless Options.NoPack (its row in the pass table). It changes no
// node, split, copy or offset, so plans stay ggml's decision for decision;
// traces (ggmltrace) describe no packing backend and are not affected.
//
// See testdata/pack_weights/.
func packWeights(g *ir.Graph, pc *Context) error {
	for _, t := range g.Params {
		t.Packed = ir.Packing{}
	}
	for _, t := range g.Nodes {
		if !packs(t) || t.Backend < 0 {
			continue
		}
		w := t.Src[0]
		be := pc.Backends[t.Backend]
		if w.Kind != ir.KindWeight || be.PackWeight == nil || w.IsPacked() {
			continue
		}
		n := be.PackWeight(t)
		if n <= 0 {
			continue
		}
		w.Packed = ir.Packing{Backend: t.Backend, Bytes: n, Release: true}
		pc.Notef(w.Pos, "%s: packed for %s (%d bytes), which reads it in %s", w.Name, be.Name, n, t.Name)
	}
	// A packed weight is released unless something else reads it: an op
	// other than get_rows of its rows (a tied embedding's), a source
	// other than a packing mul_mat's first, a view, or a split input's
	// copy.
	other := func(w *ir.Tensor) {
		if w.IsPacked() {
			w.Packed.Release = false
		}
	}
	for _, t := range g.Nodes {
		if t.ViewSrc != nil {
			other(t.ViewSrc)
		}
		for i, s := range t.Src {
			if s == nil || i == 0 && (packs(t) && t.Backend == s.Packed.Backend || t.Op == ops.GetRows) {
				continue
			}
			other(s)
		}
	}
	for _, s := range g.Splits {
		for _, in := range s.Inputs {
			other(in.Tensor)
		}
	}
	return nil
}

// packs reports whether t reads its source 0 from a packed copy where the
// backend keeps one: mul_mat, and mul_mat_id (its experts' matrices, as
// repack.cpp takes MUL_MAT_ID).
func packs(t *ir.Tensor) bool { return t.Op == ops.MulMat || t.Op == ops.MulMatID }
