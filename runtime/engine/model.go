package engine

import (
	"errors"
	"fmt"
	"sync"

	"github.com/graphc/graphc/tensor"
)

// ErrClosed is returned by a generated model used after Close.
var ErrClosed = errors.New("model closed")

// Driver is the part of a generated Model that does not depend on the
// model: it issues evaluations one at a time, in order, on the plan's
// pipeline slots, keeps the state tensors wherever they live, and stops the
// backends. A generated Model embeds it, so that its methods (State,
// ReadState, WriteState, Stats, SetEvalCallback, Close) are the Model's.
//
// Generated code drives it with three functions that are not methods, so
// that they do not become the Model's: OnClose as it starts each backend,
// StartDriver once the scheduler and the weights are in place, and Issue
// for every evaluation. The zero Driver is ready for OnClose and Close.
type Driver struct {
	mu     sync.Mutex // evaluations are issued one at a time, in order
	next   int        // pipeline slot of the next evaluation
	closed bool
	sched  *Sched // nil until StartDriver

	states       []tensor.Decl   // the model's state declarations
	stateBackend []int           // per state, the backend whose memory holds it
	state        []tensor.Tensor // per state, in that memory
	stops        []func()        // stop the backends, in the order they started
}

// OnClose adds stop, which stops a backend the model started, to what
// d.Close does once the evaluations in flight are done. Close calls them in
// the order they were added; a model whose start fails is closed with the
// backends started so far.
func OnClose(d *Driver, stop func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stops = append(d.stops, stop)
}

// StartDriver readies d to issue evaluations on sched and allocates the
// model's state: for every declaration in states a zeroed tensor in the
// memory of backend stateBackend[i]. It returns the state tensors, which
// generated code reads and writes in its kernels; d's methods give the
// model's users access to them (State, ReadState, WriteState).
func StartDriver(d *Driver, sched *Sched, states []tensor.Decl, stateBackend []int) ([]tensor.Tensor, error) {
	if len(stateBackend) != len(states) {
		return nil, fmt.Errorf("BUG: %d states, %d state backends", len(states), len(stateBackend))
	}
	state := make([]tensor.Tensor, len(states))
	for i, s := range states {
		var err error
		if state[i], err = sched.Zeros(stateBackend[i], s.Type, s.Ne); err != nil {
			return nil, err
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sched, d.states, d.stateBackend, d.state = sched, states, stateBackend, state
	return state, nil
}

// Issue issues one evaluation on d: after the evaluations issued before it
// and once the pipeline slot it gets is free again, it calls issue with the
// slot, c. issue copies the evaluation's inputs into slot c's versions,
// runs the splits (which call d's scheduler) and returns the outputs, whose
// copies out may still be queued. An evaluation the eval callback stopped
// returns ErrStopped; a closed d, ErrClosed.
func Issue[O any](d *Driver, issue func(c int) *O) (p *Pending[O], err error) {
	if err := d.lock(); err != nil {
		return nil, err
	}
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	if d.sched == nil {
		return nil, errors.New("BUG: Issue before StartDriver")
	}
	c := d.next
	d.next = (c + 1) % d.sched.nCopies
	defer d.sched.Recover(&err)
	d.sched.Begin(c)
	out := issue(c)
	return &Pending[O]{out: out, flight: d.sched.End()}, nil
}

// Pending is a submitted evaluation with outputs O.
type Pending[O any] struct {
	out    *O
	flight *Flight
}

// Wait blocks until the evaluation is done and returns its outputs, or
// the failure of a backend that computed it (see Flight.Wait). It may be
// called more than once and from any goroutine.
func (p *Pending[O]) Wait() (*O, error) {
	if err := p.flight.Wait(); err != nil {
		return nil, err
	}
	return p.out, nil
}

// Done reports, without blocking, whether the evaluation is done.
func (p *Pending[O]) Done() bool { return p.flight.Done() }

// stateIndex is the index in d.states of the state declared as name, or -1.
func (d *Driver) stateIndex(name string) int {
	for i := range d.states {
		if d.states[i].Name == name {
			return i
		}
	}
	return -1
}

// State returns the persistent tensor declared as name, in place, or nil
// when there is none or it is not in host memory (see ReadState and
// WriteState). It must not be used while an evaluation is in flight.
func (d *Driver) State(name string) *tensor.Tensor {
	i := d.stateIndex(name)
	if i < 0 || !d.sched.HostMemory(d.stateBackend[i]) {
		return nil
	}
	return &d.state[i]
}

// ReadState returns a copy of the state tensor declared as name, wherever
// it lives, after the evaluations in flight.
func (d *Driver) ReadState(name string) (tensor.Tensor, error) {
	if err := d.lock(); err != nil {
		return tensor.Tensor{}, err
	}
	defer d.mu.Unlock()
	i := d.stateIndex(name)
	if i < 0 {
		return tensor.Tensor{}, fmt.Errorf("no state %q", name)
	}
	if d.closed {
		return tensor.Tensor{}, ErrClosed
	}
	d.sched.Synchronize()
	return d.sched.Get(d.stateBackend[i], &d.state[i]), nil
}

// WriteState sets the state tensor declared as name, wherever it lives,
// after the evaluations in flight. t must have the declared type and shape.
func (d *Driver) WriteState(name string, t tensor.Tensor) error {
	if err := d.lock(); err != nil {
		return err
	}
	defer d.mu.Unlock()
	i := d.stateIndex(name)
	if i < 0 {
		return fmt.Errorf("no state %q", name)
	}
	if d.closed {
		return ErrClosed
	}
	if want := &d.states[i]; t.Type != want.Type || t.Ne != want.Ne || len(t.Data) < t.Span() {
		return fmt.Errorf("state %s: want %s, got %s%v", name, want, t.Type, t.Ne)
	}
	d.sched.Synchronize()
	d.sched.Set(d.stateBackend[i], &d.state[i], &t)
	return nil
}

// Stats returns the statistics of the last finished evaluation: per split
// its backend, nodes, bytes copied in and where the time went.
func (d *Driver) Stats() Stats {
	if d.sched == nil {
		return Stats{}
	}
	return d.sched.Stats()
}

// SetEvalCallback installs cb, called as every node is computed (see
// EvalCallback; nil removes it). Evaluations that report a node wait for
// it. Called from the callback itself, it replaces the callback for the
// rest of the evaluation.
func (d *Driver) SetEvalCallback(cb EvalCallback) {
	if d.sched != nil && d.sched.inCallback() {
		d.sched.SetEvalCallback(cb) // the evaluation calling us holds d.mu
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sched != nil {
		d.sched.SetEvalCallback(cb)
	}
}

// lock takes d.mu, or reports a call from inside the eval callback, whose
// evaluation holds it: waiting would wait forever.
func (d *Driver) lock() error {
	if d.sched != nil && d.sched.inCallback() {
		return ErrReentered
	}
	d.mu.Lock()
	return nil
}

// Close waits for the evaluations in flight and stops the backends. Later
// calls do nothing; evaluations and state access then return ErrClosed.
// It must not be called from the eval callback (it panics there: the
// evaluation calling the callback cannot finish once its backends stop).
func (d *Driver) Close() {
	if d.lock() != nil {
		panic("runtime: Close called from the model's own eval callback")
	}
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.closed = true
	if d.sched != nil {
		d.sched.Synchronize()
	}
	for _, stop := range d.stops {
		stop()
	}
}
