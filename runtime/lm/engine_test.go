package lm_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/graphc/graphc/runtime/lm"
	"github.com/graphc/graphc/runtime/lm/sample"
	"github.com/graphc/graphc/tokenizer"
)

// cacheModel is a decoder whose next token is a hash of the tokens its
// mask lets it see, ordered by position: it keeps its own KV cache, and
// fails when a token's mask shows anything but one slot for each of its
// sequence's positions up to its own. Generation through the Engine must
// then give what nextToken computes on the whole sequence, however the
// sequences were batched, moved or reused.
type cacheModel struct {
	info  lm.Info
	toks  []int32
	pos   []int32
	calls int
	sizes []int // tokens per Decode
	delay time.Duration
	last  []float32 // the last Decode's logits
	after int       // Decodes after one that returned logits
	given int       // those whose Batch.Logits was that result
}

func newCacheModel(nctx, nbatch int) *cacheModel {
	return &cacheModel{info: lm.Info{NCtx: nctx, NBatch: nbatch, NVocab: testVocab}, toks: make([]int32, nctx), pos: make([]int32, nctx)}
}

const testVocab = 40 // tokens 0 (eos), 1 (bos), then "a" …

func (c *cacheModel) Info() lm.Info { return c.info }

func (c *cacheModel) Decode(b *lm.Batch) ([]float32, error) {
	n := len(b.Tokens)
	c.calls++
	c.sizes = append(c.sizes, n)
	time.Sleep(c.delay)
	if n == 0 || n > c.info.NBatch || b.NKV > c.info.NCtx || b.NKV < n || len(b.Pos) != n || len(b.Mask) != n*b.NKV {
		return nil, fmt.Errorf("bad batch: %d tokens, NKV %d, %d positions, mask %d", n, b.NKV, len(b.Pos), len(b.Mask))
	}
	for t := range n {
		c.toks[b.NKV-n+t], c.pos[b.NKV-n+t] = b.Tokens[t], b.Pos[t]
	}
	seen := make([][]int32, n)
	for t := range n {
		row := b.Mask[t*b.NKV : (t+1)*b.NKV]
		seen[t] = make([]int32, b.Pos[t]+1)
		for i := range seen[t] {
			seen[t][i] = -1
		}
		for j, m := range row {
			switch {
			case m == 0 && (c.pos[j] > b.Pos[t] || seen[t][c.pos[j]] >= 0):
				return nil, fmt.Errorf("token %d at position %d sees slot %d (position %d) it should not", t, b.Pos[t], j, c.pos[j])
			case m == 0:
				seen[t][c.pos[j]] = c.toks[j]
			case !math.IsInf(float64(m), -1):
				return nil, fmt.Errorf("mask value %v", m)
			}
		}
		if slices.Contains(seen[t], -1) {
			return nil, fmt.Errorf("token %d at position %d does not see all its sequence: %v", t, b.Pos[t], seen[t])
		}
		// The sliding-window mask: what Mask opens, but for the positions
		// the window has passed.
		if w := c.info.SlidingWindow; w > 0 {
			if len(b.MaskSWA) != n*b.NKV {
				return nil, fmt.Errorf("sliding-window mask of %d values, want %d", len(b.MaskSWA), n*b.NKV)
			}
			for j, m := range b.MaskSWA[t*b.NKV : (t+1)*b.NKV] {
				if want := row[j] == 0 && c.pos[j] > b.Pos[t]-int32(w); (m == 0) != want || (m != 0 && !math.IsInf(float64(m), -1)) {
					return nil, fmt.Errorf("token %d at position %d: sliding-window mask %v at slot %d (position %d)", t, b.Pos[t], m, j, c.pos[j])
				}
			}
		}
	}
	if len(c.last) > 0 {
		c.after++
		if unsafe.SliceData(b.Logits) == unsafe.SliceData(c.last) {
			c.given++
		}
	}
	out := b.Logits[:0]
	if cap(out) < len(b.Outputs)*testVocab {
		out = make([]float32, 0, len(b.Outputs)*testVocab)
	}
	for _, t := range b.Outputs {
		logits := make([]float32, testVocab)
		logits[nextToken(seen[t])] = 1
		out = append(out, logits...)
	}
	c.last = out
	return out, nil
}

// nextToken is the model's greedy choice after seq: never bos, eos only
// after 25 tokens' of seq whose hash says so.
func nextToken(seq []int32) int32 {
	h := fnv.New32a()
	for _, t := range seq {
		fmt.Fprint(h, t, ",")
	}
	v := h.Sum32()
	if len(seq) > 25 && v%5 == 0 {
		return 0
	}
	return int32(2 + v%(testVocab-2))
}

// reference is the greedy generation of up to n tokens after prompt.
func reference(prompt []int32, n int, stopAtEOS bool) []int32 {
	seq := slices.Clone(prompt)
	var out []int32
	for range n {
		t := nextToken(seq)
		if t == 0 && stopAtEOS {
			break
		}
		out = append(out, t)
		seq = append(seq, t)
	}
	return out
}

func testTokenizer(t *testing.T) *tokenizer.Tokenizer {
	v := tokenizer.Vocab{Model: "llama", BOS: 1, EOS: 0, EOT: tokenizer.NoToken, UNK: tokenizer.NoToken, PAD: tokenizer.NoToken}
	v.Tokens = []string{"<eos>", "<bos>"}
	v.Types = []tokenizer.TokenType{tokenizer.Control, tokenizer.Control}
	for i := 2; i < testVocab; i++ {
		v.Tokens = append(v.Tokens, string(rune('a'+i-2)))
		v.Types = append(v.Types, tokenizer.Normal)
	}
	tok, err := tokenizer.New(v)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func greedy() sample.Params {
	p := sample.Defaults()
	p.Temp = 0
	return p
}

func collect(t *testing.T, s *lm.Stream) ([]int32, string, lm.Result) {
	t.Helper()
	var ids []int32
	var text strings.Builder
	for tok := range s.Tokens() {
		if tok.ID >= 0 {
			ids = append(ids, tok.ID)
		}
		text.WriteString(tok.Text)
	}
	res, err := s.Result()
	if err != nil {
		t.Fatal(err)
	}
	return ids, text.String(), res
}

func prompt(seed, n int) []int32 {
	p := []int32{1}
	for i := 1; i < n; i++ {
		p = append(p, int32(2+(seed*7+i*13)%(testVocab-2)))
	}
	return p
}

func TestEngineOneSequence(t *testing.T) {
	m := newCacheModel(64, 8)
	e := lm.NewEngine(m, testTokenizer(t), lm.Options{})
	defer e.Close()
	p := prompt(1, 19)
	s, err := e.Start(context.Background(), lm.Request{Prompt: p, MaxTokens: 30, Sampling: greedy()})
	if err != nil {
		t.Fatal(err)
	}
	ids, text, res := collect(t, s)
	want := reference(p, 30, true)
	if !slices.Equal(ids, want) {
		t.Fatalf("generated %v, want %v", ids, want)
	}
	if got := e.Tokenizer().Decode(want); text != got {
		t.Errorf("text %q, want %q", text, got)
	}
	if res.PromptTokens != 19 || res.Tokens != len(want) {
		t.Errorf("result %+v, want 19 prompt tokens and %d generated", res, len(want))
	}
	// 19 prompt tokens in batches of 8: 3 evaluations, then one a token.
	if m.sizes[0] != 8 || m.sizes[1] != 8 || m.sizes[2] != 3 || m.sizes[3] != 1 {
		t.Errorf("batch sizes %v, want 8 8 3 1 …", m.sizes)
	}
	// Each step gives the model the last one's logits to write into.
	if m.after == 0 || m.given != m.after {
		t.Errorf("%d of %d Decodes after one that returned logits were given them", m.given, m.after)
	}
}

// TestEngineSlidingWindow: for a model with sliding-window layers each
// batch has their mask too, sequences decoded together and moved.
func TestEngineSlidingWindow(t *testing.T) {
	m := newCacheModel(48, 8)
	m.info.SlidingWindow = 5
	e := lm.NewEngine(m, testTokenizer(t), lm.Options{Parallel: 2})
	defer e.Close()
	var streams []*lm.Stream
	for i := range 3 {
		s, err := e.Start(context.Background(), lm.Request{Prompt: prompt(i+1, 11), MaxTokens: 12, Sampling: greedy()})
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, s)
	}
	for i, s := range streams {
		ids, _, _ := collect(t, s)
		if want := reference(prompt(i+1, 11), 12, true); !slices.Equal(ids, want) {
			t.Errorf("request %d: generated %v, want %v", i, ids, want)
		}
	}
}

// TestEngineParallel runs many requests through few sequences in a small
// cache, so that sequences share batches, finished ones leave holes that
// force the live ones to be moved, and prompts reuse cached beginnings:
// every request must still get its own greedy tokens.
func TestEngineParallel(t *testing.T) {
	for _, par := range []int{1, 2, 4} {
		t.Run(fmt.Sprint(par), func(t *testing.T) {
			m := newCacheModel(96, 16)
			e := lm.NewEngine(m, testTokenizer(t), lm.Options{Parallel: par, Queue: 64})
			defer e.Close()
			var wg sync.WaitGroup
			errs := make(chan error, 40)
			for r := range 40 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// Prompts share beginnings in groups of three.
					p := append(prompt(r/3, 5), prompt(r, 3+r%7)[1:]...)
					n := 3 + r%11
					s, err := e.Start(context.Background(), lm.Request{Prompt: p, MaxTokens: n, Sampling: greedy()})
					for errors.Is(err, lm.ErrBusy) {
						time.Sleep(time.Millisecond)
						s, err = e.Start(context.Background(), lm.Request{Prompt: p, MaxTokens: n, Sampling: greedy()})
					}
					if err != nil {
						errs <- err
						return
					}
					var ids []int32
					for tok := range s.Tokens() {
						ids = append(ids, tok.ID)
					}
					if _, err := s.Result(); err != nil {
						errs <- err
						return
					}
					if want := reference(p, min(n, 96/par-len(p)), true); !slices.Equal(ids, want) {
						errs <- fmt.Errorf("request %d: generated %v, want %v", r, ids, want)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if par > 1 && !slices.ContainsFunc(m.sizes, func(n int) bool { return n > 1 && n < 16 }) {
				t.Errorf("batch sizes %v: no evaluation decoded sequences together", m.sizes)
			}
		})
	}
}

// TestEngineMovesSequences: when the cache's end is reached with free
// slots between a live sequence's, the live ones move to the front.
func TestEngineMovesSequences(t *testing.T) {
	m := newCacheModel(30, 8)
	e := lm.NewEngine(m, testTokenizer(t), lm.Options{Parallel: 2})
	defer e.Close()
	start := func(seed, n int) (*lm.Stream, []int32) {
		p := prompt(seed, 5)
		s, err := e.Start(context.Background(), lm.Request{Prompt: p, MaxTokens: n, Sampling: greedy()})
		if err != nil {
			t.Fatal(err)
		}
		return s, reference(p, n, true)
	}
	// a and b interleave in the cache; c follows a, whose slots are then
	// holes between b's: the three together need more than 30 slots.
	a, wantA := start(1, 2)
	b, wantB := start(2, 10)
	check := func(name string, s *lm.Stream, want []int32) {
		if ids, _, _ := collect(t, s); !slices.Equal(ids, want) {
			t.Errorf("%s: generated %v, want %v", name, ids, want)
		}
	}
	check("a", a, wantA)
	c, wantC := start(3, 10)
	check("b", b, wantB)
	check("c", c, wantC)
}

// TestEnginePrefixReuse: a request that continues the last one's tokens
// (a chat's next turn) evaluates only what is new.
func TestEnginePrefixReuse(t *testing.T) {
	m := newCacheModel(128, 32)
	e := lm.NewEngine(m, testTokenizer(t), lm.Options{})
	defer e.Close()
	p := prompt(3, 20)
	s, _ := e.Start(context.Background(), lm.Request{Prompt: p, MaxTokens: 10, Sampling: greedy()})
	ids, _, res := collect(t, s)
	next := append(append(slices.Clone(p), ids...), prompt(4, 6)[1:]...)
	before := len(m.sizes)
	s, err := e.Start(context.Background(), lm.Request{Prompt: next, MaxTokens: 5, Sampling: greedy()})
	if err != nil {
		t.Fatal(err)
	}
	ids2, _, _ := collect(t, s)
	if want := reference(next, 5, true); !slices.Equal(ids2, want) {
		t.Fatalf("second turn generated %v, want %v", ids2, want)
	}
	// The cache holds p and the generated tokens, but for the last unless
	// the end of generation came after it.
	cached := len(p) + len(ids)
	if res.Finish == lm.FinishLength {
		cached--
	}
	if got, want := m.sizes[before], len(next)-cached; got != want {
		t.Errorf("the second prompt evaluated %d tokens, want %d (batches %v)", got, want, m.sizes)
	}
}

func TestEngineStops(t *testing.T) {
	e := lm.NewEngine(newCacheModel(64, 8), testTokenizer(t), lm.Options{})
	defer e.Close()
	p := prompt(5, 4)
	full := e.Tokenizer().Decode(reference(p, 20, false))
	stop := full[6:8]
	s, _ := e.Start(context.Background(), lm.Request{Prompt: p, MaxTokens: 20, Sampling: greedy(), Stop: []string{"zzz", stop}})
	_, text, res := collect(t, s)
	if want := full[:strings.Index(full, stop)]; text != want || res.Finish != lm.FinishStop {
		t.Errorf("stopped at %q: %q, %q; want %q, %q", stop, text, res.Finish, want, lm.FinishStop)
	}
	// The context: 64 slots, so 60 tokens after a 4-token prompt at most.
	s, _ = e.Start(context.Background(), lm.Request{Prompt: []int32{1, 2, 3, 4}, Sampling: greedy()})
	ids, _, res := collect(t, s)
	if want := reference([]int32{1, 2, 3, 4}, 60, true); !slices.Equal(ids, want) || (len(want) == 60) != (res.Finish == lm.FinishLength) {
		t.Errorf("generated %d tokens, finish %q; want %d", len(ids), res.Finish, len(want))
	}
}

func TestEngineErrors(t *testing.T) {
	m := newCacheModel(16, 4)
	m.delay = 5 * time.Millisecond
	e := lm.NewEngine(m, testTokenizer(t), lm.Options{Queue: 1})
	var ce *lm.ContextError
	if _, err := e.Start(context.Background(), lm.Request{Prompt: prompt(1, 16), Sampling: greedy()}); !errors.As(err, &ce) {
		t.Errorf("a 16-token prompt in 16 slots: %v, want a ContextError", err)
	}
	if _, err := e.Start(context.Background(), lm.Request{Prompt: []int32{1, 99}, Sampling: greedy()}); err == nil {
		t.Error("a token outside the vocabulary was accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	long, err := e.Start(ctx, lm.Request{Prompt: prompt(1, 3), Sampling: greedy()})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // long is active now; the queue is empty
	var busy error
	for range 3 {
		if _, err := e.Start(context.Background(), lm.Request{Prompt: prompt(2, 3), Sampling: greedy()}); err != nil {
			busy = err
		}
	}
	if !errors.Is(busy, lm.ErrBusy) {
		t.Errorf("three requests behind one in a queue of one: %v, want ErrBusy", busy)
	}
	cancel()
	for range long.Tokens() {
	}
	if _, err := long.Result(); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
	e.Close()
	if _, err := e.Start(context.Background(), lm.Request{Prompt: prompt(2, 3), Sampling: greedy()}); !errors.Is(err, lm.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

// TestEngineContextShift generates past a full context with ContextShift:
// at each shift the sequence keeps its BOS and Keep tokens and drops half
// of the rest, so the model must see exactly that window (the cache
// model fails on anything else) and generate what it generates on it.
func TestEngineContextShift(t *testing.T) {
	const nctx = 24 // the cache model's eos comes only past 25 tokens
	for _, keep := range []int{0, 3, -1} {
		t.Run(fmt.Sprint("keep", keep), func(t *testing.T) {
			m := newCacheModel(nctx, 8)
			e := lm.NewEngine(m, testTokenizer(t), lm.Options{})
			defer e.Close()
			p := prompt(2, 6)
			s, err := e.Start(context.Background(), lm.Request{Prompt: p, MaxTokens: 80, Sampling: greedy(), ContextShift: true, Keep: keep})
			if err != nil {
				t.Fatal(err)
			}
			ids, _, res := collect(t, s)
			want, shifts := referenceShift(p, 80, nctx, keep)
			if !slices.Equal(ids, want) {
				t.Fatalf("generated %v, want %v", ids, want)
			}
			if res.Shifts != shifts || shifts == 0 {
				t.Errorf("%d shifts, want %d (and some)", res.Shifts, shifts)
			}
		})
	}
	// Without it the full context ends the sequence.
	m := newCacheModel(nctx, 8)
	e := lm.NewEngine(m, testTokenizer(t), lm.Options{})
	defer e.Close()
	s, err := e.Start(context.Background(), lm.Request{Prompt: prompt(2, 6), MaxTokens: 80, Sampling: greedy()})
	if err != nil {
		t.Fatal(err)
	}
	if ids, _, res := collect(t, s); len(ids) > nctx-6 || res.Finish != lm.FinishLength && res.Finish != lm.FinishStop {
		t.Errorf("%d tokens, finish %q: want the context's end", len(ids), res.Finish)
	}
}

// referenceShift is reference with llama.cpp's context shift in a context
// of nctx tokens: the shifts it took.
func referenceShift(prompt []int32, n, nctx, keep int) ([]int32, int) {
	seq := slices.Clone(prompt)
	var out []int32
	shifts := 0
	for range n {
		tok := nextToken(seq)
		if tok == 0 {
			break
		}
		out = append(out, tok)
		seq = append(seq, tok)
		if len(seq) >= nctx {
			k := keep + 1 // the BOS stays
			if keep < 0 {
				k = len(prompt)
			}
			d := (len(seq) - k) / 2
			seq = append(seq[:k:k], seq[k+d:]...)
			shifts++
		}
	}
	return out, shifts
}
