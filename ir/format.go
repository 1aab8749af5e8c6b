package ir

import (
	"fmt"
	"strings"

	"github.com/graphc/graphc/ops"
)

// Format prints the graph deterministically, one declaration or node per
// line in graph order, then the plan (splits and buffers) once the passes
// have made one. Golden tests compare it.
func (g *Graph) Format() string {
	var b strings.Builder
	for _, d := range g.Dims {
		if d.AtMost != nil {
			fmt.Fprintf(&b, "dim %s <= %s <= %d\n", d.Name, d.AtMost.Name, d.Bound)
		} else if d.Bounded {
			fmt.Fprintf(&b, "dim %s <= %d\n", d.Name, d.Bound)
		} else {
			fmt.Fprintf(&b, "dim %s = %d\n", d.Name, d.Bound)
		}
	}
	if len(g.Backends) > 0 {
		names := make([]string, len(g.Backends))
		for i, be := range g.Backends {
			names[i] = be.Name
		}
		fmt.Fprintf(&b, "backends %s\n", strings.Join(names, ", "))
	}
	for _, t := range g.Leafs {
		fmt.Fprintf(&b, "%s %s: %s%s%s\n", t.Kind, t.Name, t.Type, t.ShapeString(), g.annotations(t))
	}
	for _, in := range g.InputCopies {
		for _, c := range in.Copies {
			if c != in.Tensor {
				fmt.Fprintf(&b, "copy %s = %s: %d bytes%s\n", c.Name, in.Tensor.Name, in.Tensor.MaxBytes(), g.annotations(c))
			}
		}
	}
	for i, t := range g.Nodes {
		for _, s := range g.Splits {
			if s.First == i {
				fmt.Fprintf(&b, "split %s\n", g.Backends[s.Backend].Name)
				for _, in := range s.Inputs {
					experts := ""
					if in.Experts != nil {
						experts = fmt.Sprintf(", the experts %s uses", in.Experts.IDs.Name)
					}
					for _, c := range in.Copies {
						fmt.Fprintf(&b, "  copy %s = %s: %d bytes%s%s\n", c.Name, in.Tensor.Name, in.Tensor.MaxBytes(), experts, g.annotations(c))
					}
				}
			}
		}
		r := g.RegionOf(i)
		if r != nil && r.First == i {
			b.WriteString(g.regionHeader(r))
		}
		srcs := make([]string, len(t.Src))
		for k, s := range t.Src {
			srcs[k] = s.Name
		}
		fmt.Fprintf(&b, "%s = %s(%s)%s: %s%s", t.Name, t.Op, strings.Join(srcs, ", "), t.paramString(), t.Type, t.ShapeString())
		if !t.Contiguous() || t.Op == ops.View {
			fmt.Fprintf(&b, " nb%s", shapeString(t.Nb))
		}
		if t.ViewSrc != nil {
			fmt.Fprintf(&b, " in %s+%s", t.ViewSrc.Name, t.ViewOffs)
		}
		if t.Output {
			b.WriteString(" output")
		}
		if r != nil {
			b.WriteString(regionSlices(r, t))
		}
		b.WriteString(g.annotations(t))
		b.WriteString("\n")
	}
	for _, buf := range g.Buffers {
		fmt.Fprintf(&b, "buffer %s: %d bytes (lower bound %d, naive %d)", buf.BufferType, buf.Size, buf.LowerBound, buf.NaiveSize)
		if buf.Strategy != "" {
			fmt.Fprintf(&b, " by %s", buf.Strategy)
		}
		if len(buf.Chunks) > 1 {
			fmt.Fprintf(&b, " in chunks %v", buf.Chunks)
		}
		b.WriteString("\n")
	}
	for k, be := range g.Backends {
		if ws, n := g.PackedWeights(k); len(ws) > 0 {
			plural := "s"
			if len(ws) == 1 {
				plural = ""
			}
			fmt.Fprintf(&b, "packed for %s: %d weight%s (%s), %d bytes (%s) of copies its mul_mats read\n", be.Name, len(ws), plural, typeCounts(ws), n, humanBytes(n))
		}
	}
	return b.String()
}

// typeCounts says how many of ts have each type: "q4_0 12, q8_0 1".
func typeCounts(ts []*Tensor) string {
	counts := map[DType]int{}
	var order []DType
	for _, t := range ts {
		if counts[t.Type] == 0 {
			order = append(order, t.Type)
		}
		counts[t.Type]++
	}
	var parts []string
	for _, dt := range order {
		parts = append(parts, fmt.Sprintf("%s %d", dt, counts[dt]))
	}
	return strings.Join(parts, ", ")
}

// humanBytes is n in the largest binary unit it reaches: "562.3 MiB".
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func (g *Graph) annotations(t *Tensor) string {
	s := ""
	if t.Placement != "" {
		s += " on " + t.Placement
	}
	if t.Backend >= 0 && t.Backend < len(g.Backends) {
		s += " @" + g.Backends[t.Backend].Name
		if t.Cause != "" {
			s += " " + t.Cause
		}
	}
	if t.IsPacked() && t.Packed.Backend >= 0 && t.Packed.Backend < len(g.Backends) {
		s += fmt.Sprintf(" packed for %s: %d bytes", g.Backends[t.Packed.Backend].Name, t.Packed.Bytes)
		if t.Packed.Release {
			s += ", released once packed"
		}
	}
	if t.Group > 0 {
		s += fmt.Sprintf(" first of %d products in one call", t.Group)
	}
	switch t.Alloc.Kind {
	case AllocCompute:
		if t.Alloc.Chunk > 0 {
			s += fmt.Sprintf(" [%s#%d+%d]", g.Buffers[t.Alloc.Buffer].BufferType, t.Alloc.Chunk, t.Alloc.Offset)
		} else {
			s += fmt.Sprintf(" [%s+%d]", g.Buffers[t.Alloc.Buffer].BufferType, t.Alloc.Offset)
		}
	}
	return s
}

func (t *Tensor) paramString() string {
	if s := ops.Format(t.Params); s != "" {
		return " " + s
	}
	return ""
}
