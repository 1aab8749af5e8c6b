package interp

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/graphc/graphc/ir"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/tensor"
)

// ErrTooBig is returned, wrapped, for a plan or an evaluation over the
// budget of Config.
var ErrTooBig = errors.New("over the interpreter's budget")

// Config shapes a Machine.
type Config struct {
	// Threads of the CPU backend, the caller included (cpu.New): <= 0 is
	// every core.
	Threads int
	// MaxBytes bounds the memory a plan may take: its compute buffers,
	// weights and state, and an evaluation's filled inputs. 0: no bound.
	MaxBytes int64
	// MaxWork bounds an evaluation's work, estimated as Σ over computed
	// nodes of elements × the longest source row (a bound on any op's
	// multiply-adds). 0: no bound.
	MaxWork int64
	// Weights, by name, take the place of the fill rule's values: a
	// model file's tensors (gguf.Mapped.Weights of Decls), so that a plan
	// compiled for a file can be compared with another implementation
	// on that file. Each must have its weight's type and shape; Load
	// keeps them, not copies. Weights not named here are filled.
	Weights map[string]tensor.Tensor
	// Observe, when set, is called with every node an evaluation computes,
	// in plan order, once its value is final (a parallel region's nodes
	// once the region ends). t is valid only during the call.
	Observe func(name string, t *tensor.Tensor)
}

// Machine holds one plan's memory and runs evaluations of it. It is not
// safe for concurrent use.
type Machine struct {
	g       *ir.Graph
	cfg     Config
	be      *cpu.Backend
	chunks  [][][]byte                   // by buffer, then chunk
	params  map[*ir.Tensor]tensor.Tensor // weights and state, each in memory of its own
	kernels map[ops.Op]reflect.Value
	bytes   int64 // what Load allocated, against Config.MaxBytes
	// The dims-independent sizes and view extents, computed once: an
	// evaluation only substitutes the dims (a generated token's fixed cost).
	maxBytes map[*ir.Tensor]int64
	viewEnds map[*ir.Tensor]*ir.Expr // a view's offset plus its bytes
}

// maxBytesOf is t.MaxBytes, computed once per tensor.
func (m *Machine) maxBytesOf(t *ir.Tensor) int64 {
	n, ok := m.maxBytes[t]
	if !ok {
		n = t.MaxBytes()
		m.maxBytes[t] = n
	}
	return n
}

// Load allocates g's memory as the plan lays it out and fills weights and
// state by the conformance traces' rule, but for Config.Weights. g must be a complete plan
// (compiler.Compile's Result.Graph); every backend's nodes run on the CPU.
func Load(g *ir.Graph, cfg Config) (*Machine, error) {
	if len(g.Splits) == 0 && len(g.Nodes) > 0 {
		panic("BUG: interp: the plan has nodes but no splits")
	}
	m := &Machine{g: g, cfg: cfg, params: map[*ir.Tensor]tensor.Tensor{}, kernels: map[ops.Op]reflect.Value{},
		maxBytes: map[*ir.Tensor]int64{}, viewEnds: map[*ir.Tensor]*ir.Expr{}}
	for _, t := range g.Nodes {
		if t.ViewSrc != nil {
			m.viewEnds[t] = ir.Add(t.ViewOffs, t.Bytes())
		}
	}
	if err := m.budget(); err != nil {
		return nil, err
	}
	for _, t := range g.Nodes {
		if t.Op.IsView() || m.kernels[t.Op].IsValid() {
			continue
		}
		k, err := kernelOf(t.Op)
		if err != nil {
			return nil, fmt.Errorf("interp: %w", err)
		}
		m.kernels[t.Op] = k
	}
	for _, b := range g.Buffers {
		var pieces [][]byte
		for _, size := range b.Chunks {
			pieces = append(pieces, tensor.NewBuffer(int(size)))
		}
		m.chunks = append(m.chunks, pieces)
	}
	used := 0
	// k counts weights and state together, in declaration order: the k of
	// the fill rule, as in generated programs' weightFillIndex.
	for k, t := range g.Params {
		var ne [4]int
		for i, e := range t.Ne {
			v, _ := e.Constant()
			ne[i] = int(v)
		}
		if w, ok := cfg.Weights[t.Name]; ok && t.Kind == ir.KindWeight {
			if w.Type != t.Type || w.Ne != ne || !w.Contiguous() {
				return nil, fmt.Errorf("interp: weight %s is %s%v, the plan wants contiguous %s%v", t.Name, w.Type, w.Ne, t.Type, ne)
			}
			m.params[t] = w
			used++
			continue
		}
		x := tensor.NewTensor(t.Type, ne)
		tensor.Fill(&x, tensor.GGMLFill(k))
		m.params[t] = x
	}
	if used != len(cfg.Weights) {
		return nil, fmt.Errorf("interp: %d of Config.Weights name no weight of the plan", len(cfg.Weights)-used)
	}
	m.be = cpu.New(cfg.Threads)
	// Every backend's nodes run on the one CPU backend, so it makes every
	// packed copy the plan has, in declaration order as generated New does.
	for _, t := range g.Params {
		if !t.IsPacked() {
			continue
		}
		w := m.params[t]
		if err := m.be.Pack(&w, t.Packed.Release); err != nil {
			m.be.Close()
			return nil, fmt.Errorf("interp: packing weight %s for %s: %w", t.Name, g.Backends[t.Packed.Backend].Name, err)
		}
	}
	return m, nil
}

// WeightDecls lists g's weights as declarations, for loading them from a
// model file (gguf.Mapped.Weights) into Config.Weights.
func WeightDecls(g *ir.Graph) []tensor.Decl {
	var out []tensor.Decl
	for _, t := range g.Params {
		if t.Kind != ir.KindWeight {
			continue
		}
		d := tensor.Decl{Name: t.Name, Type: t.Type}
		for i, e := range t.Ne {
			v, _ := e.Constant()
			d.Ne[i] = int(v)
		}
		out = append(out, d)
	}
	return out
}

// budget checks the plan's memory against MaxBytes before anything is
// allocated, and that weights and state have the fixed shapes generated
// code needs.
func (m *Machine) budget() error {
	g := m.g
	total := int64(0)
	add := func(n int64, ok bool, what string) error {
		if ok {
			total, ok = ir.CheckedAdd(total, n)
		}
		if !ok || n < 0 || (m.cfg.MaxBytes > 0 && total > m.cfg.MaxBytes) {
			return fmt.Errorf("interp: %s: %w of %d bytes", what, ErrTooBig, m.cfg.MaxBytes)
		}
		return nil
	}
	for _, t := range g.Params {
		var ne [4]int64
		for i, e := range t.Ne {
			v, ok := e.Constant()
			if !ok {
				return fmt.Errorf("%s: %s %s: shape %s depends on a bounded dim; weights and state need fixed shapes", t.Pos, t.Kind, t.Name, t.ShapeString())
			}
			ne[i] = v
		}
		n, ok := denseBytes(t.Type, ne)
		if err := add(n, ok, fmt.Sprintf("%s %s", t.Kind, t.Name)); err != nil {
			return err
		}
		if err := add(t.Packed.Bytes, true, fmt.Sprintf("the packed copy of %s", t.Name)); err != nil {
			return err
		}
	}
	for _, b := range g.Buffers {
		for _, size := range b.Chunks {
			if err := add(size, true, "buffer "+b.BufferType); err != nil {
				return err
			}
		}
	}
	// The planned sizes come from unchecked arithmetic: a tensor whose
	// size at the bounds overflows has no true place in them.
	atBounds := func(d *ir.Dim) int64 { return d.Bound }
	for _, t := range g.Tensors {
		if t.Alloc.Kind != ir.AllocCompute {
			continue
		}
		ne, ok := evalAll(t.Ne, atBounds)
		var n int64
		if ok {
			n, ok = denseBytes(t.Type, ne)
		}
		if !ok || (m.cfg.MaxBytes > 0 && n > m.cfg.MaxBytes) {
			return fmt.Errorf("interp: %s %s%s at the dims' bounds: %w of %d bytes", t.Kind, t.Name, t.ShapeString(), ErrTooBig, m.cfg.MaxBytes)
		}
	}
	m.bytes = total
	return nil
}

// Close stops the CPU backend's workers.
func (m *Machine) Close() {
	if m.be != nil {
		m.be.Close()
	}
}

// placed is where a tensor lives during one evaluation.
type placed struct {
	buf    []byte
	off    int64
	ne, nb [4]int64
}

// at is the whole tensor, or with axis >= 0 the elements [lo, hi) of that
// axis, per elements per unit (a part of a parallel region).
func (p *placed) at(t *ir.Tensor, axis int, per int64, lo, hi int) tensor.Tensor {
	var ne, nb [4]int
	for i := range 4 {
		ne[i], nb[i] = int(p.ne[i]), int(p.nb[i])
	}
	off := int(p.off)
	if axis >= 0 {
		off += lo * int(per) * nb[axis]
		ne[axis] = (hi - lo) * int(per)
	}
	return tensor.At(p.buf, off, t.Type, ne, nb)
}

// evaluation is the state of one Eval.
type evaluation struct {
	m      *Machine
	dim    func(*ir.Dim) int64
	where  map[*ir.Tensor]*placed
	inputs map[*ir.Tensor]tensor.Tensor
}

// Eval runs one evaluation with the bounded dims valued by dims (every
// bounded dim, by name) and returns the outputs in declaration order, each
// in memory of its own. inputs may supply any graph input by name, in its
// type and shape at these dims, contiguous; the others are filled by their
// fill expressions. State persists from one evaluation to the next.
func (m *Machine) Eval(dims map[string]int, inputs map[string]tensor.Tensor) (out []engine.Named, err error) {
	g := m.g
	val, err := m.dimValues(dims)
	if err != nil {
		return nil, err
	}
	ev := &evaluation{m: m, dim: func(d *ir.Dim) int64 {
		if !d.Bounded {
			return d.Bound
		}
		return val[d]
	}, where: map[*ir.Tensor]*placed{}, inputs: map[*ir.Tensor]tensor.Tensor{}}
	if err := ev.checkWork(); err != nil {
		return nil, err
	}
	if err := ev.takeInputs(inputs); err != nil {
		return nil, err
	}
	if err := ev.checkIndices(); err != nil {
		return nil, err
	}
	if err := ev.checkViews(); err != nil {
		return nil, err
	}
	if err := ev.place(); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			ke, ok := r.(*engine.KernelError)
			if !ok {
				panic(r)
			}
			out, err = nil, ke
		}
	}()
	for _, t := range g.Inputs {
		if x, ok := ev.where[t]; ok {
			dst, src := x.at(t, -1, 0, 0, 0), ev.inputs[t]
			tensor.Copy(&dst, &src)
		}
	}
	for _, s := range g.Splits {
		ev.runSplit(s)
	}
	for _, t := range g.Outputs {
		v := ev.where[t].at(t, -1, 0, 0, 0)
		out = append(out, engine.Named{Name: t.Name, Tensor: tensor.Clone(&v)})
	}
	return out, nil
}

// dimValues checks dims as generated code checks Dims.
func (m *Machine) dimValues(dims map[string]int) (map[*ir.Dim]int64, error) {
	val := map[*ir.Dim]int64{}
	known := map[string]bool{}
	for _, d := range m.g.Dims {
		if !d.Bounded {
			continue
		}
		known[d.Name] = true
		v, ok := dims[d.Name]
		if !ok {
			return nil, fmt.Errorf("dim %s: no value given", d.Name)
		}
		bound, what := d.Bound, fmt.Sprint(d.Bound)
		if d.AtMost != nil {
			bound = val[d.AtMost]
			what = fmt.Sprintf("%s = %d", d.AtMost.Name, bound)
		}
		if v < 0 || int64(v) > bound {
			return nil, fmt.Errorf("dim %s = %d is outside [0, %s]", d.Name, v, what)
		}
		val[d] = int64(v)
	}
	for name := range dims {
		if !known[name] {
			return nil, fmt.Errorf("dim %s: not a bounded dim of the model", name)
		}
	}
	return val, nil
}

// checkWork holds the evaluation to Config's budget: filled inputs'
// bytes, and the work of inputs' fills and of the nodes.
func (ev *evaluation) checkWork() error {
	cfg := ev.m.cfg
	work, bytes := int64(0), ev.m.bytes
	over := func(what string) error {
		return fmt.Errorf("interp: %s: %w (at most %d bytes, %d work)", what, ErrTooBig, cfg.MaxBytes, cfg.MaxWork)
	}
	for _, t := range ev.m.g.Inputs {
		ne, ok := evalAll(t.Ne, ev.dim)
		var n, b int64
		if ok {
			n, ok = elems(ne)
		}
		if ok {
			b, ok = denseBytes(t.Type, ne)
		}
		if ok {
			work, ok = ir.CheckedAdd(work, n)
		}
		if ok {
			bytes, ok = ir.CheckedAdd(bytes, b)
		}
		if !ok || (cfg.MaxBytes > 0 && bytes > cfg.MaxBytes) {
			return over("input " + t.Name)
		}
	}
	for _, t := range ev.m.g.Nodes {
		if t.Op.IsView() {
			continue
		}
		ne, ok := evalAll(t.Ne, ev.dim)
		var n int64
		if ok {
			n, ok = elems(ne)
		}
		row := int64(1)
		for _, s := range t.Src {
			if ok {
				var v int64
				v, ok = s.Ne[0].Eval(ev.dim)
				row = max(row, v)
			}
		}
		if ok {
			n, ok = ir.CheckedMul(n, row)
		}
		if ok {
			work, ok = ir.CheckedAdd(work, n)
		}
		if !ok || (cfg.MaxWork > 0 && work > cfg.MaxWork) {
			return over("node " + t.Name)
		}
	}
	return nil
}

// takeInputs checks the inputs given and fills the others.
func (ev *evaluation) takeInputs(given map[string]tensor.Tensor) error {
	g := ev.m.g
	known := map[string]bool{}
	for _, t := range g.Inputs {
		known[t.Name] = true
		ne64, _ := evalAll(t.Ne, ev.dim) // checkWork saw them fit
		var ne [4]int
		for i, v := range ne64 {
			ne[i] = int(v)
		}
		x, ok := given[t.Name]
		if !ok {
			x = tensor.NewTensor(t.Type, ne)
			fill := t.Fill
			if fill == nil {
				fill = ir.DefaultFill(t.Type)
			}
			tensor.Fill(&x, func(i int, c [4]int) float64 {
				return fill.Eval(int64(i), [4]int64{int64(c[0]), int64(c[1]), int64(c[2]), int64(c[3])}, ev.dim)
			})
		}
		want := tensor.Decl{Type: t.Type, Ne: ne}
		switch got := (tensor.Decl{Type: x.Type, Ne: x.Ne}); {
		case got.Type != want.Type || got.Ne != want.Ne:
			return fmt.Errorf("input %s: got %s, want %s (%s%s)", t.Name, &got, &want, t.Type, t.ShapeString())
		case !x.Contiguous() || len(x.Data) < x.Span():
			return fmt.Errorf("input %s: not contiguous, or short of data", t.Name)
		}
		ev.inputs[t] = x
	}
	for name := range given {
		if !known[name] {
			return fmt.Errorf("input %s: not an input of the model", name)
		}
	}
	return nil
}

// checkIndices checks every input get_rows reads as row indices against
// its table, as generated code's Submit does.
func (ev *evaluation) checkIndices() error {
	for _, t := range ev.m.g.Nodes {
		if t.Op != ops.GetRows || t.Src[1].Kind != ir.KindInput {
			continue
		}
		table, idx := t.Src[0], ev.inputs[t.Src[1]]
		rows, ok := table.Ne[1].Eval(ev.dim)
		if !ok {
			return fmt.Errorf("get_rows %s: the rows of %s overflow", t.Name, table.Name)
		}
		n := idx.NElem()
		if err := engine.CheckIndices(t.Src[1].Name, table.Name, idx.I32s()[:max(n, 0)], int(rows)); err != nil {
			return err
		}
	}
	return nil
}

// checkViews is generated code's check that a view whose extent depends on
// the dims stays inside its source, with its message.
func (ev *evaluation) checkViews() error {
	for _, t := range ev.m.g.Nodes {
		if t.ViewSrc == nil || !ev.m.g.InGraph(t) {
			continue
		}
		end := ev.m.viewEnds[t]
		lo, ok1 := t.ViewOffs.Eval(ev.dim)
		hi, ok2 := end.Eval(ev.dim)
		size := ev.m.maxBytesOf(t.ViewSrc)
		if !ok1 || !ok2 || lo < 0 || hi > size {
			var dimText []string
			for _, d := range t.ViewOffs.Dims(end.Dims(nil)) {
				dimText = append(dimText, fmt.Sprintf("%s = %d", d.Name, ev.dim(d)))
			}
			return fmt.Errorf("%s: view %s of %s covers bytes [%d, %d), outside its %d bytes (%s)", t.Pos, t.Name, t.ViewSrc.Name, lo, hi, size, strings.Join(dimText, ", "))
		}
	}
	return nil
}

// place computes where every tensor the evaluation touches lives, with
// overflow checks, and checks it against its memory: a view outside its
// source's or stepping backwards is an error, a computed tensor outside
// what the plan reserved for it a compiler bug.
func (ev *evaluation) place() error {
	g := ev.m.g
	var all []*ir.Tensor
	all = append(all, g.Leafs...)
	all = append(all, g.Nodes...)
	for _, s := range g.Splits {
		for _, in := range s.Inputs {
			all = append(all, in.Tensor, in.Copies[0])
		}
	}
	for _, t := range all {
		if _, ok := ev.where[t]; ok || !g.InGraph(t) {
			continue
		}
		p, err := ev.placeOne(t)
		if err != nil {
			return err
		}
		ev.where[t] = p
	}
	return nil
}

func (ev *evaluation) placeOne(t *ir.Tensor) (*placed, error) {
	root := t.Root()
	p := &placed{}
	// reserved is what the plan gave root, live what root holds at these
	// dims: ggml_view_* asserts that a view lies inside its source's
	// ggml_nbytes, so live bounds a view even where reserved is larger.
	var reserved, live int64
	switch root.Alloc.Kind {
	case ir.AllocCompute:
		a := root.Alloc
		p.buf, p.off = ev.m.chunks[a.Buffer][a.Chunk], a.Offset
		reserved = ev.m.maxBytesOf(root)
		ne, ok1 := evalAll(root.Ne, ev.dim)
		nb, ok2 := evalAll(root.Nb, ev.dim)
		_, hi, _, ok3 := extent(root.Type, ne, nb)
		if !ok1 || !ok2 || !ok3 {
			return nil, fmt.Errorf("%s: %s %s: its size overflows at these dims", root.Pos, root.Kind, root.Name)
		}
		live = hi
	case ir.AllocWeight, ir.AllocState:
		p.buf = ev.m.params[root].Data
		reserved = int64(len(p.buf))
		live = reserved
	default:
		panic(fmt.Sprintf("BUG: interp: tensor %s (root %s) has no allocation", t.Name, root.Name))
	}
	ne, ok1 := evalAll(t.Ne, ev.dim)
	nb, ok2 := evalAll(t.Nb, ev.dim)
	start := int64(0)
	ok3 := true
	if t.ViewSrc != nil {
		start, ok3 = t.ViewOffs.Eval(ev.dim)
	}
	lo, hi, backwards, ok4 := extent(t.Type, ne, nb)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, fmt.Errorf("%s: %s %s: its size or offset overflows at these dims", t.Pos, t.Kind, t.Name)
	}
	if t.ViewSrc != nil && (backwards || start+lo < 0 || start+hi > live) {
		return nil, fmt.Errorf("%s: view %s of %s addresses bytes [%d, %d) with strides %v, outside the %d bytes %s holds at these dims, or backwards",
			t.Pos, t.Name, root.Name, start+lo, start+hi, nb, live, root.Name)
	}
	if t.ViewSrc == nil && (lo < 0 || hi > reserved) {
		panic(fmt.Sprintf("BUG: interp: %s %s takes bytes [%d, %d) at these dims, the plan reserved %d", t.Kind, t.Name, lo, hi, reserved))
	}
	p.ne, p.nb, p.off = ne, nb, p.off+start
	if p.off+hi > int64(len(p.buf)) {
		panic(fmt.Sprintf("BUG: interp: %s %s ends at byte %d of its %d-byte buffer", t.Kind, t.Name, p.off+hi, len(p.buf)))
	}
	return p, nil
}

// runSplit copies split s's inputs in and computes its nodes.
func (ev *evaluation) runSplit(s *ir.Split) {
	g := ev.m.g
	for _, in := range s.Inputs {
		dst := ev.where[in.Copies[0]].at(in.Copies[0], -1, 0, 0, 0)
		src := ev.where[in.Tensor].at(in.Tensor, -1, 0, 0, 0)
		tensor.Copy(&dst, &src)
	}
	whole := func(t *ir.Tensor) *tensor.Tensor {
		v := ev.where[t].at(t, -1, 0, 0, 0)
		return &v
	}
	for i := s.First; i < s.End; i++ {
		if r := g.RegionOf(i); r != nil {
			units, _ := r.Units.Eval(ev.dim)
			ev.m.be.RunParts(&regionParts{ev: ev, r: r}, int(units))
			for _, t := range g.Nodes[r.First:r.End] {
				ev.observe(t, whole)
			}
			i = r.End - 1
			continue
		}
		t := g.Nodes[i]
		if t.Op.IsView() {
			continue
		}
		call(ev.m.kernels[t.Op], ev.m.be, t, whole)
		ev.observe(t, whole)
	}
}

// observe hands a computed node to Config.Observe.
func (ev *evaluation) observe(t *ir.Tensor, whole func(*ir.Tensor) *tensor.Tensor) {
	if ev.m.cfg.Observe != nil && !t.Op.IsView() {
		ev.m.cfg.Observe(t.Name, whole(t))
	}
}

// regionParts runs a parallel region as generated code's regionK methods
// do: every node of the region on the units [lo, hi) of a part, each
// tensor sliced as the region says.
type regionParts struct {
	ev *evaluation
	r  *ir.Region
}

func (p *regionParts) RunPart(lane *cpu.Backend, lo, hi int) {
	ev, r := p.ev, p.r
	for _, t := range ev.m.g.Nodes[r.First:r.End] {
		dst, ok := r.Dst[t]
		if !ok {
			continue
		}
		srcs := r.Src[t]
		slice := func(x *ir.Tensor, s ir.Slice) *tensor.Tensor {
			v := ev.where[x].at(x, s.Axis, s.Per, lo, hi)
			return &v
		}
		call(ev.m.kernels[t.Op], lane, t, func(x *ir.Tensor) *tensor.Tensor {
			if x == t {
				return slice(t, dst)
			}
			for i, s := range t.Src {
				if s == x {
					return slice(x, srcs[i])
				}
			}
			panic(fmt.Sprintf("BUG: interp: node %s has no source %s", t.Name, x.Name))
		})
	}
}
