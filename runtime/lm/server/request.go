package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"

	"github.com/graphc/graphc/runtime/lm"
	"github.com/graphc/graphc/runtime/lm/sample"
)

// params are the fields /v1/completions and /v1/chat/completions share.
// Pointers tell a field sent from one left to the server's default.
type params struct {
	Model         string         `json:"model"` // ignored: the server has one model
	Stream        bool           `json:"stream"`
	StreamOptions *streamOptions `json:"stream_options"`

	MaxTokens        *int     `json:"max_tokens"`
	NKeep            *int     `json:"n_keep"` // llama-server's: tokens a context shift keeps
	Temperature      *float32 `json:"temperature"`
	TopP             *float32 `json:"top_p"`
	TopK             *int     `json:"top_k"` // llama-server's
	MinP             *float32 `json:"min_p"` // llama-server's
	Seed             *int64   `json:"seed"`
	Stop             stops    `json:"stop"`
	PresencePenalty  *float32 `json:"presence_penalty"`
	FrequencyPenalty *float32 `json:"frequency_penalty"`
	RepeatPenalty    *float32 `json:"repeat_penalty"` // llama-server's

	// Accepted at the values that ask for what the server does anyway, as
	// clients send them: one choice, no logit biases, and user, which is
	// only for OpenAI's abuse monitoring.
	N         *int               `json:"n"`
	LogitBias map[string]float64 `json:"logit_bias"`
	User      string             `json:"user"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// maxMaxTokens bounds max_tokens: no context holds more tokens, and the
// engine's counts cannot overflow under it.
const maxMaxTokens = math.MaxInt32

// request is what the engine takes for p, starting from c's defaults.
func (p *params) request(c *Config, prompt []int32) (lm.Request, *apiError) {
	r := lm.Request{Prompt: prompt, MaxTokens: c.MaxTokens, Sampling: c.Sampling, Stop: p.Stop, ContextShift: c.ContextShift, Keep: c.Keep}
	if p.NKeep != nil {
		if *p.NKeep < -1 {
			return r, badRequest("n_keep is %d: it must be -1 (the whole prompt) or 0 or more", *p.NKeep)
		}
		r.Keep = *p.NKeep
	}
	if len(prompt) == 0 {
		// Only a vocabulary that adds no BOS leaves an empty text so.
		return r, badRequest("the prompt is empty")
	}
	switch {
	case p.N != nil && *p.N > 1:
		return r, badRequest("n is %d: the server generates one choice per request (send %[1]d requests)", *p.N)
	case p.N != nil && *p.N < 1:
		return r, badRequest("n is %d: it must be 1", *p.N)
	}
	if len(p.LogitBias) > 0 {
		return r, badRequest("logit_bias is not supported")
	}
	if p.MaxTokens != nil {
		switch n := *p.MaxTokens; {
		case n == -1:
			r.MaxTokens = 0
		case n < 1 || n > maxMaxTokens:
			return r, badRequest("max_tokens is %d: it must be -1 (until the end of generation or a full context) or 1 to %d", n, maxMaxTokens)
		default:
			r.MaxTokens = n
		}
	}
	s := &r.Sampling
	if p.Temperature != nil {
		if *p.Temperature < 0 {
			return r, badRequest("temperature is %g: it must be 0 (greedy) or more", *p.Temperature)
		}
		s.Temp = *p.Temperature
	}
	if p.TopP != nil {
		if *p.TopP < 0 || *p.TopP > 1 {
			return r, badRequest("top_p is %g: it must be 0 to 1", *p.TopP)
		}
		s.TopP = *p.TopP
	}
	if p.MinP != nil {
		if *p.MinP < 0 || *p.MinP > 1 {
			return r, badRequest("min_p is %g: it must be 0 to 1", *p.MinP)
		}
		s.MinP = *p.MinP
	}
	if p.TopK != nil {
		s.TopK = *p.TopK
	}
	if p.Seed != nil {
		switch n := *p.Seed; {
		case n == -1:
			s.Seed = sample.DefaultSeed
		case n < 0 || n > math.MaxUint32:
			return r, badRequest("seed is %d: it must be -1 (random) or 0 to %d", n, uint32(math.MaxUint32))
		default:
			s.Seed = uint32(n)
		}
	}
	if p.PresencePenalty != nil {
		s.PresencePenalty = *p.PresencePenalty
	}
	if p.FrequencyPenalty != nil {
		s.FrequencyPenalty = *p.FrequencyPenalty
	}
	if p.RepeatPenalty != nil {
		s.RepeatPenalty = *p.RepeatPenalty
	}
	return r, nil
}

func (p *params) includeUsage() bool { return p.StreamOptions != nil && p.StreamOptions.IncludeUsage }

// completionRequest is /v1/completions' body.
type completionRequest struct {
	params
	Prompt *prompt `json:"prompt"`

	// Accepted at their defaults only.
	Echo     bool   `json:"echo"`
	BestOf   *int   `json:"best_of"`
	Logprobs *int   `json:"logprobs"`
	Suffix   string `json:"suffix"`
}

func (q *completionRequest) check() *apiError {
	switch {
	case q.Prompt == nil:
		return badRequest("prompt is missing")
	case q.Echo:
		return badRequest("echo is not supported")
	case q.BestOf != nil && *q.BestOf != 1:
		return badRequest("best_of is %d: the server generates one choice per request", *q.BestOf)
	case q.Logprobs != nil && *q.Logprobs != 0:
		return badRequest("logprobs are not supported")
	case q.Suffix != "":
		return badRequest("suffix is not supported")
	}
	return nil
}

// chatRequest is /v1/chat/completions' body.
type chatRequest struct {
	params
	Messages []chatMessage `json:"messages"`
	// MaxCompletionTokens is OpenAI's newer name for max_tokens.
	MaxCompletionTokens *int `json:"max_completion_tokens"`

	// Accepted at their defaults only.
	Logprobs       bool            `json:"logprobs"`
	TopLogprobs    *int            `json:"top_logprobs"`
	ResponseFormat *responseFormat `json:"response_format"`
}

type chatMessage struct {
	Role    string  `json:"role"`
	Content content `json:"content"`
	Name    string  `json:"name"` // ignored, as chat templates have no place for it
}

type responseFormat struct {
	Type string `json:"type"`
}

// check checks q and returns its messages.
func (q *chatRequest) check() ([]Message, *apiError) {
	switch {
	case len(q.Messages) == 0:
		return nil, badRequest("messages is missing or empty")
	case q.Logprobs:
		return nil, badRequest("logprobs are not supported")
	case q.TopLogprobs != nil && *q.TopLogprobs != 0:
		return nil, badRequest("top_logprobs is not supported")
	case q.ResponseFormat != nil && q.ResponseFormat.Type != "text":
		return nil, badRequest("response_format %q is not supported, only \"text\"", q.ResponseFormat.Type)
	}
	if q.MaxCompletionTokens != nil {
		q.MaxTokens = q.MaxCompletionTokens
	}
	msgs := make([]Message, len(q.Messages))
	for i, m := range q.Messages {
		if m.Role == "" {
			return nil, badRequest("messages[%d] has no role", i)
		}
		msgs[i] = Message{Role: m.Role, Content: string(m.Content)}
	}
	return msgs, nil
}

// strict decodes b into v as decode does the body: the json package's
// strictness does not reach into UnmarshalJSON methods.
func strict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// prompt is a completion's prompt: a string, or an array of one.
type prompt string

func (p *prompt) UnmarshalJSON(b []byte) error {
	var s string
	if strict(b, &s) == nil {
		*p = prompt(s)
		return nil
	}
	var a []string
	if strict(b, &a) != nil {
		return errors.New("prompt must be a string or an array of one string")
	}
	if len(a) != 1 {
		return errors.New("prompt must be a string or an array of one string: the server takes one prompt per request")
	}
	*p = prompt(a[0])
	return nil
}

// stops are the stop field: a string, an array of them, or null.
type stops []string

func (s *stops) UnmarshalJSON(b []byte) error {
	var one string
	var list []string
	switch {
	case string(b) == "null":
		// A string would take null as "".
	case strict(b, &one) == nil:
		list = []string{one}
	case strict(b, &list) != nil:
		return errors.New("stop must be a string or an array of strings")
	}
	for _, x := range list {
		if x == "" {
			return errors.New("stop has an empty string, which would stop generation before it starts")
		}
	}
	*s = list
	return nil
}

// content is a message's content: a string, null, or an array of text
// parts, which it joins with newlines as llama.cpp's chat does.
type content string

func (c *content) UnmarshalJSON(b []byte) error {
	var s *string
	if strict(b, &s) == nil {
		if s != nil {
			*c = content(*s)
		}
		return nil
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if err := strict(b, &parts); err != nil {
		return errors.New(`a message's content must be a string or an array of {"type": "text", "text": ...} parts`)
	}
	texts := make([]string, len(parts))
	for i, p := range parts {
		if p.Type != "text" || p.Text == nil {
			return errors.New(`a message's content has a part that is not {"type": "text", "text": ...}: only text is supported`)
		}
		texts[i] = *p.Text
	}
	*c = content(strings.Join(texts, "\n"))
	return nil
}
