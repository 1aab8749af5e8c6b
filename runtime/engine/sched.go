package engine

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/tensor"
)

// SplitInfo describes one split of a plan to the scheduler: generated code
// lists its splits in order.
type SplitInfo struct {
	Backend     int    // index into the scheduler's backends
	Inputs      int    // split inputs copied in before its nodes
	Nodes       int    // nodes it computes (views excluded)
	First, Last string // its first and last node
	// Estimate is the plan's cost-model estimate of the split's time
	// (plans made with -placement cost), 0 when the plan has none.
	Estimate time.Duration
}

// EvalCallback lets a caller inspect tensors as an evaluation computes
// them, like ggml_backend_sched_eval_callback. For every computed node it
// is first called with ask true and t describing the node (type, shape,
// strides; no data) and returns whether it wants the node's value; if it
// does, it is called again right after the node is computed, with ask false
// and t a host copy of the value (valid during the call). Returning false
// from that second call stops the evaluation: it returns ErrStopped.
// Views are not reported (they compute nothing); a cpy is, as the view of
// its destination it returns. The nodes of a parallel region are reported
// in order once the whole region is computed (its parts run at once).
type EvalCallback func(name string, t *tensor.Tensor, ask bool) bool

// ErrStopped is returned by an evaluation that its EvalCallback stopped.
var ErrStopped = errors.New("evaluation stopped by the eval callback")

// Stats describe one evaluation: per split where its time went and how many
// bytes it copied in from other backends.
type Stats struct {
	Splits []SplitStats
	// BytesCopied is the bytes copied between backends for split inputs
	// (ggml_nbytes of each at this evaluation's dims; of an expert copy,
	// the used experts' bytes): at the dims' bounds, without expert
	// copies, it equals the plan's bytes_copied_per_eval.
	BytesCopied int64
	Copies      int           // split input copies made
	Wall        time.Duration // from the evaluation's start to the end of its work
}

// SplitStats describe one split of one evaluation.
type SplitStats struct {
	Backend     string
	First, Last string
	Nodes       int
	Inputs      int
	BytesCopied int64
	// Copy is the host's time spent getting the inputs in place: waiting
	// for their producers and for the slot, and copying (or queuing the
	// copy, for copies between asynchronous backends).
	Copy time.Duration
	// Compute is the time from the split's first kernel to the end of its
	// last one on its backend (device time for an asynchronous backend).
	Compute time.Duration
	// WireBytes and RoundTrips are what the backends reached over a
	// network (WireCounter) sent and received, and the replies they
	// waited for, from the split's start to the end of its issue: its
	// input copies and its graph. 0 without such backends.
	WireBytes  int64
	RoundTrips int64
	// Estimate is the plan's estimate of the split's time (SplitInfo),
	// to set beside Copy + Compute; 0 when the plan has none.
	Estimate time.Duration
	// Experts describes the split's expert copy (CopyExperts); nil
	// without one.
	Experts *ExpertStats
}

// WireCounter is a Backend that reaches its device over a network
// (runtime/rpc): Traffic is what it moved so far, bytes both ways and
// round trips, for Stats.
type WireCounter interface {
	Traffic() (bytes, roundTrips int64)
}

func (s Stats) String() string {
	var b []byte
	for k, sp := range s.Splits {
		b = fmt.Appendf(b, "split %d %-6s %4d nodes %s..%s: %d inputs, %d bytes copied, copy %v, compute %v",
			k, sp.Backend, sp.Nodes, sp.First, sp.Last, sp.Inputs, sp.BytesCopied, sp.Copy, sp.Compute)
		if sp.WireBytes != 0 || sp.RoundTrips != 0 {
			b = fmt.Appendf(b, ", %d bytes on the wire in %d round trips", sp.WireBytes, sp.RoundTrips)
		}
		if e := sp.Experts; e != nil {
			b = fmt.Appendf(b, ", experts %d of %d: %d of %d bytes", e.Used, e.Experts, e.Bytes, e.Whole)
		}
		if sp.Estimate != 0 {
			b = fmt.Appendf(b, ", estimated %v", sp.Estimate)
		}
		b = append(b, '\n')
	}
	b = fmt.Appendf(b, "%d bytes copied in %d copies; wall %v\n", s.BytesCopied, s.Copies, s.Wall)
	return string(b)
}

// Sched runs a plan's splits the way ggml_backend_sched_compute_splits
// does, with the decisions already made at compile time: generated code
// calls it around every split to copy the split's inputs in, to order the
// backends' streams with events, and to collect statistics.
//
// An evaluation uses one of the plan's n_copies pipeline slots: its graph
// inputs and split input copies live in that slot's versions. Begin waits
// until the previous evaluation on the same slot has finished, so with
// n_copies > 1 an evaluation can copy its inputs in and start while the
// previous ones are still computing on asynchronous backends.
//
// Every method but Flight.Wait, Stats and the callback setter is called by
// one goroutine at a time: the one issuing an evaluation.
type Sched struct {
	backends []Backend
	splits   []SplitInfo
	nCopies  int
	// events[b][c] is the end of backend b's last split issued on slot c
	// (ggml's sched->events[b][c]); nil until there is one.
	events [][]Event
	// marks[b] marks backend b's stream for ordering a copy against it.
	marks []Event
	last  []*Flight // per slot, the last evaluation issued on it
	cur   *Flight   // the evaluation being issued
	prev  int       // backend of the previous split of cur, -1 at its start
	cb    EvalCallback
	// cbG is the goroutine running the eval callback, 0 outside it: a
	// model method it calls would wait for the evaluation that is
	// calling it (inCallback).
	cbG atomic.Int64

	statsMu sync.Mutex
	stats   Stats
}

// NewSched returns a scheduler for backends, the plan's target in order,
// and the splits of a plan with nCopies pipeline copies. want lists the
// buffer type the plan was made for on each backend: a backend whose
// memory differs (another name, host or not, a stricter alignment than the
// plan's offsets have) is an error.
func NewSched(backends []Backend, want []backend.BufferType, splits []SplitInfo, nCopies int) (*Sched, error) {
	if len(want) != len(backends) {
		return nil, fmt.Errorf("BUG: %d backends, %d buffer types", len(backends), len(want))
	}
	for b, be := range backends {
		got, w := be.BufferType(), want[b]
		if got.Name != w.Name || got.Host != w.Host || got.Alignment <= 0 || w.Alignment%got.Alignment != 0 {
			return nil, fmt.Errorf("backend %s: its memory is %+v; the plan was made for %+v", be.Name(), got, w)
		}
	}
	for k, sp := range splits {
		if sp.Backend < 0 || sp.Backend >= len(backends) {
			return nil, fmt.Errorf("BUG: split %d on backend %d of %d", k, sp.Backend, len(backends))
		}
	}
	nCopies = max(nCopies, 1)
	s := &Sched{backends: backends, splits: splits, nCopies: nCopies, last: make([]*Flight, nCopies), prev: -1}
	s.events = make([][]Event, len(backends))
	for b, be := range backends {
		s.events[b] = make([]Event, nCopies)
		s.marks = append(s.marks, be.NewEvent())
	}
	return s, nil
}

// Upload returns weight t (host memory, used in place on a host backend)
// in the memory of backend b.
func (s *Sched) Upload(b int, t *tensor.Tensor) (tensor.Tensor, error) {
	be := s.backends[b]
	if hostMemory(be) {
		return *t, nil
	}
	mem, err := be.Alloc(t.Span())
	if err != nil {
		return tensor.Tensor{}, err
	}
	d := tensor.Tensor{Type: t.Type, Ne: t.Ne, Nb: t.Nb, Data: mem}
	be.SetTensor(&d, t)
	return d, nil
}

// Zeros returns a new zeroed contiguous tensor in the memory of backend b.
func (s *Sched) Zeros(b int, typ tensor.DType, ne [4]int) (tensor.Tensor, error) {
	be := s.backends[b]
	if hostMemory(be) {
		return tensor.NewTensor(typ, ne), nil
	}
	t := tensor.Tensor{Type: typ, Ne: ne, Nb: tensor.ContiguousStrides(typ, ne)}
	mem, err := be.Alloc(t.Span())
	t.Data = mem
	return t, err
}

// Get returns a host copy of t, in the memory of backend b; Set copies
// host tensor src into dst, in the memory of backend b. Both need every
// backend idle (Synchronize).
func (s *Sched) Get(b int, t *tensor.Tensor) tensor.Tensor {
	out := tensor.NewTensor(t.Type, t.Ne)
	if be := s.backends[b]; hostMemory(be) {
		tensor.Copy(&out, t)
	} else {
		be.GetTensor(&out, t)
	}
	return out
}

// Set: see Get.
func (s *Sched) Set(b int, dst, src *tensor.Tensor) {
	if be := s.backends[b]; hostMemory(be) {
		tensor.Copy(dst, src)
	} else {
		be.SetTensor(dst, src)
	}
}

// SetEvalCallback installs cb (nil removes it). The caller serializes it
// with evaluations.
func (s *Sched) SetEvalCallback(cb EvalCallback) { s.cb = cb }

// Flight is an evaluation in flight: its work has been issued and may still
// be running on asynchronous backends.
type Flight struct {
	s      *Sched
	slot   int
	start  time.Time
	done   []Event // one per asynchronous backend, recorded at the end
	splits []splitRun
	once   sync.Once
	// idsKey and used are the ids tensor expert copies read last and the
	// experts it named (CopyExperts); used is nil until one is read.
	idsKey int
	used   []bool
}

type splitRun struct {
	copyStart, copyEnd time.Time
	begin, end         Event // around the split's kernels, on its backend
	inputs             int
	bytes              int64
	wire, trips        int64 // WireCounter totals, at the start, then the difference
	experts            *ExpertStats
}

// Begin starts issuing an evaluation on pipeline slot c. It first waits
// for the previous evaluation on that slot: its inputs and copies live in
// the same memory.
func (s *Sched) Begin(c int) {
	if c < 0 || c >= s.nCopies {
		panic(fmt.Sprintf("BUG: pipeline slot %d of %d", c, s.nCopies))
	}
	if f := s.last[c]; f != nil {
		f.Wait() // its failure, if any, is its own to report
	}
	f := &Flight{s: s, slot: c, start: time.Now(), splits: make([]splitRun, len(s.splits))}
	s.last[c], s.cur, s.prev = f, f, -1
}

func (s *Sched) flight() *Flight {
	if s.cur == nil {
		panic("BUG: Sched used outside Begin/End")
	}
	return s.cur
}

// BeginSplit starts split k. Like ggml, a split without inputs that follows
// a split on another backend first waits for that backend: backends that
// share a buffer type reuse its memory across splits.
func (s *Sched) BeginSplit(k int) {
	f := s.flight()
	sp := s.splits[k]
	if sp.Inputs == 0 && s.prev >= 0 && s.prev != sp.Backend {
		s.waitSlot(s.prev, f.slot)
	}
	f.splits[k].copyStart = time.Now()
	f.splits[k].wire, f.splits[k].trips = s.traffic()
}

// traffic sums the WireCounters' traffic.
func (s *Sched) traffic() (bytes, trips int64) {
	for _, be := range s.backends {
		if w, ok := be.(WireCounter); ok {
			b, t := w.Traffic()
			bytes, trips = bytes+b, trips+t
		}
	}
	return bytes, trips
}

// waitSlot blocks until backend b is done with slot c: until its last split
// on c when there are pipeline copies (ggml's event_synchronize), until all
// its work otherwise (ggml_backend_synchronize: without copies a copy's
// memory may be shared with any earlier tensor).
func (s *Sched) waitSlot(b, c int) {
	if s.nCopies > 1 {
		if e := s.events[b][c]; e != nil {
			e.Synchronize()
		}
		return
	}
	s.backends[b].Synchronize()
}

// CopyInput copies src, a split input living in the memory of backend from,
// into dst, its copy for split k on the current slot, like
// ggml_backend_sched_compute_splits: a graph input (user) is copied at once
// and synchronously, once the split's backend is done with the slot;
// between two asynchronous backends the copy is queued on the source's
// stream and the split's backend waits for it; otherwise the source's
// backend is synchronized and the copy made synchronously.
func (s *Sched) CopyInput(k, from int, dst, src *tensor.Tensor, user bool) {
	f := s.flight()
	to := s.splits[k].Backend
	fb, tb := s.backends[from], s.backends[to]
	switch {
	case user:
		s.waitSlot(to, f.slot)
		copySync(fb, tb, dst, src)
	case fb.Async() && tb.Async():
		// The copy writes backend to's memory from from's stream: it
		// waits until backend to is done with that memory.
		if e := s.events[to][f.slot]; s.nCopies > 1 && e != nil {
			fb.WaitEvent(e)
		} else if s.nCopies == 1 {
			s.marks[to].Record()
			fb.WaitEvent(s.marks[to])
		}
		if fb.CopyTensorAsync(tb, dst, src) {
			s.marks[from].Record()
			tb.WaitEvent(s.marks[from])
			break
		}
		fb.Synchronize()
		s.waitSlot(to, f.slot)
		copySync(fb, tb, dst, src)
	default:
		fb.Synchronize()
		s.waitSlot(to, f.slot)
		copySync(fb, tb, dst, src)
	}
	f.splits[k].inputs++
	f.splits[k].bytes += int64(src.Span())
}

// hostMemory reports whether b computes synchronously in host memory, so
// that its tensors may be read and written directly between its calls.
func hostMemory(b Backend) bool { return b.BufferType().Host && !b.Async() }

// copySync copies src (in fb's memory) into dst (in tb's memory) and
// returns when done; the caller has synchronized both backends as needed.
func copySync(fb, tb Backend, dst, src *tensor.Tensor) {
	switch {
	case hostMemory(fb) && hostMemory(tb):
		tensor.Copy(dst, src)
	case hostMemory(fb):
		tb.SetTensor(dst, src)
	case hostMemory(tb):
		fb.GetTensor(dst, src)
	default: // device to device through host memory
		tmp := tensor.Tensor{Type: src.Type, Ne: src.Ne, Nb: src.Nb, Data: tensor.NewBuffer(src.Span())}
		fb.GetTensor(&tmp, src)
		tb.SetTensor(dst, &tmp)
	}
}

// Compute marks the end of split k's input copies and the start of its
// kernels.
func (s *Sched) Compute(k int) {
	f := s.flight()
	r := &f.splits[k]
	r.copyEnd = time.Now()
	r.begin = s.backends[s.splits[k].Backend].NewEvent()
	r.begin.Record()
}

// EndSplit marks the end of split k's kernels.
func (s *Sched) EndSplit(k int) {
	f := s.flight()
	b := s.splits[k].Backend
	r := &f.splits[k]
	r.end = s.backends[b].NewEvent()
	r.end.Record()
	s.events[b][f.slot] = r.end
	s.prev = b
	wire, trips := s.traffic()
	r.wire, r.trips = wire-r.wire, trips-r.trips
}

// Inspecting reports whether an eval callback is set: generated code skips
// building the tensors it would show otherwise.
func (s *Sched) Inspecting() bool { return s.cb != nil }

// Inspect reports node name, just computed by backend b into t, to the eval
// callback. It panics with a stop the generated code recovers (Recover)
// when the callback stops the evaluation. Without a callback it costs a
// test (it inlines).
func (s *Sched) Inspect(b int, name string, t tensor.Tensor) {
	if s.cb != nil {
		s.inspect(b, name, &t)
	}
}

func (s *Sched) inspect(b int, name string, tp *tensor.Tensor) {
	// A copy of *tp, so that tp does not escape (through the backend
	// interface): the generated code's tensors stay on its stack.
	t := new(tensor.Tensor)
	*t = *tp
	desc := tensor.Tensor{Type: t.Type, Ne: t.Ne, Nb: t.Nb}
	s.cbG.Store(goid())
	defer s.cbG.Store(0)
	if !s.cb(name, &desc, true) {
		return
	}
	host := tensor.NewTensor(t.Type, t.Ne)
	be := s.backends[b]
	if hostMemory(be) {
		tensor.Copy(&host, t)
	} else {
		be.Synchronize()
		be.GetTensor(&host, t)
	}
	if !s.cb(name, &host, false) {
		panic(stopEval{})
	}
}

type stopEval struct{}

// inCallback reports whether the calling goroutine is inside the eval
// callback.
func (s *Sched) inCallback() bool {
	g := s.cbG.Load()
	return g != 0 && g == goid()
}

// Output returns a host copy of t, an output in the memory of backend b,
// in into's memory where its capacity holds it (an earlier output the
// caller is done with: new memory would be page-faulted in on every
// evaluation, which for a token's logits costs more than the copy), else
// in new memory. For an asynchronous backend the copy is queued: it is
// complete once the evaluation's Flight has been waited for.
func (s *Sched) Output(b int, t *tensor.Tensor, into []byte) tensor.Tensor {
	out := tensor.Tensor{Type: t.Type, Ne: t.Ne, Nb: tensor.ContiguousStrides(t.Type, t.Ne)}
	if n := out.Span(); cap(into) >= n {
		out.Data = into[:n:n]
	} else {
		out.Data = tensor.NewBuffer(n)
	}
	be := s.backends[b]
	if hostMemory(be) {
		tensor.Copy(&out, t)
	} else {
		src := new(tensor.Tensor) // a copy: t stays on the generated code's stack
		*src = *t
		be.GetTensorAsync(&out, src)
	}
	return out
}

// End finishes issuing the current evaluation and returns it.
func (s *Sched) End() *Flight {
	f := s.flight()
	for _, be := range s.backends {
		if be.Async() {
			e := be.NewEvent()
			e.Record()
			f.done = append(f.done, e)
		}
	}
	s.cur = nil
	return f
}

// Recover, deferred by the code issuing an evaluation, turns a stop by the
// eval callback into ErrStopped and a kernel's KernelError into that
// error: it waits until every backend is idle and abandons the
// evaluation. Other panics (bugs) go on.
func (s *Sched) Recover(err *error) {
	r := recover()
	if r == nil {
		return
	}
	switch v := r.(type) {
	case stopEval:
		*err = ErrStopped
	case *KernelError:
		*err = v
	default:
		panic(r)
	}
	for _, be := range s.backends {
		be.Synchronize()
	}
	if s.cur != nil {
		s.last[s.cur.slot] = nil
		s.cur = nil
	}
}

// Wait blocks until the evaluation's work is done: its outputs are
// complete and its statistics recorded. It returns the failures of the
// backends that ran work on goroutines of their own (Backend.Err): once a
// backend has failed, its memory is undefined and every later evaluation
// reports it too. It may be called more than once and from any goroutine.
func (f *Flight) Wait() error {
	for _, e := range f.done {
		e.Synchronize()
	}
	f.once.Do(f.finish)
	var errs []error
	for _, be := range f.s.backends {
		if err := be.Err(); err != nil {
			errs = append(errs, fmt.Errorf("backend %s failed: %w", be.Name(), err))
		}
	}
	return errors.Join(errs...)
}

// Done reports, without blocking, whether the evaluation's work is done.
func (f *Flight) Done() bool {
	for _, e := range f.done {
		if !e.Done() {
			return false
		}
	}
	return true
}

func (f *Flight) finish() {
	s := f.s
	st := Stats{Splits: make([]SplitStats, len(s.splits))}
	var end time.Time
	for _, e := range f.done {
		if w := e.When(); w.After(end) {
			end = w
		}
	}
	for k, sp := range s.splits {
		r := &f.splits[k]
		ss := SplitStats{Backend: s.backends[sp.Backend].Name(), First: sp.First, Last: sp.Last, Nodes: sp.Nodes, Inputs: r.inputs, BytesCopied: r.bytes,
			WireBytes: r.wire, RoundTrips: r.trips, Estimate: sp.Estimate, Experts: r.experts}
		if !r.copyEnd.IsZero() {
			ss.Copy = r.copyEnd.Sub(r.copyStart)
		}
		if r.begin != nil && r.end != nil {
			ss.Compute = r.end.When().Sub(r.begin.When())
			if w := r.end.When(); w.After(end) {
				end = w
			}
		}
		st.Splits[k] = ss
		st.BytesCopied += r.bytes
		st.Copies += r.inputs
	}
	if end.IsZero() {
		end = time.Now()
	}
	st.Wall = end.Sub(f.start)
	s.statsMu.Lock()
	s.stats = st
	s.statsMu.Unlock()
}

// Stats returns the statistics of the last evaluation that finished.
func (s *Sched) Stats() Stats {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	st := s.stats
	st.Splits = append([]SplitStats(nil), st.Splits...)
	return st
}

// Synchronize waits for every evaluation issued so far and every backend's
// queued work: afterwards the host may read and write any tensor through
// the backends' copies.
func (s *Sched) Synchronize() {
	for _, f := range s.last {
		if f != nil {
			f.Wait() // failures are reported by the evaluations' own Waits
		}
	}
	for _, be := range s.backends {
		be.Synchronize()
	}
}

// HostMemory reports whether backend b computes synchronously in host
// memory: its tensors may be read and written directly between
// evaluations.
func (s *Sched) HostMemory(b int) bool { return hostMemory(s.backends[b]) }

// Backend returns backend b of the target.
func (s *Sched) Backend(b int) Backend { return s.backends[b] }
