package server

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/graphc/graphc/runtime/lm"
)

func (s *server) health(w *response, r *http.Request) *apiError {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

type model struct {
	ID      string    `json:"id"`
	Object  string    `json:"object"`
	Created int64     `json:"created"`
	OwnedBy string    `json:"owned_by"`
	Meta    modelMeta `json:"meta"`
}

// modelMeta is llama-server's model metadata, the part the engine knows.
type modelMeta struct {
	NCtx   int `json:"n_ctx"`
	NVocab int `json:"n_vocab"`
}

func (s *server) models(w *response, r *http.Request) *apiError {
	info := s.c.Engine.Info()
	writeJSON(w, http.StatusOK, struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{"list", []model{{ID: s.c.Model, Object: "model", Created: s.created, OwnedBy: "graphc", Meta: modelMeta{info.NCtx, info.NVocab}}}})
	return nil
}

func (s *server) completions(w *response, r *http.Request) *apiError {
	var q completionRequest
	if err := decode(w, r, &q); err != nil {
		return err
	}
	if err := q.check(); err != nil {
		return err
	}
	// llama-server tokenizes prompts with special tokens parsed, so that
	// a prompt can hold a chat template's control tokens.
	lr, err := q.request(&s.c, s.c.Tokenizer.Encode(string(*q.Prompt), true, true))
	if err != nil {
		return err
	}
	return s.generate(w, r, &q.params, lr, textCompletion)
}

func (s *server) chatCompletions(w *response, r *http.Request) *apiError {
	if s.c.Chat == nil {
		return &apiError{Code: http.StatusNotImplemented, Type: "not_supported_error", Message: "the model has no chat template: use /v1/completions"}
	}
	var q chatRequest
	if err := decode(w, r, &q); err != nil {
		return err
	}
	msgs, err := q.check()
	if err != nil {
		return err
	}
	text, terr := s.c.Chat(msgs)
	if terr != nil {
		return badRequest("chat template: %v", terr)
	}
	toks := s.c.Tokenizer.Encode(text, true, true)
	// A template that writes the BOS token's text, as most do, and a
	// vocabulary that adds BOS would give two; llama.cpp cuts the text
	// from the rendered template, which tokenizes the same as this.
	if len(toks) >= 2 && toks[0] == s.c.Tokenizer.BOS() && toks[1] == toks[0] {
		toks = toks[1:]
	}
	lr, err := q.request(&s.c, toks)
	if err != nil {
		return err
	}
	return s.generate(w, r, &q.params, lr, chatCompletion)
}

// kind is what an endpoint's responses are: OpenAI's object names, and a
// choice made of generated text.
type kind struct {
	object, chunkObject, idPrefix string
	choice                        func(text string, finish *string, stream bool) choice
	roleChunk                     bool // a stream starts with a chunk of the assistant's role
}

var textCompletion = &kind{
	object: "text_completion", chunkObject: "text_completion", idPrefix: "cmpl-",
	choice: func(text string, finish *string, stream bool) choice {
		return choice{Text: &text, FinishReason: finish}
	},
}

var chatCompletion = &kind{
	object: "chat.completion", chunkObject: "chat.completion.chunk", idPrefix: "chatcmpl-", roleChunk: true,
	choice: func(text string, finish *string, stream bool) choice {
		switch {
		case !stream:
			return choice{Message: &message{Role: "assistant", Content: text}, FinishReason: finish}
		case finish != nil:
			return choice{Delta: &delta{}, FinishReason: finish}
		}
		return choice{Delta: &delta{Content: &text}}
	},
}

type completion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []choice `json:"choices"`
	Usage   *usage   `json:"usage,omitempty"`
	Timings *timings `json:"timings,omitempty"` // llama-server's
}

// choice is one of a completion's: text (completions), message (chat) or
// delta (chat chunks).
type choice struct {
	Index        int       `json:"index"`
	Text         *string   `json:"text,omitempty"`
	Message      *message  `json:"message,omitempty"`
	Delta        *delta    `json:"delta,omitempty"`
	Logprobs     *struct{} `json:"logprobs"` // null: the server computes none
	FinishReason *string   `json:"finish_reason"`
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type delta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// timings are llama-server's, from the engine's counts and times.
type timings struct {
	PromptN            int     `json:"prompt_n"`
	PromptMS           float64 `json:"prompt_ms"`
	PromptPerSecond    float64 `json:"prompt_per_second"`
	PredictedN         int     `json:"predicted_n"`
	PredictedMS        float64 `json:"predicted_ms"`
	PredictedPerSecond float64 `json:"predicted_per_second"`
}

func usageOf(res lm.Result) *usage {
	return &usage{res.PromptTokens, res.Tokens, res.PromptTokens + res.Tokens}
}

func timingsOf(res lm.Result) *timings {
	return &timings{
		res.PromptTokens, ms(res.PromptTime), perSecond(res.PromptTokens, res.PromptTime),
		res.Tokens, ms(res.GenTime), perSecond(res.Tokens, res.GenTime),
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// perSecond is 0 for no time, which JSON could not hold as +Inf.
func perSecond(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) * float64(time.Second) / float64(d)
}

// generate runs lr and answers with k's objects: one, or a stream of
// chunks when p asks for it.
func (s *server) generate(w *response, r *http.Request, p *params, lr lm.Request, k *kind) *apiError {
	st, err := s.c.Engine.Start(r.Context(), lr)
	if err != nil {
		return engineError(err)
	}
	out := completion{ID: k.idPrefix + rand.Text(), Object: k.object, Created: time.Now().Unix(), Model: s.c.Model}
	if !p.Stream {
		var text strings.Builder
		for t := range st.Tokens() {
			text.WriteString(t.Text)
		}
		res, err := st.Result()
		if err != nil {
			return engineError(err)
		}
		out.Choices = []choice{k.choice(text.String(), &res.Finish, false)}
		out.Usage, out.Timings = usageOf(res), timingsOf(res)
		w.note = resultNote(res)
		writeJSON(w, http.StatusOK, out)
		return nil
	}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	ev := events{w: w, rc: http.NewResponseController(w)}
	out.Object = k.chunkObject
	if k.roleChunk {
		empty := ""
		out.Choices = []choice{{Delta: &delta{Role: "assistant", Content: &empty}}}
		ev.send(out)
	}
	n := 0
	for t := range st.Tokens() {
		if ev.err != nil {
			// The client is gone: r's context, canceled now or once this
			// returns, ends the sequence.
			w.note = fmt.Sprintf("the client left after %d tokens: %v", n, ev.err)
			return nil
		}
		n++
		if t.Text != "" {
			out.Choices = []choice{k.choice(t.Text, nil, true)}
			ev.send(out)
		}
	}
	res, err := st.Result()
	if err != nil {
		e := engineError(err)
		w.note = fmt.Sprintf("failed after %d tokens: %s", n, e.Message)
		ev.send(errorResponse{e})
		return nil
	}
	out.Choices = []choice{k.choice("", &res.Finish, true)}
	out.Timings = timingsOf(res)
	ev.send(out)
	if p.includeUsage() {
		out.Choices, out.Usage, out.Timings = []choice{}, usageOf(res), nil
		ev.send(out)
	}
	ev.done()
	w.note = resultNote(res)
	return nil
}

func resultNote(res lm.Result) string {
	return fmt.Sprintf("prompt %d tokens in %v, generated %d in %v, %s",
		res.PromptTokens, res.PromptTime.Round(time.Millisecond), res.Tokens, res.GenTime.Round(time.Millisecond), res.Finish)
}

// events writes server-sent events, each flushed to the client as it is
// written. The first error ends the writing.
type events struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	err error
}

func (e *events) send(v any) {
	if e.err != nil {
		return
	}
	var b []byte
	if b, e.err = json.Marshal(v); e.err == nil {
		e.write("data: " + string(b) + "\n\n")
	}
}

// done is the end of the stream, as OpenAI's API marks it.
func (e *events) done() { e.write("data: [DONE]\n\n") }

func (e *events) write(s string) {
	if e.err != nil {
		return
	}
	if _, e.err = e.w.Write([]byte(s)); e.err == nil {
		e.err = e.rc.Flush()
	}
}

func (s *server) tokenize(w *response, r *http.Request) *apiError {
	var q struct {
		Content      string `json:"content"`
		AddSpecial   bool   `json:"add_special"`
		ParseSpecial *bool  `json:"parse_special"` // llama-server's default: true
		WithPieces   bool   `json:"with_pieces"`
	}
	if err := decode(w, r, &q); err != nil {
		return err
	}
	toks := s.c.Tokenizer.Encode(q.Content, q.AddSpecial, q.ParseSpecial == nil || *q.ParseSpecial)
	if !q.WithPieces {
		writeJSON(w, http.StatusOK, map[string][]int32{"tokens": nonNil(toks)})
		return nil
	}
	type piece struct {
		ID    int32 `json:"id"`
		Piece any   `json:"piece"`
	}
	pieces := make([]piece, len(toks))
	for i, id := range toks {
		pieces[i] = piece{id, pieceJSON(s.c.Tokenizer.Piece(id, true))}
	}
	writeJSON(w, http.StatusOK, map[string][]piece{"tokens": pieces})
	return nil
}

// pieceJSON is a token's text as llama-server's /tokenize gives it: a
// string, or the bytes of a piece of a UTF-8 character, which a JSON
// string cannot hold.
func pieceJSON(p string) any {
	if utf8.ValidString(p) {
		return p
	}
	b := make([]int, len(p))
	for i := range len(p) {
		b[i] = int(p[i])
	}
	return b
}

// nonNil makes no tokens [] in JSON rather than null.
func nonNil(toks []int32) []int32 {
	if toks == nil {
		return []int32{}
	}
	return toks
}

func (s *server) detokenize(w *response, r *http.Request) *apiError {
	var q struct {
		Tokens []int32 `json:"tokens"`
	}
	if err := decode(w, r, &q); err != nil {
		return err
	}
	n := s.c.Engine.Info().NVocab
	for i, id := range q.Tokens {
		if id < 0 || int(id) >= n {
			return badRequest("tokens[%d] is %d, not a token of the vocabulary (0 to %d)", i, id, n-1)
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"content": s.c.Tokenizer.Decode(q.Tokens)})
	return nil
}
