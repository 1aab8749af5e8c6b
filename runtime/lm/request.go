package lm

import (
	"errors"
	"fmt"
	"time"

	"github.com/graphc/graphc/runtime/lm/sample"
)

// Request is one sequence to generate: its prompt's tokens, then up to
// MaxTokens sampled ones.
type Request struct {
	Prompt    []int32
	MaxTokens int // 0: until the end of generation or a full context
	Sampling  sample.Params
	Stop      []string // texts that end generation; the text returned stops before them
	// ContextShift lets generation go on past a full context, as
	// llama.cpp's --context-shift chooses the tokens: the first Keep
	// (and a BOS before them) stay, half of the rest after them are
	// dropped, and the tokens after those are evaluated again at their new
	// positions (the model's cache has no in-place re-rotation of keys).
	// Without it a full context ends the sequence (FinishLength).
	ContextShift bool
	Keep         int // tokens kept at a context shift; -1: the whole prompt
}

// Token is one generated token and the text it completes: whole UTF-8
// characters, with text that may begin a stop string held back until it
// is known not to. A sequence that ends with such text held back (at
// the end of generation) yields it last, as a Token with ID -1.
type Token struct {
	ID   int32
	Text string
}

// Finish reasons, as OpenAI's API names them.
const (
	FinishStop   = "stop"   // the end of generation or a stop string
	FinishLength = "length" // MaxTokens, or the context is full
)

// Result is what a finished sequence took.
type Result struct {
	PromptTokens int
	Tokens       int    // generated
	Finish       string // FinishStop or FinishLength
	PromptTime   time.Duration
	GenTime      time.Duration // from the first generated token to the last
	Shifts       int           // context shifts (Request.ContextShift)
}

// ErrBusy is the answer to a request when the queue is full.
var ErrBusy = errors.New("lm: every slot is busy and the queue is full")

// ContextError is a prompt longer than the context leaves room for.
type ContextError struct {
	Tokens int // the prompt's
	NCtx   int // the context's
}

func (e *ContextError) Error() string {
	return fmt.Sprintf("the prompt is %d tokens; the context holds %d (and one more to generate)", e.Tokens, e.NCtx)
}
