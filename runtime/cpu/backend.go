package cpu

import (
	"runtime"

	"github.com/graphc/graphc/runtime/engine"
)

var _ engine.Kernels = (*Backend)(nil)

// Backend is the CPU backend: the kernels of engine.Kernels and the worker
// goroutines that run them. Its methods must not be called concurrently.
type Backend struct {
	pool       *pool
	closed     bool
	cleanup    runtime.Cleanup // stops the workers of a Backend dropped without Close
	scratch    [][]float32     // per thread, grown by the caller before a dispatch
	xpack      []float32       // MulMat's x converted to dense float32 columns
	gemmA      []float32       // the packed GEMM's packed a
	gemmB      []float32       // the packed GEMM's packed x
	qx         []byte          // MulMat's x in a block type's vec_dot_type (quant.go)
	qrow       []float32       // one strided row of that x, gathered
	qxd        []float32       // the q8_0 x's block scales as float32
	qxs        []int32         // the q8_0 x's block quant sums (q4_0 products)
	faPartials []float32       // FlashAttnExt's split-KV partial sums
	faQ        [][]byte        // per thread, FlashAttnExt's q row in a block K's vec_dot_type
	kvRow      []float32       // a cpy into a block cache: one source row
	kvEnc      []byte          // and that row encoded
	unpacked   []byte          // GetRows' row rebuilt from a packed copy (unpack.go)

	// One task value per kernel family, reused by every call so that a
	// dispatch does not allocate.
	mm    mulMatTask
	gemmT gemmTask
	pack  packTask
	bin   binaryTask
	un    unaryTask
	norm  normTask
	sm    softMaxTask
	fa    faTask
	rope  ropeTask
	ropeT ropeTableTask

	ropeMemo [4]ropeMemo // the last rope tables (see ropeTable)
	ropeNext int         // the next one to replace
	rows     getRowsTask
	cpy      cpyTask
	qmm      blockMulMat
	pmm      packedMulMat
	pgroup   packedGroup
	steal    stealing
	pq       panelTask
	moe      moeState
	packed   map[*byte]*packedWeight // Pack's copies by their weight's first byte, shared with the lanes

	// lanes are single-threaded backends, one per thread, that run the
	// parts of a parallel region (RunParts).
	lanes []*Backend
	parts partsTask
}

// New starts a backend with the given number of threads, the caller
// included; threads <= 0 means runtime.GOMAXPROCS(0).
func New(threads int) *Backend {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	initTables()
	b := &Backend{pool: newPool(threads), scratch: make([][]float32, threads), packed: map[*byte]*packedWeight{}}
	if threads > 1 {
		for range threads {
			b.lanes = append(b.lanes, &Backend{pool: newPool(1), scratch: make([][]float32, 1), packed: b.packed})
		}
	}
	// The workers reference only the pool (its task is cleared after every
	// op), so an unreachable Backend can still be collected and stop them.
	b.cleanup = runtime.AddCleanup(b, (*pool).close, b.pool)
	return b
}

// Close stops the worker goroutines. The backend must not be used afterwards.
func (b *Backend) Close() {
	if b.closed {
		return
	}
	b.closed = true
	for _, l := range b.lanes {
		l.closed = true
	}
	b.cleanup.Stop()
	b.pool.close()
	for _, p := range b.packed {
		p.free()
	}
	clear(b.packed)
}

// Threads is the number of threads kernels are split over.
func (b *Backend) Threads() int { return b.pool.n }

// minWork is the least work worth a chunk of its own (see chunksFor); tests
// lower it to split even tiny ops.
var minWork = 4000

// missNs is the work, in chunksFor's units, of a cache line that comes
// from memory in an op that reads or writes few elements per line (a K/V
// cache once per token): such ops are bound by misses, not arithmetic,
// and two threads have twice the misses in flight.
const missNs = 20

// chunksPerThread is how many chunks per thread a big op is cut into, so
// that threads that start late or run slow (a shared machine) even out.
const chunksPerThread = 4

// chunksFor cuts an op with the given work (in units of roughly a
// nanosecond of single-thread time) over at most units independent pieces:
// one chunk per minWork, so that each covers the dispatch cost (~0.4 µs)
// several times, up to chunksPerThread per thread; nth is the number of
// threads worth waking.
func (b *Backend) chunksFor(work, units int) (nchunks, nth int) {
	if b.closed {
		bug("use of a closed Backend")
	}
	nchunks = min(work/minWork, units, chunksPerThread*b.pool.n, maxChunks)
	if nchunks < 1 {
		nchunks = 1
	}
	return nchunks, min(nchunks, b.pool.n)
}

// parallel runs t over units (rows) with the given total work.
func (b *Backend) parallel(t task, work, units int) {
	nchunks, nth := b.chunksFor(work, units)
	b.pool.run(t, nchunks, nth)
}

// guidedChunksPerThread is how many chunks per thread guidedChunksFor cuts
// an op into: shares that halve every round (guidedSplit) end in ones
// 1/2^7 of the first round's.
const guidedChunksPerThread = 8

// guidedChunksFor is chunksFor for a task that takes its units by
// guidedSplit(units, chunk, nchunks, nth).
func (b *Backend) guidedChunksFor(work, units int) (nchunks, nth int) {
	nchunks, nth = b.chunksFor(work, units)
	if nth > 1 {
		nchunks = min(work/minWork, units, guidedChunksPerThread*nth, maxChunks)
	}
	return nchunks, nth
}

// growScratch makes the first nth threads' scratch at least n floats.
func (b *Backend) growScratch(nth, n int) {
	for i := 0; i < nth; i++ {
		if cap(b.scratch[i]) < n {
			b.scratch[i] = make([]float32, n)
		}
		b.scratch[i] = b.scratch[i][:cap(b.scratch[i])]
	}
}

// A PartTask is a parallel region of a generated program: RunPart runs all
// of the region's nodes on units [lo, hi) with lane, a backend the part has
// to itself.
type PartTask interface {
	RunPart(lane *Backend, lo, hi int)
}

// RunParts runs a parallel region: units cut into one part per thread, the
// parts at once, each on its own single-threaded lane, with no barrier
// until all are done. With fewer units than threads it runs the region as
// one part on b itself, whose kernels still split every node over the
// threads (a decode step of one token keeps both cores busy).
func (b *Backend) RunParts(t PartTask, units int) {
	if b.closed {
		bug("use of a closed Backend")
	}
	parts := min(len(b.lanes), units)
	if parts <= 1 {
		t.RunPart(b, 0, units)
		return
	}
	b.parts = partsTask{t: t, units: units, lanes: b.lanes}
	b.pool.run(&b.parts, parts, parts)
	b.parts = partsTask{}
}

// partsTask adapts a PartTask to the pool: chunk i is part i, run on the
// lane of the thread that claimed it.
type partsTask struct {
	t     PartTask
	units int
	lanes []*Backend
}

func (p *partsTask) run(chunk, nchunks, tid int) {
	lo, hi := split(p.units, chunk, nchunks)
	p.t.RunPart(p.lanes[tid], lo, hi)
}
