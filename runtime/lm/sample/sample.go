// Package sample picks the next token from a row of logits as llama.cpp's
// common sampler does (common/sampling.cpp, its default sampler order):
//
//	penalties → top-k → typical-p → top-p → min-p → temperature → dist
//
// with llama.cpp's parameters, defaults and flag names (Params). The stages
// keep llama.cpp's arithmetic: the penalties divide a repeated token's
// positive logit by the repeat penalty, multiply a non-positive one, and
// subtract count·frequency + presence; top-k keeps the k largest logits;
// typical-p keeps the tokens whose surprise is closest to the entropy until
// their probability exceeds p; top-p keeps the shortest prefix by logit
// whose probability reaches p; min-p keeps the tokens whose probability is
// at least min-p times the largest; probabilities are float32 softmaxes of
// the candidates left. A temperature <= 0 picks the largest logit of the
// penalized candidates (ties to the lowest id), so -temp 0 gives llama.cpp's
// greedy tokens; otherwise the logits are divided by it and dist draws from
// their softmax. The draw uses math/rand/v2's PCG: a seed repeats its
// tokens, though not llama.cpp's, whose generator is std::mt19937.
//
// Not supported: DRY, XTC, top-n-sigma, mirostat, dynamic temperature,
// adaptive-p, grammars, logit bias, a custom sampler order, and min_keep,
// which is 1 here (llama.cpp's default 0 keeps at least one token too).
package sample

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Sampler picks tokens for one sequence at a time. It is not safe for
// concurrent use.
type Sampler struct {
	p      Params
	nVocab int
	seed   uint32 // in use
	pcg    *rand.PCG
	rng    *rand.Rand

	// The penalties' window: hist holds the last RepeatLastN accepted tokens
	// (a ring, next is where the next one goes) or, for -1, all of them;
	// counts[t] is t's occurrences in it.
	hist   []int32
	next   int
	counts []int32

	pen  []float32 // the penalized logits
	cand []cand    // the candidates' buffer, nVocab long
}

// cand is a candidate token, as llama.cpp's llama_token_data.
type cand struct {
	id    int32
	logit float32
	p     float32 // probability, after a softmax
	key   float32 // typical-p's sort key
}

// New makes a sampler for a vocabulary of nVocab tokens. p must pass
// Check: New panics otherwise, as callers check user input first.
func New(p Params, nVocab int) *Sampler {
	if err := p.Check(); err != nil {
		panic("BUG: sample.New: " + err.Error())
	}
	if nVocab <= 0 {
		panic(fmt.Sprintf("BUG: sample.New: vocabulary of %d tokens", nVocab))
	}
	s := &Sampler{
		p:      p,
		nVocab: nVocab,
		pcg:    rand.NewPCG(0, 0),
		counts: make([]int32, nVocab),
		pen:    make([]float32, nVocab),
		cand:   make([]cand, nVocab),
	}
	if p.RepeatLastN > 0 {
		s.hist = make([]int32, 0, p.RepeatLastN)
	}
	s.rng = rand.New(s.pcg)
	s.reseed()
	return s
}

// reseed starts the RNG over from Params.Seed, drawing a new random seed for
// DefaultSeed, as llama.cpp's dist sampler does when made or reset.
func (s *Sampler) reseed() {
	s.seed = s.p.Seed
	for s.seed == DefaultSeed {
		s.seed = rand.Uint32()
	}
	s.pcg.Seed(uint64(s.seed), 0x9e3779b97f4a7c15)
}

// Seed is the seed in use (the random one chosen when Params.Seed was
// DefaultSeed), for printing as llama.cpp does.
func (s *Sampler) Seed() uint32 { return s.seed }

// Accept records a token of the sequence (prompt tokens too, as llama.cpp's
// common_sampler_accept with accept_grammar=false) for the penalties.
func (s *Sampler) Accept(tok int32) {
	if tok < 0 || int(tok) >= s.nVocab {
		panic(fmt.Sprintf("BUG: sample: token %d outside the vocabulary of %d", tok, s.nVocab))
	}
	switch n := s.p.RepeatLastN; {
	case n == 0:
		return
	case n > 0 && len(s.hist) == n:
		s.counts[s.hist[s.next]]--
		s.hist[s.next] = tok
		s.next = (s.next + 1) % n
	default:
		s.hist = append(s.hist, tok)
	}
	s.counts[tok]++
}

// Reset forgets the history for a new sequence and starts the RNG over
// from the seed, as llama.cpp's common_sampler_reset does (a DefaultSeed
// sampler draws a new random seed).
func (s *Sampler) Reset() {
	for _, t := range s.hist {
		s.counts[t] = 0
	}
	s.hist = s.hist[:0]
	s.next = 0
	s.reseed()
}

// Sample picks the next token from one row of logits (len nVocab), leaving
// logits as they are and allocating nothing.
func (s *Sampler) Sample(logits []float32) int32 {
	if len(logits) != s.nVocab {
		panic(fmt.Sprintf("BUG: sample: %d logits for a vocabulary of %d", len(logits), s.nVocab))
	}
	p := &s.p
	l := s.penalize(logits)
	if p.Temp <= 0 && p.TypicalP >= 1 {
		// top-k, top-p and min-p all keep the largest logit, which the
		// temperature then picks.
		return topK(s.cand, l, 1)[0].id
	}
	var c []cand
	sorted := false
	if k := p.TopK; k > 0 {
		c, sorted = topK(s.cand, l, min(k, len(l))), true
	} else {
		c = s.cand[:len(l)]
		for i, v := range l {
			c[i] = cand{id: int32(i), logit: v}
		}
	}
	if p.TypicalP < 1 {
		c, sorted = typical(c, p.TypicalP, sorted), false
	}
	if p.TopP < 1 {
		c = topP(c, p.TopP, sorted)
	}
	if p.MinP > 0 {
		c = minP(c, p.MinP)
	}
	if p.Temp <= 0 {
		return slices.MinFunc(c, better).id
	}
	for i := range c {
		c[i].logit /= p.Temp
	}
	return s.dist(c)
}

// penalize returns logits with the penalties applied: logits itself when
// they change nothing, else s.pen.
func (s *Sampler) penalize(logits []float32) []float32 {
	p := &s.p
	if len(s.hist) == 0 || p.RepeatPenalty == 1 && p.FrequencyPenalty == 0 && p.PresencePenalty == 0 {
		return logits
	}
	copy(s.pen, logits)
	// A token repeated in the window is set again to the same value, from
	// logits.
	for _, t := range s.hist {
		v := logits[t]
		if v <= 0 {
			v *= p.RepeatPenalty
		} else {
			v /= p.RepeatPenalty
		}
		s.pen[t] = v - (float32(s.counts[t])*p.FrequencyPenalty + p.PresencePenalty)
	}
	return s.pen
}

// better orders candidates by logit, descending, and equal logits by id, so
// that ties go to the lowest id whatever the order candidates come in.
func better(a, b cand) int {
	switch {
	case a.logit > b.logit:
		return -1
	case a.logit < b.logit:
		return 1
	}
	return cmp.Compare(a.id, b.id)
}

// topK puts the k largest of l into buf[:k], sorted by better. A min-heap
// of the best k so far keeps the scan at one comparison for most logits,
// where llama.cpp uses a partial sort.
func topK(buf []cand, l []float32, k int) []cand {
	h := buf[:k]
	for i := range h {
		h[i] = cand{id: int32(i), logit: l[i]}
	}
	heapify(h)
	worst := h[0].logit
	for i, v := range l[k:] {
		// A later equal logit has a larger id: it does not beat h[0].
		if v > worst {
			h[0] = cand{id: int32(k + i), logit: v}
			siftDown(h, 0)
			worst = h[0].logit
		}
	}
	slices.SortFunc(h, better)
	return h
}

// selectTop reorders c so that c[:k] are its k best candidates, sorted by
// better; the rest follow in no order.
func selectTop(c []cand, k int) {
	h := c[:k]
	heapify(h)
	for i := k; i < len(c); i++ {
		if better(c[i], h[0]) < 0 {
			h[0], c[i] = c[i], h[0]
			siftDown(h, 0)
		}
	}
	slices.SortFunc(h, better)
}

// heapify makes h a heap with its worst candidate (by better) at the root.
func heapify(h []cand) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
}

func siftDown(h []cand, i int) {
	for {
		w := i
		if l := 2*i + 1; l < len(h) && better(h[l], h[w]) > 0 {
			w = l
		}
		if r := 2*i + 2; r < len(h) && better(h[r], h[w]) > 0 {
			w = r
		}
		if w == i {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

// softmax sets c's probabilities from their logits, in float32 as
// llama.cpp's.
func softmax(c []cand) {
	mx := c[0].logit
	for _, x := range c[1:] {
		mx = max(mx, x.logit)
	}
	var sum float32
	for i := range c {
		c[i].p = exp32(c[i].logit - mx)
		sum += c[i].p
	}
	for i := range c {
		c[i].p /= sum
	}
}

func exp32(x float32) float32 { return float32(math.Exp(float64(x))) }

// typical is llama_sampler_typical: the candidates sorted by how far their
// surprise (-log p) is from the entropy, cut where their probability first
// exceeds p.
func typical(c []cand, p float32, sorted bool) []cand {
	if !sorted {
		slices.SortFunc(c, better)
	}
	softmax(c)
	var ent float32
	for _, x := range c {
		if x.p > 0 { // llama.cpp's 0·log 0 is NaN, which would spoil the order
			ent -= x.p * log32(x.p)
		}
	}
	for i := range c {
		c[i].key = float32(math.Abs(float64(-log32(c[i].p) - ent)))
	}
	// Stable, so that equal keys keep the order by logit.
	slices.SortStableFunc(c, func(a, b cand) int { return cmp.Compare(a.key, b.key) })
	var cum float32
	for i, x := range c {
		if cum += x.p; cum > p {
			return c[:i+1]
		}
	}
	return c
}

func log32(x float32) float32 { return float32(math.Log(float64(x))) }

// topP is llama_sampler_top_p: the shortest prefix of the candidates sorted
// by logit whose probability reaches p. Unsorted, a large vocabulary is
// first sorted only as far as its best 256, as llama.cpp does, since p is
// usually reached long before.
func topP(c []cand, p float32, sorted bool) []cand {
	softmax(c)
	done := len(c) // candidates known to be in order
	if !sorted {
		if len(c) > 1024 {
			done = 256
			selectTop(c, done)
		} else {
			slices.SortFunc(c, better)
		}
	}
	var cum float32
	for i := range c {
		if i == done {
			slices.SortFunc(c[done:], better)
		}
		if cum += c[i].p; cum >= p {
			return c[:i+1]
		}
	}
	return c
}

// minP is llama_sampler_min_p: the candidates whose probability is at
// least p times the largest, in their order. It compares logits, as
// llama.cpp does: logit >= max + log(p).
func minP(c []cand, p float32) []cand {
	mx := c[0].logit
	for _, x := range c[1:] {
		mx = max(mx, x.logit)
	}
	lo := mx + log32(p)
	n := 0
	for _, x := range c {
		if x.logit >= lo {
			c[n] = x
			n++
		}
	}
	return c[:n]
}

// dist is llama_sampler_dist: a draw from the softmax of c's logits, by
// walking their cumulative unnormalized probability up to a uniform
// fraction of its total.
func (s *Sampler) dist(c []cand) int32 {
	if len(c) == 1 {
		return c[0].id // llama.cpp draws nothing then either
	}
	mx := c[0].logit
	for _, x := range c[1:] {
		mx = max(mx, x.logit)
	}
	var sum float64
	for i := range c {
		c[i].p = exp32(c[i].logit - mx)
		sum += float64(c[i].p)
	}
	target := sum * s.rng.Float64()
	var run float64
	for _, x := range c {
		if run += float64(x.p); run >= target {
			return x.id
		}
	}
	return c[len(c)-1].id
}
