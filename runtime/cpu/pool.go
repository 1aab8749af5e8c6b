package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// A task is one kernel invocation cut into chunks; run(chunk, nchunks, tid)
// computes one chunk on thread tid (0 is the caller), which selects the
// per-thread scratch. Tasks are fields of Backend, so handing one to the
// pool does not allocate.
type task interface {
	run(chunk, nchunks, tid int)
}

// Spinning: a waiter polls its condition for up to spinTime before it parks
// on a channel, yielding the processor every yieldEvery polls so that more
// spinning goroutines than Ps (threads > GOMAXPROCS) still make progress.
// A parked goroutine costs a wake-up that on a virtual machine means waking
// its vCPU: measured at hundreds of microseconds to milliseconds on a busy
// host, where a token's decode has ~120 products and gaps between them.
// ggml's threads spin through a whole graph for the same reason. spinTime
// covers the gaps of one evaluation (serial small ops, a caller waiting for
// the last chunk of a big product): with 100–200 µs of polling, generation
// of the 1B llama file ran 20–30 % slower on this 2-vCPU machine.
const (
	spinTime   = 3 * time.Millisecond
	yieldEvery = 1 << 10
)

// parker lets one goroutine wait for a condition another makes true: spin,
// then park. The notifier must make the condition true before notify.
type parker struct {
	parked atomic.Int32 // 1 while the waiter is (about to be) blocked on ch
	ch     chan struct{}
}

func (p *parker) wait(ready func() bool) {
	var start time.Time
	for i := 1; ; i++ {
		if ready() {
			return
		}
		if i%yieldEvery == 0 {
			runtime.Gosched()
			if i == yieldEvery {
				start = time.Now()
			} else if time.Since(start) > spinTime {
				break
			}
		}
	}
	for {
		p.parked.Store(1)
		if ready() {
			if !p.parked.CompareAndSwap(1, 0) {
				<-p.ch // a notifier claimed the wake-up: take its token
			}
			return
		}
		<-p.ch
		if ready() {
			return
		}
	}
}

func (p *parker) notify() {
	if p.parked.Load() == 1 && p.parked.CompareAndSwap(1, 0) {
		p.ch <- struct{}{}
	}
}

// worker is one persistent goroutine's parker, padded to its own cache lines.
type worker struct {
	wake parker
	_    [128 - 16]byte
}

// The job word: generation, next unclaimed chunk and chunk count in one
// atomic, so that a claim (a CAS that bumps next) can only succeed on the job
// it was read from, however late a worker gets to it.
const (
	chunkBits = 20
	chunkMask = 1<<chunkBits - 1
	maxChunks = chunkMask
)

func jobWord(gen uint64, next, total int) uint64 {
	return gen<<(2*chunkBits) | uint64(next)<<chunkBits | uint64(total)
}

func jobGen(s uint64) uint64 { return s >> (2 * chunkBits) }

// pool runs tasks on the calling goroutine plus n-1 persistent workers.
// Chunks are claimed dynamically by whoever is running, the caller
// included, so a worker that is slow to wake (parked, or its OS thread
// descheduled) costs nothing: the others take its chunks, and the caller
// waits only for chunks already started. Only one task runs at a time.
type pool struct {
	n       int
	workers []worker // workers[0] is unused: thread 0 is the caller
	job     atomic.Uint64
	done    atomic.Int64 // chunks of the current job finished
	task    task         // read only after a successful claim
	quit    atomic.Bool
	waiting parker // the caller waits here for done == total
	panicMu sync.Mutex
	panicV  any
	exited  sync.WaitGroup
}

func newPool(n int) *pool {
	p := &pool{n: n, workers: make([]worker, n)}
	p.waiting.ch = make(chan struct{}, 1)
	for i := 1; i < n; i++ {
		p.workers[i].wake.ch = make(chan struct{}, 1)
	}
	p.exited.Add(n - 1)
	for i := 1; i < n; i++ {
		go p.loop(i)
	}
	return p
}

func (p *pool) loop(tid int) {
	defer p.exited.Done()
	w := &p.workers[tid]
	var seen uint64 // the last job generation this worker found exhausted
	for {
		w.wake.wait(func() bool { return jobGen(p.job.Load()) != seen || p.quit.Load() })
		if p.quit.Load() {
			return
		}
		seen = p.work(tid)
	}
}

// work claims and runs chunks until the current job has none left, and
// returns that job's generation.
func (p *pool) work(tid int) uint64 {
	for {
		s := p.job.Load()
		next, total := int(s>>chunkBits&chunkMask), int(s&chunkMask)
		if next >= total {
			return jobGen(s)
		}
		if !p.job.CompareAndSwap(s, s+1<<chunkBits) {
			continue
		}
		p.runChunk(next, total, tid)
		if p.done.Add(1) == int64(total) {
			p.waiting.notify()
		}
	}
}

// runChunk runs one chunk, recording a panic instead of crashing the
// program; the caller re-raises it once the job is over.
func (p *pool) runChunk(chunk, total, tid int) {
	defer func() {
		if v := recover(); v != nil {
			p.panicMu.Lock()
			if p.panicV == nil {
				p.panicV = v
			}
			p.panicMu.Unlock()
		}
	}()
	p.task.run(chunk, total, tid)
}

// run executes the nchunks chunks of t on up to nth threads and returns when
// all are done. nth <= 1 runs them inline without touching the workers.
func (p *pool) run(t task, nchunks, nth int) {
	if nchunks > maxChunks {
		bug("%d chunks, at most %d", nchunks, maxChunks)
	}
	if nth <= 1 || p.n == 1 || nchunks <= 1 {
		for c := 0; c < nchunks; c++ {
			t.run(c, nchunks, 0)
		}
		return
	}
	p.task = t
	p.done.Store(0)
	p.job.Store(jobWord(jobGen(p.job.Load())+1, 0, nchunks))
	for i := 1; i < min(nth, p.n); i++ {
		p.workers[i].wake.notify()
	}
	p.work(0)
	total := int64(nchunks)
	p.waiting.wait(func() bool { return p.done.Load() == total })
	p.task = nil
	if p.panicV != nil {
		v := p.panicV
		p.panicV = nil
		panic(v)
	}
}

// close stops the workers and waits until they have exited.
func (p *pool) close() {
	p.quit.Store(true)
	p.job.Store(jobWord(jobGen(p.job.Load())+1, 0, 0))
	for i := 1; i < p.n; i++ {
		p.workers[i].wake.notify()
	}
	p.exited.Wait()
}

// split returns share i of [0, n) cut into k as evenly as possible.
func split(n, i, k int) (lo, hi int) {
	return n * i / k, n * (i + 1) / k
}

// guidedSplit returns share i of [0, n) cut into k shares whose size halves
// every nth shares: chunks are claimed in order, so the threads start on
// long runs and end on short ones, and the last to finish waits for little
// work (with even shares, up to one of them: an eighth of a product at
// two threads). Measured on generation of the 1B llama file: 13 % more
// tokens/s at two threads.
func guidedSplit(n, i, k, nth int) (lo, hi int) {
	rounds := (k + nth - 1) / nth
	// before is the weight of shares 0..c-1, share j weighing
	// 2^(rounds-1-j/nth): r whole rounds, then m shares of round r.
	before := func(c int) int {
		r, m := c/nth, c%nth
		w := nth * (1<<rounds - 1<<(rounds-r))
		if m > 0 {
			w += m << (rounds - 1 - r)
		}
		return w
	}
	total := before(k)
	return n * before(i) / total, n * before(i+1) / total
}

// A rangeTask computes units [lo, hi) on thread tid, in the order a
// stream of them is best read.
type rangeTask interface {
	runRange(lo, hi, tid int)
}

// stealing runs a rangeTask's units as contiguous ranges, one per thread:
// a thread takes batches from the front of its own and, once that is
// empty, the back half of the fullest other. Each thread reads one long
// stream, and a thread stalled mid-product (its vCPU taken by the host, an
// interrupt) holds back only the batch it is on, where guided chunks hand
// out up to a quarter of a product at once.
type stealing struct {
	t      rangeTask
	batch  int
	ranges []rangeWord
}

// rangeWord is a range of units, [front, back) as back<<32 | front, on a
// cache line of its own: its owner advances front, thieves lower back,
// each with a compare-and-swap of the whole word, so a word that compares
// equal is the current range whatever happened in between.
type rangeWord struct {
	w atomic.Uint64
	_ [56]byte
}

func rangeOf(front, back int) uint64 { return uint64(back)<<32 | uint64(front) }

func rangeBounds(w uint64) (front, back int) { return int(w & (1<<32 - 1)), int(w >> 32) }

// runStealing runs units of t on nth threads, claimed batch units at a time.
func (p *pool) runStealing(s *stealing, t rangeTask, units, batch, nth int) {
	if units >= 1<<32 {
		bug("runStealing: %d units", units)
	}
	nth = min(nth, p.n, units)
	if nth <= 1 {
		t.runRange(0, units, 0)
		return
	}
	if len(s.ranges) < nth {
		s.ranges = make([]rangeWord, p.n)
	}
	s.t, s.batch = t, max(1, batch)
	for i := range nth {
		lo, hi := split(units, i, nth)
		s.ranges[i].w.Store(rangeOf(lo, hi))
	}
	s.ranges = s.ranges[:nth]
	p.run(s, nth, nth)
	s.ranges = s.ranges[:cap(s.ranges)]
	s.t = nil
}

// run is the pool's chunk c: the thread that claims it owns range c.
func (s *stealing) run(chunk, _, tid int) {
	own := &s.ranges[chunk].w
	for {
		for {
			w := own.Load()
			f, e := rangeBounds(w)
			if f >= e {
				break
			}
			n := min(s.batch, e-f)
			if own.CompareAndSwap(w, w+uint64(n)) {
				s.t.runRange(f, f+n, tid)
			}
		}
		if !s.steal(own) {
			return
		}
	}
}

// steal moves the back half of the fullest range into own, empty; it
// reports false when every range is empty.
func (s *stealing) steal(own *atomic.Uint64) bool {
	for {
		var victim *atomic.Uint64
		var vw uint64
		most := 0
		for i := range s.ranges {
			w := s.ranges[i].w.Load()
			if f, e := rangeBounds(w); e-f > most {
				victim, vw, most = &s.ranges[i].w, w, e-f
			}
		}
		if victim == nil {
			return false
		}
		f, e := rangeBounds(vw)
		mid := e - (e-f+1)/2
		if victim.CompareAndSwap(vw, rangeOf(f, mid)) {
			own.Store(rangeOf(mid, e))
			return true
		}
	}
}
