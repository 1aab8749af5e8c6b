package passes_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphc/graphc/ggmltrace"
	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/passes"
)

// TestMemoryMatchesGGML: with the ggml strategy forced, every tensor of
// every conformance trace is where ggml-alloc put it, and every compute
// buffer has ggml's size; the default strategy is never larger.
func TestMemoryMatchesGGML(t *testing.T) {
	files, err := filepath.Glob("../ggmltrace/testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no traces: %v", err)
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			tr, err := ggmltrace.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			plan := func(strategy string) *ir.Graph {
				g, backends, opts, err := tr.Graph()
				if err != nil {
					t.Fatal(err)
				}
				g.MemoryStrategy = strategy
				if err := passes.Run(g, &passes.Context{Backends: backends, Options: opts}, true, ""); err != nil {
					t.Fatal(err)
				}
				return g
			}
			g := plan(passes.StrategyGGML)
			byName := map[string]*ir.Tensor{}
			for _, x := range g.Tensors {
				byName[x.Name] = x
			}
			where := func(x *ir.Tensor) (string, int64) {
				r := x.Root()
				if r.Alloc.Kind != ir.AllocCompute {
					return "", -1
				}
				off := r.Alloc.Offset
				if x.ViewSrc != nil {
					off += x.ViewOffs.AtBounds()
				}
				return g.Buffers[r.Alloc.Buffer].BufferType, off
			}
			check := func(what string, x *ir.Tensor, buft string, off int64) {
				if x == nil {
					t.Errorf("%s: not in graphc's graph", what)
					return
				}
				gb, goff := where(x)
				if gb != buft || goff != off {
					t.Errorf("%s: ggml %s+%d, graphc %s+%d", what, buft, off, gb, goff)
				}
			}
			n := 0
			for _, list := range [][]*ggmltrace.Tensor{tr.Leafs, tr.Nodes} {
				for _, tt := range list {
					if tt.Alloc == nil || tt.Alloc.Usage != "compute" {
						continue
					}
					n++
					check(tt.Name, byName[tt.Name], tt.Alloc.Buft, tt.Alloc.Offset)
				}
			}
			for _, s := range tr.Result.Splits {
				for _, in := range s.Inputs {
					for _, c := range in.Copies {
						n++
						check(c.Name, byName[c.Name], c.AllocBuft, c.AllocOffset)
					}
				}
			}
			// Graph inputs' pipeline versions (n_copies > 1) are leafs of
			// ggml's graph copy, placed first.
			ins, err := tr.Result.GraphInputs()
			if err != nil {
				t.Fatal(err)
			}
			leafAt := map[string]ggmltrace.SchedGraphNode{}
			for _, l := range tr.Result.SchedGraph.Leafs {
				leafAt[l.Name] = l
			}
			for _, in := range ins {
				for _, v := range in.Copies {
					l, ok := leafAt[v]
					if !ok {
						t.Errorf("version %s of %s: not among ggml's leafs", v, in.Name)
						continue
					}
					n++
					check(v, byName[v], l.Buft, l.Offset)
				}
			}
			sizes := map[string]int64{}
			for _, b := range g.Buffers {
				sizes[g.Backends[b.Backend].Name] = b.Size
			}
			for be, want := range tr.Result.ComputeBufferSize {
				if sizes[be] != want {
					t.Errorf("compute buffer of %s: ggml %d bytes, graphc %d", be, want, sizes[be])
				}
			}
			t.Logf("%d tensors placed as ggml did; buffers %v", n, sizes)

			best := plan(passes.StrategyBest)
			for k, b := range best.Buffers {
				if b.Size > g.Buffers[k].Size {
					t.Errorf("buffer %s: best %d bytes > ggml %d", b.BufferType, b.Size, g.Buffers[k].Size)
				}
				t.Logf("buffer %s: ggml %d, best %d by %s (lower bound %d, naive %d)", b.BufferType, g.Buffers[k].Size, b.Size, b.Strategy, b.LowerBound, b.NaiveSize)
			}
		})
	}
}

// TestMemoryPipelineCopiesMatchGGML: with n_copies > 1 (ggml's parallel
// mode) every split input's copies and every graph input's versions live
// for the whole evaluation; the GPU buffer of llama_partial grows as ggml's
// did (../ggmltrace/testdata/README.md: 12832 B, 21568 B with 2 copies, 30848 B with
// 4).
func TestMemoryPipelineCopiesMatchGGML(t *testing.T) {
	for n, want := range map[int]int64{1: 12832, 2: 21568, 4: 30848} {
		tr, err := ggmltrace.Load("../ggmltrace/testdata/llama_partial.json")
		if err != nil {
			t.Fatal(err)
		}
		tr.Sched.Parallel, tr.MaxCopies = n > 1, n
		g, backends, opts, err := tr.Graph()
		if err != nil {
			t.Fatal(err)
		}
		g.MemoryStrategy = passes.StrategyGGML
		if err := passes.Run(g, &passes.Context{Backends: backends, Options: opts}, true, ""); err != nil {
			t.Fatal(err)
		}
		if b := g.Buffers[0]; b.Size != want {
			t.Errorf("n_copies %d: %s buffer %d bytes, ggml %d", n, b.BufferType, b.Size, want)
		}
	}
}
