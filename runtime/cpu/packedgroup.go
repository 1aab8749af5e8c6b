package cpu

import (
	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/tensor"
)

// maxGroup is the most products MulMats runs as one task, the
// description's GroupProducts.
const maxGroup = backend.CPUMaxGroup

// MulMats computes MulMat(p.Dst, p.W, x) for every p, with MulMat's results
// bit for bit. Products of one column of x through packed weights of one
// type (a token's Q, K and V, or its gate and up, while generating) run as
// one task: x is quantized once and the weights' row groups are shared out
// over the threads as one product's are, so that the small products stream
// as one long one and the threads wait for each other once, not once per
// product. Other products run one MulMat each.
func (b *Backend) MulMats(x *tensor.Tensor, ps ...engine.Product) {
	if !b.mulMatsPacked(x, ps) {
		for _, p := range ps {
			b.MulMat(p.Dst, p.W, x, ops.MulMatParams{})
		}
	}
}

type groupMember struct {
	p     *packedWeight
	dst   tensor.Tensor
	first int // the member's first unit
}

// packedGroup is the task of one-column products of packed weights, one
// (MulMat) or several (MulMats): units are row groups of the members'
// weights, one after the other.
type packedGroup struct {
	ms      [maxGroup]groupMember
	n       int // members
	units   int
	typ     tensor.DType
	nb      int
	xq      []byte
	xd      []float32
	xc      []int32
	threads int
}

// mulMatsPacked runs ps as one packed task if they qualify (one column of
// x, 2-D weights packed, of one type); it reports whether it did.
func (b *Backend) mulMatsPacked(x *tensor.Tensor, ps []engine.Product) bool {
	if len(ps) < 1 || len(ps) > maxGroup || x.Type != tensor.F32 || x.Ne[1] != 1 || x.Ne[2] != 1 || x.Ne[3] != 1 {
		return false
	}
	t := &b.pgroup
	*t = packedGroup{}
	for i, pr := range ps {
		p := b.packedFor(pr.W)
		if p == nil || p.ne[0] != x.Ne[0] || p.ne[2] != 1 || p.ne[3] != 1 || i > 0 && p.typ != t.typ ||
			pr.Dst.Type != tensor.F32 || pr.Dst.Ne != [4]int{p.ne[1], 1, 1, 1} {
			*t = packedGroup{}
			return false
		}
		t.ms[i] = groupMember{p: p, dst: *pr.Dst, first: t.units}
		t.units += p.groups
		t.typ, t.nb = p.typ, p.nb
	}
	t.n = len(ps)

	// x as one panel of one column, as mulMatPacked quantizes it.
	q := &b.pmm
	*q = packedMulMat{p: t.ms[0].p, n: 1, pc: 1, panels: 1, chunk: 1, nchunk: 1, ne2: 1, r2: 1, r3: 1, batches: 1}
	be, cw := panelSizes(t.typ)
	q.xq, q.xd, q.xc = b.panelBuffers(t.nb, be, cw)
	pt := &b.pq
	*pt = panelTask{t: q, x: *x, typ: t.typ}
	if x.Nb[0] != 4 {
		b.growScratch(1, x.Ne[0])
		pt.scratch = b.scratch
	}
	pt.run(0, 1, 0)
	*pt = panelTask{}
	t.xq, t.xd, t.xc = q.xq, q.xd, q.xc
	*q = packedMulMat{}

	rows := 0
	for _, m := range t.ms[:t.n] {
		rows += m.p.ne[1]
	}
	nchunks, nth := b.guidedChunksFor(2*rows*x.Ne[0]/4, t.units)
	t.threads = nth
	if t.typ == tensor.Q4_K || t.typ == tensor.Q6_K {
		b.pool.runStealing(&b.steal, t, t.units, stealBatchBytes/(t.nb*packBlockBytes(t.typ)), nth)
	} else {
		b.pool.run(t, nchunks, nth)
	}
	*t = packedGroup{}
	return true
}

// stealBatchBytes is about the weights a thread claims at a time of a
// one-column q4_K or q6_K product (runStealing). Each claim is a locked
// compare-and-swap, a full barrier amid the stream: claims of 64 KiB made
// the output head slower than guided chunks, 256 KiB to 2 MiB measured
// alike (docs/performance.md).
const stealBatchBytes = 1 << 20

// runRange streams units [lo, hi), a batch of one thread's range, in order:
// q4_K's and q6_K's units, a group block of 2368 or 3360 bytes per 256 of
// k, make one stream, each kernel's prefetches running ahead into the next
// unit's weights, the next batch's included.
func (t *packedGroup) runRange(lo, hi, _ int) {
	var tile [packRows]float32
	t.stream(lo, hi, tile[:])
}

// member returns the member unit u belongs to and u's row group in it.
func (t *packedGroup) member(u int) (*groupMember, int) {
	i := t.n - 1
	for i > 0 && t.ms[i].first > u {
		i--
	}
	return &t.ms[i], u - t.ms[i].first
}

// run computes a range of units two row groups per kernel call, half the
// range apart: two streams from memory.
func (t *packedGroup) run(chunk, nchunks, _ int) {
	lo, hi := guidedSplit(t.units, chunk, nchunks, t.threads)
	var tile [2 * packRows]float32
	half := (hi - lo) / 2
	for u := lo; u < lo+half; u++ {
		mu, gu := t.member(u)
		mv, gv := t.member(u + half)
		if packedVector2Asm(t.typ, mu.p.group(0, gu), mv.p.group(0, gv), t.xq, t.xd, t.xc, t.nb, tile[:]) {
			t.store(mu, gu, tile[:packRows])
			t.store(mv, gv, tile[packRows:])
			continue
		}
		t.unit(u, tile[:packRows])
		t.unit(u+half, tile[:packRows])
	}
	if (hi-lo)%2 == 1 {
		t.unit(hi-1, tile[:packRows])
	}
}

// stream computes units lo to hi one kernel call each, in order, a
// member's row groups walked in place and each whole group's results
// written straight into a dense dst: a one-column product's group is a
// short kernel call, which lookups and a copy per group add to.
func (t *packedGroup) stream(lo, hi int, tile []float32) {
	k := columnKernelAsm(t.typ)
	if be, cw := panelSizes(t.typ); len(t.xq) < t.nb*be || len(t.xd) < t.nb || len(t.xc) < t.nb*cw {
		bug("packed one-column product: %d blocks: xq %d, xd %d, xc %d", t.nb, len(t.xq), len(t.xd), len(t.xc))
	}
	for lo < hi {
		m, g := t.member(lo)
		end := min(hi, lo+m.p.groups-g)
		gs := m.p.nb * packBlockBytes(m.p.typ)
		w, d := m.p.data[g*gs:m.p.matSize], m.dst.F32s()
		dense := m.dst.Nb[0] == 4
		for ; lo < end; lo, g = lo+1, g+1 {
			switch inPlace := dense && (g+1)*packRows <= m.p.ne[1]; {
			case inPlace && k != nil:
				k(&w[:gs][0], &t.xq[0], &t.xd[0], &t.xc[0], t.nb, &d[g*packRows : (g+1)*packRows][0])
			case inPlace:
				packedKernel(t.typ, 1, w[:gs], t.xq, t.xd, t.xc, t.nb, d[g*packRows:(g+1)*packRows])
			default:
				packedKernel(t.typ, 1, w[:gs], t.xq, t.xd, t.xc, t.nb, tile)
				t.store(m, g, tile)
			}
			w = w[gs:]
		}
	}
}

func (t *packedGroup) unit(u int, tile []float32) {
	m, g := t.member(u)
	packedKernel(t.typ, 1, m.p.group(0, g), t.xq, t.xd, t.xc, t.nb, tile)
	t.store(m, g, tile)
}

// store writes row group g's results into m's dst.
func (t *packedGroup) store(m *groupMember, g int, tile []float32) {
	rows := min(packRows, m.p.ne[1]-g*packRows)
	d, s := m.dst.F32s(), m.dst.Nb[0]
	if s == 4 {
		copy(d[g*packRows:g*packRows+rows], tile[:rows])
		return
	}
	for r := 0; r < rows; r++ {
		d[(g*packRows+r)*s/4] = tile[r]
	}
}
