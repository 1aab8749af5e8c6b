package server

import (
	"context"
	"errors"
	"iter"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/graphc/graphc/runtime/lm"
	"github.com/graphc/graphc/tokenizer"
)

var _ Tokenizer = (*tokenizer.Tokenizer)(nil)

// fakeTokenizer has a token for each Unicode code point, the code point
// its id, and BOS and EOS after them, written <s> and </s>.
type fakeTokenizer struct{}

const (
	fakeBOS   = utf8.MaxRune + 1
	fakeEOS   = utf8.MaxRune + 2
	fakeVocab = utf8.MaxRune + 3
)

func (fakeTokenizer) BOS() int32 { return fakeBOS }

func (fakeTokenizer) Encode(text string, addSpecial, parseSpecial bool) []int32 {
	var out []int32
	if addSpecial {
		out = append(out, fakeBOS)
	}
	for text != "" {
		if parseSpecial && strings.HasPrefix(text, "<s>") {
			out = append(out, fakeBOS)
			text = text[len("<s>"):]
			continue
		}
		r, n := utf8.DecodeRuneInString(text)
		out = append(out, r)
		text = text[n:]
	}
	return out
}

func (fakeTokenizer) Piece(id int32, special bool) string {
	switch {
	case id == fakeBOS && special:
		return "<s>"
	case id == fakeEOS && special:
		return "</s>"
	case id >= 0 && id <= utf8.MaxRune:
		return string(rune(id))
	}
	return ""
}

func (t fakeTokenizer) Decode(ids []int32) string {
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(t.Piece(id, false))
	}
	return b.String()
}

// fakeEngine generates the prompt's text back, token by token, stopping
// before a stop string or at MaxTokens.
type fakeEngine struct {
	nctx      int
	delay     time.Duration // before each token
	err       error         // Start's, if set
	failAfter int           // > 0: a sequence fails after so many tokens

	mu       sync.Mutex
	requests []lm.Request
	canceled chan struct{} // a value for each sequence its ctx ended
}

func newFake() *fakeEngine {
	return &fakeEngine{nctx: 4096, canceled: make(chan struct{}, 1000)}
}

const (
	fakePromptTime = 10 * time.Millisecond
	fakeGenTime    = 20 * time.Millisecond
)

func (e *fakeEngine) Info() lm.Info { return lm.Info{NCtx: e.nctx, NBatch: 512, NVocab: fakeVocab} }

func (e *fakeEngine) Start(ctx context.Context, r lm.Request) (Stream, error) {
	if e.err != nil {
		return nil, e.err
	}
	if len(r.Prompt) >= e.nctx {
		return nil, &lm.ContextError{Tokens: len(r.Prompt), NCtx: e.nctx}
	}
	e.mu.Lock()
	e.requests = append(e.requests, r)
	e.mu.Unlock()
	s := &fakeStream{tokens: make(chan lm.Token, len(r.Prompt)), done: make(chan struct{})}
	go e.run(ctx, r, s)
	return s, nil
}

// lastRequest is the request the engine started last.
func (e *fakeEngine) lastRequest() lm.Request {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.requests[len(e.requests)-1]
}

func (e *fakeEngine) run(ctx context.Context, r lm.Request, s *fakeStream) {
	defer close(s.done)
	defer close(s.tokens)
	var gen []int32
	for _, id := range r.Prompt {
		if id != fakeBOS {
			gen = append(gen, id)
		}
	}
	tok := fakeTokenizer{}
	s.res = lm.Result{PromptTokens: len(r.Prompt), Finish: lm.FinishStop, PromptTime: fakePromptTime, GenTime: fakeGenTime}
	for i, id := range gen {
		rest := tok.Decode(gen[i:])
		for _, stop := range r.Stop {
			if strings.HasPrefix(rest, stop) {
				return
			}
		}
		if r.MaxTokens > 0 && i == r.MaxTokens {
			s.res.Finish = lm.FinishLength
			return
		}
		if e.failAfter > 0 && i == e.failAfter {
			s.err = errFake
			return
		}
		select {
		case <-ctx.Done():
			s.err = ctx.Err()
			e.canceled <- struct{}{}
			return
		case <-time.After(e.delay):
		}
		s.tokens <- lm.Token{ID: id, Text: tok.Piece(id, false)}
		s.res.Tokens++
	}
}

var errFake = errors.New("the fake engine failed")

type fakeStream struct {
	tokens chan lm.Token // buffered for every token, as the engine buffers them
	done   chan struct{}
	res    lm.Result
	err    error
}

func (s *fakeStream) Tokens() iter.Seq[lm.Token] {
	return func(yield func(lm.Token) bool) {
		for t := range s.tokens {
			if !yield(t) {
				return
			}
		}
	}
}

func (s *fakeStream) Result() (lm.Result, error) {
	<-s.done
	return s.res, s.err
}
