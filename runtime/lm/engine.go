package lm

import (
	"context"
	"errors"
	"iter"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/graphc/graphc/runtime/lm/sample"
	"github.com/graphc/graphc/tokenizer"
)

// Options shape an Engine.
type Options struct {
	// Parallel is how many sequences are decoded together, each in one
	// evaluation with the others (default 1). Each may hold up to
	// NCtx/Parallel tokens of the cache, as llama-server's slots.
	Parallel int
	// Queue is how many requests may wait for a sequence beyond them:
	// with Parallel + Queue unfinished, Start answers ErrBusy (default
	// 4 × Parallel).
	Queue int
}

// ErrClosed ends the sequences of a closed Engine.
var ErrClosed = errors.New("lm: the engine is closed")

// Engine generates text for many requests at once, continuous batching
// as llama-server does: every evaluation takes one token of each
// sequence being generated and fills the rest of the batch with the
// prompts of those starting, and requests join and leave between
// evaluations. All sequences share the model's KV cache: a batch's
// tokens take the next free slots at its end, and the mask lets each
// token see only its own sequence's slots. A finished sequence's slots
// stay until the room is needed, so that a request whose prompt begins
// with its tokens (the next turn of a chat) evaluates only the rest.
type Engine struct {
	m      Model
	info   Info
	tok    *tokenizer.Tokenizer
	par    int
	seqCtx int // most tokens of one sequence

	queue    chan *Stream
	capacity int64        // Parallel + Queue
	unended  atomic.Int64 // requests started and not ended
	startMu  sync.Mutex   // a Start's queuing, against the loop's last drain
	closed   bool
	quit     chan struct{}
	done     chan struct{}
	close    sync.Once

	// Owned by the loop.
	slots  []*seq // each cache slot's sequence (nil: free)
	used   int    // slots past used are free; a batch's go at used…
	active []*Stream
	cached []*seq // finished sequences, oldest first, whose slots remain
	batch  Batch
}

// seq is a sequence's tokens and the cache slots of those evaluated.
type seq struct {
	tokens []int32 // prompt, then generated
	slots  []int32 // slot of tokens[i], for the len(slots) evaluated
}

// NewEngine starts generating with m, decoding text with tok. Close stops
// it.
func NewEngine(m Model, tok *tokenizer.Tokenizer, o Options) *Engine {
	info := m.Info()
	par := max(o.Parallel, 1)
	queue := o.Queue
	if queue <= 0 {
		queue = 4 * par
	}
	e := &Engine{
		m: m, info: info, tok: tok, par: par, seqCtx: info.NCtx / par,
		queue: make(chan *Stream, par+queue), capacity: int64(par + queue),
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
		slots: make([]*seq, info.NCtx),
	}
	go e.loop()
	return e
}

// Info is the model's shape.
func (e *Engine) Info() Info { return e.info }

// SeqCtx is the most tokens one sequence may hold, prompt and generated.
func (e *Engine) SeqCtx() int { return e.seqCtx }

// Tokenizer is the vocabulary the engine decodes with.
func (e *Engine) Tokenizer() *tokenizer.Tokenizer { return e.tok }

// Close ends every sequence with ErrClosed and stops the engine.
func (e *Engine) Close() {
	e.close.Do(func() { close(e.quit) })
	<-e.done
}

// Start queues r. It fails at once with ErrBusy when the queue is full,
// with a *ContextError when the prompt leaves no room to generate, and
// with ErrClosed after Close. Canceling ctx ends the sequence, its result
// then carrying ctx's error.
func (e *Engine) Start(ctx context.Context, r Request) (*Stream, error) {
	if len(r.Prompt) == 0 {
		return nil, errors.New("lm: the prompt has no tokens")
	}
	if len(r.Prompt) >= e.seqCtx {
		return nil, &ContextError{Tokens: len(r.Prompt), NCtx: e.seqCtx}
	}
	for _, t := range r.Prompt {
		if t < 0 || int(t) >= e.info.NVocab {
			return nil, errors.New("lm: a prompt token is outside the vocabulary")
		}
	}
	if err := r.Sampling.Check(); err != nil {
		return nil, err
	}
	s := &Stream{e: e, ctx: ctx, req: r, notify: make(chan struct{}, 1), done: make(chan struct{})}
	e.startMu.Lock()
	defer e.startMu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	if e.unended.Add(1) > e.capacity {
		e.unended.Add(-1)
		return nil, ErrBusy
	}
	e.queue <- s // never blocks: the queue holds capacity
	return s, nil
}

// Stream is one request's generation.
type Stream struct {
	e   *Engine
	ctx context.Context
	req Request

	mu     sync.Mutex
	buf    []Token
	notify chan struct{}
	done   chan struct{} // closed when res and err are final
	res    Result
	err    error

	// Owned by the engine's loop.
	s         *seq
	sampler   *sample.Sampler
	dec       *tokenizer.Decoder
	pending   string // decoded text held back: it may begin a stop string
	begun     time.Time
	firstOut  time.Time
	generated int
	shifts    int // context shifts so far
}

// Tokens yields the generated tokens as they come and ends with the
// sequence. Leaving the loop early does not stop the sequence: cancel
// the context Start was given.
func (s *Stream) Tokens() iter.Seq[Token] {
	return func(yield func(Token) bool) {
		for {
			s.mu.Lock()
			toks := s.buf
			s.buf = nil
			s.mu.Unlock()
			for _, t := range toks {
				if !yield(t) {
					return
				}
			}
			if len(toks) > 0 {
				continue
			}
			select {
			case <-s.notify:
			case <-s.done:
				s.mu.Lock()
				empty := len(s.buf) == 0
				s.mu.Unlock()
				if empty {
					return
				}
			}
		}
	}
}

// Result waits for the sequence's end and reports it, or the error that
// ended it (the context's, a failed evaluation, ErrClosed).
func (s *Stream) Result() (Result, error) {
	<-s.done
	return s.res, s.err
}

func (s *Stream) emit(t Token) {
	s.mu.Lock()
	s.buf = append(s.buf, t)
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *Stream) end(res Result, err error) {
	s.res, s.err = res, err
	s.e.unended.Add(-1)
	close(s.done)
}

func (e *Engine) loop() {
	defer close(e.done)
	for {
		if len(e.active) == 0 {
			select {
			case s := <-e.queue:
				e.admit(s)
			case <-e.quit:
				e.shutdown()
				return
			}
		}
	admit:
		for len(e.active) < e.par {
			select {
			case s := <-e.queue:
				e.admit(s)
			default:
				break admit
			}
		}
		select {
		case <-e.quit:
			e.shutdown()
			return
		default:
		}
		for i := 0; i < len(e.active); i++ {
			if s := e.active[i]; s.ctx.Err() != nil {
				e.finish(s, "", s.ctx.Err())
				i--
			}
		}
		if len(e.active) > 0 {
			e.step()
		}
	}
}

func (e *Engine) shutdown() {
	e.startMu.Lock()
	e.closed = true
	e.startMu.Unlock()
	for len(e.active) > 0 {
		e.finish(e.active[0], "", ErrClosed)
	}
	for {
		select {
		case s := <-e.queue:
			s.end(Result{}, ErrClosed)
		default:
			return
		}
	}
}

// admit makes s an active sequence, on the cached slots of the finished
// sequence sharing the longest beginning with its prompt. At least the
// prompt's last token is evaluated again: its logits give the first
// sample.
func (e *Engine) admit(s *Stream) {
	if err := s.ctx.Err(); err != nil {
		s.end(Result{}, err)
		return
	}
	prompt := s.req.Prompt
	best, keep := -1, 0
	for i, c := range e.cached {
		n := 0
		for n < len(c.slots) && n < len(prompt)-1 && c.tokens[n] == prompt[n] {
			n++
		}
		if n > keep {
			best, keep = i, n
		}
	}
	sq := &seq{tokens: append(make([]int32, 0, len(prompt)+64), prompt...)}
	if best >= 0 {
		c := e.cached[best]
		e.cached = append(e.cached[:best], e.cached[best+1:]...)
		for _, sl := range c.slots[keep:] {
			e.slots[sl] = nil
		}
		sq.slots = append(sq.slots, c.slots[:keep]...)
		for _, sl := range sq.slots {
			e.slots[sl] = sq
		}
		e.trimTail()
	}
	s.s = sq
	s.sampler = sample.New(s.req.Sampling, e.info.NVocab)
	for _, t := range prompt {
		s.sampler.Accept(t)
	}
	s.dec = e.tok.NewDecoder(false)
	s.begun = time.Now()
	s.res.PromptTokens = len(prompt)
	e.active = append(e.active, s)
}

// finish ends s: its slots are kept for a later prompt that begins with
// its tokens.
func (e *Engine) finish(s *Stream, reason string, err error) {
	for i, a := range e.active {
		if a == s {
			e.active = append(e.active[:i], e.active[i+1:]...)
			break
		}
	}
	if len(s.s.slots) > 0 {
		e.cached = append(e.cached, s.s)
		if len(e.cached) > e.par {
			e.evict(0)
		}
	}
	if err == nil && s.pending != "" {
		s.emit(Token{ID: -1, Text: s.pending})
	}
	s.res.Tokens, s.res.Finish, s.res.Shifts = s.generated, reason, s.shifts
	if !s.firstOut.IsZero() {
		s.res.GenTime = time.Since(s.firstOut)
	}
	s.end(s.res, err)
}

// evict frees the slots of the i-th cached sequence.
func (e *Engine) evict(i int) {
	for _, sl := range e.cached[i].slots {
		e.slots[sl] = nil
	}
	e.cached = append(e.cached[:i], e.cached[i+1:]...)
	e.trimTail()
}

func (e *Engine) trimTail() {
	for e.used > 0 && e.slots[e.used-1] == nil {
		e.used--
	}
}

// need is the tokens of s not yet evaluated.
func need(s *Stream) int { return len(s.s.tokens) - len(s.s.slots) }

// room makes n free slots at the cache's end, or as many as it can: it
// drops cached sequences, then, if free slots are scattered between the
// active ones, moves every active sequence to the front by evaluating its
// tokens again (the model's cache offers no cheaper move).
func (e *Engine) room(n int) {
	for len(e.cached) > 0 && e.info.NCtx-e.used < n {
		e.evict(0)
	}
	if e.info.NCtx-e.used >= n {
		return
	}
	live := 0
	for _, s := range e.active {
		live += len(s.s.slots)
	}
	if live == e.used {
		return
	}
	clear(e.slots)
	e.used = 0
	for _, s := range e.active {
		s.s.slots = s.s.slots[:0]
	}
}

// step evaluates one batch: a token of each generating sequence first,
// then prompt tokens as the batch has room.
func (e *Engine) step() {
	total := 0
	for _, s := range e.active {
		total += need(s)
	}
	e.room(min(total, e.info.NBatch))
	budget := min(e.info.NBatch, e.info.NCtx-e.used)
	b := &e.batch
	b.Tokens, b.Pos, b.Outputs = b.Tokens[:0], b.Pos[:0], b.Outputs[:0]
	var outs []*Stream
	take := func(s *Stream, n int) {
		sq := s.s
		for range n {
			i := len(sq.slots)
			slot := int32(e.used)
			e.used++
			e.slots[slot] = sq
			sq.slots = append(sq.slots, slot)
			if i == len(sq.tokens)-1 {
				b.Outputs = append(b.Outputs, int32(len(b.Tokens)))
				outs = append(outs, s)
			}
			b.Tokens = append(b.Tokens, sq.tokens[i])
			b.Pos = append(b.Pos, int32(i))
		}
	}
	for _, s := range e.active {
		if need(s) == 1 && budget > 0 {
			take(s, 1)
			budget--
		}
	}
	for _, s := range e.active {
		if n := min(need(s), budget); n > 0 {
			take(s, n)
			budget -= n
		}
	}
	if len(b.Tokens) == 0 {
		// No room even after moving: the sequences together hold more
		// than the cache, which SeqCtx prevents.
		for len(e.active) > 0 {
			e.finish(e.active[0], "", errors.New("BUG: lm: no cache room for any sequence"))
		}
		return
	}
	b.NKV = e.used
	b.Mask = e.mask(b.Mask[:0], 0)
	if w := e.info.SlidingWindow; w > 0 {
		b.MaskSWA = e.mask(b.MaskSWA[:0], w)
	}
	logits, err := e.m.Decode(b)
	if err != nil {
		for len(e.active) > 0 {
			e.finish(e.active[0], "", err)
		}
		return
	}
	if cap(logits) > 0 {
		b.Logits = logits // read only below: the next step's memory
	}
	now := time.Now()
	nv := e.info.NVocab
	for k, s := range outs {
		e.sampled(s, s.sampler.Sample(logits[k*nv:(k+1)*nv]), now)
	}
}

// mask is the batch's attention mask: each token sees the slots of its
// own sequence's earlier positions and its own; with a window, only of
// the window's last positions.
func (e *Engine) mask(m []float32, window int) []float32 {
	b := &e.batch
	n, nkv := len(b.Tokens), b.NKV
	if cap(m) < n*nkv {
		m = make([]float32, n*nkv)
	}
	m = m[:n*nkv]
	inf := float32(math.Inf(-1))
	for i := range m {
		m[i] = inf
	}
	for t := range n {
		sq := e.slots[nkv-n+t] // the batch's tokens fill the slots before NKV
		row := m[t*nkv : (t+1)*nkv]
		from := 0
		if window > 0 {
			from = max(0, int(b.Pos[t])-window+1)
		}
		for _, sl := range sq.slots[from : b.Pos[t]+1] {
			row[sl] = 0
		}
	}
	return m
}

// sampled takes s's next token.
func (e *Engine) sampled(s *Stream, tok int32, now time.Time) {
	if s.firstOut.IsZero() {
		s.firstOut = now
		s.res.PromptTime = now.Sub(s.begun)
	}
	s.sampler.Accept(tok)
	if e.tok.EndOfGeneration(tok) {
		e.finish(s, FinishStop, nil)
		return
	}
	s.generated++
	s.s.tokens = append(s.s.tokens, tok)
	text := s.pending + s.dec.Add(tok)
	for _, stop := range s.req.Stop {
		if i := strings.Index(text, stop); stop != "" && i >= 0 {
			s.pending = ""
			s.emit(Token{ID: tok, Text: text[:i]})
			e.finish(s, FinishStop, nil)
			return
		}
	}
	last := s.req.MaxTokens > 0 && s.generated >= s.req.MaxTokens || len(s.s.tokens) >= e.seqCtx && !e.shift(s)
	if last {
		text += s.dec.Flush()
	}
	hold := 0
	if !last {
		hold = heldBack(text, s.req.Stop)
	}
	s.pending = text[len(text)-hold:]
	s.emit(Token{ID: tok, Text: text[:len(text)-hold]})
	if last {
		e.finish(s, FinishLength, nil)
	}
}

// shift makes room in the full sequence s as its request's ContextShift
// says (llama.cpp's context shift: of the tokens after the kept ones,
// half are dropped), keeping the slots of the kept tokens, whose
// positions stay, and freeing the others: the tokens after the dropped
// ones are evaluated again. It reports false where nothing can be dropped.
func (e *Engine) shift(s *Stream) bool {
	sq := s.s
	if !s.req.ContextShift {
		return false
	}
	keep := s.req.Keep
	if keep < 0 || keep > len(s.req.Prompt) {
		keep = len(s.req.Prompt)
	}
	if bos := e.tok.BOS(); bos >= 0 && sq.tokens[0] == bos && s.req.Keep >= 0 {
		keep++
	}
	discard := (len(sq.tokens) - keep) / 2
	if discard < 1 {
		return false
	}
	sq.tokens = append(sq.tokens[:keep], sq.tokens[keep+discard:]...)
	for _, sl := range sq.slots[min(keep, len(sq.slots)):] {
		e.slots[sl] = nil
	}
	sq.slots = sq.slots[:min(keep, len(sq.slots))]
	e.trimTail()
	s.shifts++
	return true
}

// heldBack is the length of text's longest end that begins a stop string.
func heldBack(text string, stops []string) int {
	hold := 0
	for _, stop := range stops {
		for n := min(len(stop)-1, len(text)); n > hold; n-- {
			if strings.HasSuffix(text, stop[:n]) {
				hold = n
				break
			}
		}
	}
	return hold
}
