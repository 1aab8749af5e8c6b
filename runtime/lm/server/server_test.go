package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/graphc/graphc/runtime/lm"
	"github.com/graphc/graphc/runtime/lm/sample"
)

// defaults are llama.cpp's sampling defaults, as graphc serve's.
var defaults = sample.Params{Temp: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, TypicalP: 1, RepeatLastN: 64, RepeatPenalty: 1, Seed: sample.DefaultSeed}

func testConfig(e *fakeEngine) Config {
	return Config{Model: "fake.gguf", Engine: e, Tokenizer: fakeTokenizer{}, Chat: fakeChat, Sampling: defaults}
}

// fakeChat renders the BOS token's text and "role: content" lines, then
// the assistant's turn. It fails on a message of role "bad", as a
// template does on roles out of order.
func fakeChat(msgs []Message) (string, error) {
	var b strings.Builder
	b.WriteString("<s>")
	for _, m := range msgs {
		if m.Role == "bad" {
			return "", errors.New("roles must alternate")
		}
		fmt.Fprintf(&b, "%s: %s\n", m.Role, m.Content)
	}
	b.WriteString("assistant:")
	return b.String(), nil
}

func start(t *testing.T, c Config) string {
	t.Helper()
	ts := httptest.NewServer(New(c))
	t.Cleanup(ts.Close)
	return ts.URL
}

func post(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// object decodes b, checking and removing the fields that vary: an id
// with prefix and a creation time.
func object(t *testing.T, b []byte, idPrefix string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if id, _ := m["id"].(string); !strings.HasPrefix(id, idPrefix) || len(id) == len(idPrefix) {
		t.Errorf("id %q, want %s…", m["id"], idPrefix)
	}
	if c, _ := m["created"].(float64); c < float64(time.Now().Add(-time.Hour).Unix()) {
		t.Errorf("created %v", m["created"])
	}
	delete(m, "id")
	delete(m, "created")
	return m
}

func parse(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return m
}

// sseData splits a server-sent event stream into its data.
func sseData(t *testing.T, resp *http.Response, b []byte) []string {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q: %s", ct, b)
	}
	s, ok := strings.CutSuffix(string(b), "\n\n")
	if !ok {
		t.Fatalf("the stream does not end with an event: %q", b)
	}
	var data []string
	for ev := range strings.SplitSeq(s, "\n\n") {
		d, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.Contains(d, "\n") {
			t.Fatalf("event %q is not one line of data", ev)
		}
		data = append(data, d)
	}
	return data
}

const helloTimings = `"timings": {"prompt_n": 13, "prompt_ms": 10, "prompt_per_second": 1300, "predicted_n": 12, "predicted_ms": 20, "predicted_per_second": 600}`

func TestHealth(t *testing.T) {
	url := start(t, testConfig(newFake()))
	resp, err := http.Get(url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || strings.TrimSpace(string(b)) != `{"status":"ok"}` {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
}

func TestModels(t *testing.T) {
	url := start(t, testConfig(newFake()))
	resp, err := http.Get(url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	data, _ := got["data"].([]any)
	if len(data) != 1 {
		t.Fatalf("%v", got)
	}
	if c, _ := data[0].(map[string]any)["created"].(float64); c < float64(time.Now().Add(-time.Hour).Unix()) {
		t.Errorf("created %v", c)
	}
	delete(data[0].(map[string]any), "created")
	want := parse(t, `{"object": "list", "data": [{"id": "fake.gguf", "object": "model", "owned_by": "graphc", "meta": {"n_ctx": 4096, "n_vocab": 1114114}}]}`)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("-want +got:\n%s", d)
	}
}

func TestCompletion(t *testing.T) {
	e := newFake()
	url := start(t, testConfig(e))
	resp, b := post(t, url+"/v1/completions", `{"model": "any", "prompt": "Hello, world"}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	want := parse(t, `{"object": "text_completion", "model": "fake.gguf",
		"choices": [{"index": 0, "text": "Hello, world", "logprobs": null, "finish_reason": "stop"}],
		"usage": {"prompt_tokens": 13, "completion_tokens": 12, "total_tokens": 25}, `+helloTimings+`}`)
	if d := cmp.Diff(want, object(t, b, "cmpl-")); d != "" {
		t.Errorf("-want +got:\n%s", d)
	}
	// The prompt's tokens: BOS added, as llama.cpp does.
	if p := e.lastRequest().Prompt; len(p) != 13 || p[0] != fakeBOS || p[1] != 'H' {
		t.Errorf("prompt tokens %v", p)
	}
}

func TestCompletionLength(t *testing.T) {
	url := start(t, testConfig(newFake()))
	_, b := post(t, url+"/v1/completions", `{"prompt": ["Hello, world"], "max_tokens": 5}`)
	m := object(t, b, "cmpl-")
	want := []any{map[string]any{"index": 0.0, "text": "Hello", "logprobs": nil, "finish_reason": "length"}}
	if d := cmp.Diff(want, m["choices"]); d != "" {
		t.Errorf("-want +got:\n%s", d)
	}
}

func TestCompletionStream(t *testing.T) {
	for _, usage := range []bool{false, true} {
		t.Run(fmt.Sprintf("include_usage=%v", usage), func(t *testing.T) {
			url := start(t, testConfig(newFake()))
			resp, b := post(t, url+"/v1/completions", fmt.Sprintf(`{"prompt": "Hi!", "stream": true, "stream_options": {"include_usage": %v}}`, usage))
			data := sseData(t, resp, b)
			var want []string
			for _, c := range []string{"H", "i", "!"} {
				want = append(want, fmt.Sprintf(`{"object": "text_completion", "model": "fake.gguf", "choices": [{"index": 0, "text": %q, "logprobs": null, "finish_reason": null}]}`, c))
			}
			want = append(want, `{"object": "text_completion", "model": "fake.gguf", "choices": [{"index": 0, "text": "", "logprobs": null, "finish_reason": "stop"}],
				"timings": {"prompt_n": 4, "prompt_ms": 10, "prompt_per_second": 400, "predicted_n": 3, "predicted_ms": 20, "predicted_per_second": 150}}`)
			if usage {
				want = append(want, `{"object": "text_completion", "model": "fake.gguf", "choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": 3, "total_tokens": 7}}`)
			}
			if len(data) != len(want)+1 || data[len(data)-1] != "[DONE]" {
				t.Fatalf("events %q, want %d and [DONE]", data, len(want))
			}
			ids := map[any]bool{}
			for i, w := range want {
				got := parse(t, data[i])
				ids[got["id"]] = true
				if d := cmp.Diff(parse(t, w), object(t, []byte(data[i]), "cmpl-")); d != "" {
					t.Errorf("event %d: -want +got:\n%s", i, d)
				}
			}
			if len(ids) != 1 {
				t.Errorf("the chunks have ids %v, want one", ids)
			}
		})
	}
}

func TestChatCompletion(t *testing.T) {
	e := newFake()
	url := start(t, testConfig(e))
	resp, b := post(t, url+"/v1/chat/completions", `{"model": "x", "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	text := "system: Be brief.\nuser: Hi\nassistant:"
	n := len(text)
	want := parse(t, fmt.Sprintf(`{"object": "chat.completion", "model": "fake.gguf",
		"choices": [{"index": 0, "message": {"role": "assistant", "content": %q}, "logprobs": null, "finish_reason": "stop"}],
		"usage": {"prompt_tokens": %d, "completion_tokens": %d, "total_tokens": %d},
		"timings": {"prompt_n": %[2]d, "prompt_ms": 10, "prompt_per_second": %[5]d, "predicted_n": %[3]d, "predicted_ms": 20, "predicted_per_second": %[6]d}}`,
		text, n+1, n, 2*n+1, (n+1)*100, n*50))
	if d := cmp.Diff(want, object(t, b, "chatcmpl-")); d != "" {
		t.Errorf("-want +got:\n%s", d)
	}
	// The template's <s> and the BOS the tokenizer adds make one BOS.
	if p := e.lastRequest().Prompt; len(p) != n+1 || p[0] != fakeBOS || p[1] != 's' {
		t.Errorf("prompt tokens %v", p)
	}
}

func TestChatCompletionStream(t *testing.T) {
	url := start(t, testConfig(newFake()))
	resp, b := post(t, url+"/v1/chat/completions", `{"messages": [{"role": "user", "content": "Hi"}], "stream": true, "max_tokens": 3}`)
	data := sseData(t, resp, b)
	want := []string{`{"role": "assistant", "content": ""}`, `{"content": "u"}`, `{"content": "s"}`, `{"content": "e"}`}
	if len(data) != len(want)+2 || data[len(data)-1] != "[DONE]" {
		t.Fatalf("events %q", data)
	}
	for i, w := range want {
		got := object(t, []byte(data[i]), "chatcmpl-")
		w := parse(t, `{"object": "chat.completion.chunk", "model": "fake.gguf", "choices": [{"index": 0, "delta": `+w+`, "logprobs": null, "finish_reason": null}]}`)
		if d := cmp.Diff(w, got); d != "" {
			t.Errorf("event %d: -want +got:\n%s", i, d)
		}
	}
	last := object(t, []byte(data[len(want)]), "chatcmpl-")
	w := parse(t, `{"object": "chat.completion.chunk", "model": "fake.gguf", "choices": [{"index": 0, "delta": {}, "logprobs": null, "finish_reason": "length"}],
		"timings": {"prompt_n": 20, "prompt_ms": 10, "prompt_per_second": 2000, "predicted_n": 3, "predicted_ms": 20, "predicted_per_second": 150}}`)
	if d := cmp.Diff(w, last); d != "" {
		t.Errorf("last event: -want +got:\n%s", d)
	}
}

func TestChatMessages(t *testing.T) {
	for _, tc := range []struct{ name, messages, text string }{
		{"parts", `[{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]`, "user: a\nb\nassistant:"},
		{"null content", `[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": null}]`, "user: Hi\nassistant: \nassistant:"},
		{"name", `[{"role": "user", "content": "Hi", "name": "bob"}]`, "user: Hi\nassistant:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := start(t, testConfig(newFake()))
			resp, b := post(t, url+"/v1/chat/completions", `{"messages": `+tc.messages+`}`)
			if resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			var got struct {
				Choices []struct{ Message struct{ Content string } }
			}
			if err := json.Unmarshal(b, &got); err != nil || len(got.Choices) != 1 || got.Choices[0].Message.Content != tc.text {
				t.Errorf("%s (%v), want content %q", b, err, tc.text)
			}
		})
	}
}

// TestPromptTokens checks how prompts become tokens: control tokens'
// text parsed in both endpoints, as llama-server does, and only a chat's
// doubled BOS merged.
func TestPromptTokens(t *testing.T) {
	for _, tc := range []struct {
		name, path, body string
		chat             func([]Message) (string, error)
		want             []int32
	}{
		{"completion", "/v1/completions", `{"prompt": "<s>a"}`, nil, []int32{fakeBOS, fakeBOS, 'a'}},
		{"chat", "/v1/chat/completions", `{"messages": [{"role": "user", "content": "a"}]}`,
			func([]Message) (string, error) { return "<s><s>a", nil }, []int32{fakeBOS, fakeBOS, 'a'}},
		{"chat without <s>", "/v1/chat/completions", `{"messages": [{"role": "user", "content": "a"}]}`,
			func([]Message) (string, error) { return "a<s>", nil }, []int32{fakeBOS, 'a', fakeBOS}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newFake()
			c := testConfig(e)
			c.Chat = tc.chat
			resp, b := post(t, start(t, c)+tc.path, tc.body)
			if resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			if d := cmp.Diff(tc.want, e.lastRequest().Prompt); d != "" {
				t.Errorf("-want +got:\n%s", d)
			}
		})
	}
}

func TestSampling(t *testing.T) {
	req := func(f func(r *lm.Request)) lm.Request {
		r := lm.Request{Sampling: defaults}
		f(&r)
		return r
	}
	for _, tc := range []struct {
		name, path, fields string
		maxTokens          int // the server's default
		want               lm.Request
	}{
		{"defaults", "/v1/completions", ``, 0, req(func(*lm.Request) {})},
		{"server max_tokens", "/v1/completions", ``, 64, req(func(r *lm.Request) { r.MaxTokens = 64 })},
		{"max_tokens -1", "/v1/completions", `, "max_tokens": -1`, 64, req(func(r *lm.Request) { r.MaxTokens = 0 })},
		{"max_tokens", "/v1/completions", `, "max_tokens": 7`, 64, req(func(r *lm.Request) { r.MaxTokens = 7 })},
		{"nulls", "/v1/completions", `, "max_tokens": null, "temperature": null, "stop": null, "seed": null`, 64, req(func(r *lm.Request) { r.MaxTokens = 64 })},
		{"greedy", "/v1/completions", `, "temperature": 0`, 0, req(func(r *lm.Request) { r.Sampling.Temp = 0 })},
		{"all", "/v1/completions", `, "temperature": 0.5, "top_p": 0.75, "top_k": 5, "min_p": 0.125, "seed": 42,
			"presence_penalty": 0.5, "frequency_penalty": -0.25, "repeat_penalty": 1.5`, 0, req(func(r *lm.Request) {
			r.Sampling = sample.Params{Temp: 0.5, TopK: 5, TopP: 0.75, MinP: 0.125, TypicalP: 1, RepeatLastN: 64,
				RepeatPenalty: 1.5, FrequencyPenalty: -0.25, PresencePenalty: 0.5, Seed: 42}
		})},
		{"seed -1", "/v1/completions", `, "seed": -1`, 0, req(func(*lm.Request) {})},
		{"seed 0", "/v1/completions", `, "seed": 0`, 0, req(func(r *lm.Request) { r.Sampling.Seed = 0 })},
		{"stop string", "/v1/completions", `, "stop": "\n"`, 0, req(func(r *lm.Request) { r.Stop = []string{"\n"} })},
		{"stop array", "/v1/completions", `, "stop": ["a", "bc"]`, 0, req(func(r *lm.Request) { r.Stop = []string{"a", "bc"} })},
		{"chat", "/v1/chat/completions", `, "max_tokens": 9, "temperature": 0, "stop": ["x"]`, 0, req(func(r *lm.Request) {
			r.MaxTokens, r.Sampling.Temp, r.Stop = 9, 0, []string{"x"}
		})},
		{"max_completion_tokens", "/v1/chat/completions", `, "max_tokens": 9, "max_completion_tokens": 5`, 0, req(func(r *lm.Request) { r.MaxTokens = 5 })},
		{"n_keep", "/v1/completions", `, "n_keep": -1`, 0, req(func(r *lm.Request) { r.Keep, r.ContextShift = -1, true })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newFake()
			c := testConfig(e)
			c.MaxTokens = tc.maxTokens
			c.ContextShift = tc.name == "n_keep"
			body := `{"prompt": "Hi"` + tc.fields + `}`
			if tc.path == "/v1/chat/completions" {
				body = `{"messages": [{"role": "user", "content": "Hi"}]` + tc.fields + `}`
			}
			resp, b := post(t, start(t, c)+tc.path, body)
			if resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			got := e.lastRequest()
			got.Prompt = nil
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("-want +got:\n%s", d)
			}
		})
	}
}

// TestIgnoredFields sends the fields OpenAI's clients send that the
// server accepts at the values that ask for nothing it does not do.
func TestIgnoredFields(t *testing.T) {
	for _, tc := range []struct{ path, body string }{
		{"/v1/completions", `{"prompt": "Hi", "model": "gpt-4", "user": "u", "n": 1, "logprobs": null, "echo": false,
			"best_of": 1, "suffix": "", "logit_bias": {}, "stream": false, "stream_options": {"include_usage": true}}`},
		{"/v1/completions", `{"prompt": "Hi", "n": null, "logprobs": 0, "suffix": null, "logit_bias": null}`},
		{"/v1/chat/completions", `{"messages": [{"role": "user", "content": "Hi"}], "model": "gpt-4", "user": "u", "n": 1,
			"logprobs": false, "top_logprobs": 0, "response_format": {"type": "text"}, "logit_bias": {}}`},
		{"/v1/chat/completions", `{"messages": [{"role": "user", "content": "Hi"}], "logprobs": null, "top_logprobs": null, "response_format": null}`},
	} {
		resp, b := post(t, start(t, testConfig(newFake()))+tc.path, tc.body)
		if resp.StatusCode != 200 {
			t.Errorf("%s %s: %d %s", tc.path, tc.body, resp.StatusCode, b)
		}
	}
}

func TestBadRequests(t *testing.T) {
	const (
		cmpl  = "/v1/completions"
		chat  = "/v1/chat/completions"
		tok   = "/tokenize"
		detok = "/detokenize"
	)
	user := `"messages": [{"role": "user", "content": "Hi"}]`
	for _, tc := range []struct{ path, body, message string }{
		{cmpl, ``, "the request body is empty"},
		{cmpl, `{"prompt": "a"`, "the request body ends inside its JSON"},
		{cmpl, `{"prompt": "a",}`, "malformed JSON at byte 16"},
		{cmpl, `["a"]`, "the request body must be a JSON object, not array"},
		{cmpl, `{"prompt": "a"} {}`, "the request body has more after its JSON object"},
		{cmpl, `{"prompt": "a", "foo": 1}`, `unknown field "foo"`},
		{cmpl, `{"prompt": "a", "stream_options": {"include_usage": true, "x": 1}}`, `unknown field "x"`},
		{cmpl, `{"prompt": "a", "max_tokens": "5"}`, "max_tokens must be a 64-bit integer, not string"},
		{cmpl, `{"prompt": "a", "max_tokens": 1.5}`, "max_tokens must be a 64-bit integer, not number 1.5"},
		{cmpl, `{"prompt": "a", "max_tokens": 1e30}`, "max_tokens must be a 64-bit integer"},
		{cmpl, `{"prompt": "a", "stream": "yes"}`, "stream must be a boolean, not string"},
		{cmpl, `{"prompt": "a", "temperature": 1e39}`, "temperature must be a 32-bit floating-point number, not number 1e39"},
		{cmpl, `{"prompt": "a", "stream_options": {"include_usage": 1}}`, "stream_options.include_usage must be a boolean"},
		{cmpl, "{\"prompt\": \"\xff\"}", "the request body is not valid UTF-8"},
		{cmpl, `{"prompt": "a", "n": 2}`, "n is 2: the server generates one choice per request"},
		{cmpl, `{"prompt": "a", "n": 0}`, "n is 0: it must be 1"},
		{cmpl, `{"prompt": "a", "max_tokens": 0}`, "max_tokens is 0: it must be -1"},
		{cmpl, `{"prompt": "a", "max_tokens": -2}`, "max_tokens is -2"},
		{cmpl, `{"prompt": "a", "max_tokens": 2147483648}`, "max_tokens is 2147483648"},
		{cmpl, `{"prompt": "a", "n_keep": -2}`, "n_keep is -2"},
		{cmpl, `{"prompt": "a", "temperature": -1}`, "temperature is -1"},
		{cmpl, `{"prompt": "a", "top_p": 1.5}`, "top_p is 1.5"},
		{cmpl, `{"prompt": "a", "min_p": -0.5}`, "min_p is -0.5"},
		{cmpl, `{"prompt": "a", "seed": -2}`, "seed is -2"},
		{cmpl, `{"prompt": "a", "seed": 4294967296}`, "seed is 4294967296"},
		{cmpl, `{"prompt": "a", "stop": ""}`, "stop has an empty string"},
		{cmpl, `{"prompt": "a", "stop": ["x", ""]}`, "stop has an empty string"},
		{cmpl, `{"prompt": "a", "stop": 5}`, "stop must be a string or an array of strings"},
		{cmpl, `{"prompt": "a", "stop": [1]}`, "stop must be a string or an array of strings"},
		{cmpl, `{"prompt": "a", "logit_bias": {"1": 5}}`, "logit_bias is not supported"},
		{cmpl, `{}`, "prompt is missing"},
		{cmpl, `{"prompt": null}`, "prompt is missing"},
		{cmpl, `{"prompt": 5}`, "prompt must be a string or an array of one string"},
		{cmpl, `{"prompt": [1, 2]}`, "prompt must be a string or an array of one string"},
		{cmpl, `{"prompt": ["a", "b"]}`, "prompt must be a string or an array of one string: the server takes one prompt per request"},
		{cmpl, `{"prompt": []}`, "prompt must be a string or an array of one string: the server takes one prompt per request"},
		{cmpl, `{"prompt": "a", "echo": true}`, "echo is not supported"},
		{cmpl, `{"prompt": "a", "best_of": 2}`, "best_of is 2"},
		{cmpl, `{"prompt": "a", "logprobs": 1}`, "logprobs are not supported"},
		{cmpl, `{"prompt": "a", "suffix": "b"}`, "suffix is not supported"},
		{chat, `{}`, "messages is missing or empty"},
		{chat, `{"messages": []}`, "messages is missing or empty"},
		{chat, `{"messages": {}}`, "messages must be an array"},
		{chat, `{"messages": [{"content": "Hi"}]}`, "messages[0] has no role"},
		{chat, `{"messages": [{"role": "user", "content": 5}]}`, "a message's content must be a string or an array"},
		{chat, `{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}`, "a message's content must be a string or an array"},
		{chat, `{"messages": [{"role": "user", "content": [{"type": "image"}]}]}`, "a message's content has a part that is not"},
		{chat, `{"messages": [{"role": "user", "content": [{"type": "text"}]}]}`, "a message's content has a part that is not"},
		{chat, `{"messages": [{"role": "assistant", "content": null, "tool_calls": []}]}`, `unknown field "tool_calls"`},
		{chat, `{"messages": [{"role": "bad", "content": "Hi"}]}`, "chat template: roles must alternate"},
		{chat, `{` + user + `, "prompt": "a"}`, `unknown field "prompt"`},
		{chat, `{` + user + `, "tools": []}`, `unknown field "tools"`},
		{chat, `{` + user + `, "logprobs": true}`, "logprobs are not supported"},
		{chat, `{` + user + `, "top_logprobs": 2}`, "top_logprobs is not supported"},
		{chat, `{` + user + `, "response_format": {"type": "json_object"}}`, `response_format "json_object" is not supported`},
		{chat, `{` + user + `, "max_completion_tokens": 0}`, "max_tokens is 0"},
		{chat, `{` + user + `, "n": 3}`, "n is 3"},
		{tok, `{"content": 5}`, "content must be a string, not number"},
		{tok, `{"content": "a", "tokens": [1]}`, `unknown field "tokens"`},
		{detok, `{"tokens": [-1]}`, "tokens[0] is -1, not a token of the vocabulary (0 to 1114113)"},
		{detok, `{"tokens": [65, 1114114]}`, "tokens[1] is 1114114"},
		{detok, `{"tokens": ["a"]}`, "tokens must be a 32-bit integer, not string"},
		{detok, `{"tokens": [4294967296]}`, "tokens must be a 32-bit integer, not number 4294967296"},
	} {
		t.Run(tc.path+" "+tc.body, func(t *testing.T) {
			resp, b := post(t, start(t, testConfig(newFake()))+tc.path, tc.body)
			var got struct{ Error apiError }
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("%v: %s", err, b)
			}
			if resp.StatusCode != 400 || got.Error.Code != 400 || got.Error.Type != "invalid_request_error" || !strings.HasPrefix(got.Error.Message, tc.message) {
				t.Errorf("%d %s, want 400 invalid_request_error beginning %q", resp.StatusCode, b, tc.message)
			}
		})
	}
}

func TestErrorResponse(t *testing.T) {
	resp, b := post(t, start(t, testConfig(newFake()))+"/v1/completions", `{"prompt": "a", "n": 2}`)
	want := `{"error":{"code":400,"message":"n is 2: the server generates one choice per request (send 2 requests)","type":"invalid_request_error"}}` + "\n"
	if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/json" || string(b) != want {
		t.Errorf("%d %s %s, want\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), b, want)
	}
}

func TestEmptyPrompt(t *testing.T) {
	c := testConfig(newFake())
	c.Tokenizer = noBOS{}
	resp, b := post(t, start(t, c)+"/v1/completions", `{"prompt": ""}`)
	if resp.StatusCode != 400 || !strings.Contains(string(b), "the prompt is empty") {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
}

// noBOS is a vocabulary that adds no BOS.
type noBOS struct{ fakeTokenizer }

func (noBOS) BOS() int32 { return -1 }

func (t noBOS) Encode(text string, addSpecial, parseSpecial bool) []int32 {
	return t.fakeTokenizer.Encode(text, false, parseSpecial)
}

func TestContextError(t *testing.T) {
	for _, path := range []string{"/v1/completions", "/v1/chat/completions"} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s stream=%v", path, stream), func(t *testing.T) {
				e := newFake()
				e.nctx = 8
				body := fmt.Sprintf(`{"prompt": "Hello, world", "stream": %v}`, stream)
				if path == "/v1/chat/completions" {
					body = fmt.Sprintf(`{"messages": [{"role": "user", "content": "Hello"}], "stream": %v}`, stream)
				}
				resp, b := post(t, start(t, testConfig(e))+path, body)
				var got struct{ Error apiError }
				json.Unmarshal(b, &got)
				want := apiError{Code: 400, Type: "exceed_context_size_error", NPromptTokens: got.Error.NPromptTokens, NCtx: 8,
					Message: (&lm.ContextError{Tokens: got.Error.NPromptTokens, NCtx: 8}).Error()}
				if resp.StatusCode != 400 || got.Error != want || got.Error.NPromptTokens < 9 {
					t.Errorf("%d %s", resp.StatusCode, b)
				}
			})
		}
	}
}

func TestBusy(t *testing.T) {
	e := newFake()
	e.err = lm.ErrBusy
	for _, stream := range []bool{false, true} {
		resp, b := post(t, start(t, testConfig(e))+"/v1/completions", fmt.Sprintf(`{"prompt": "a", "stream": %v}`, stream))
		want := `{"error":{"code":503,"message":"` + lm.ErrBusy.Error() + `","type":"unavailable_error"}}` + "\n"
		if resp.StatusCode != 503 || string(b) != want {
			t.Errorf("stream %v: %d %s, want %s", stream, resp.StatusCode, b, want)
		}
	}
}

func TestEngineFails(t *testing.T) {
	e := newFake()
	e.failAfter = 2
	url := start(t, testConfig(e))
	resp, b := post(t, url+"/v1/completions", `{"prompt": "Hello"}`)
	if want := `{"error":{"code":500,"message":"the fake engine failed","type":"server_error"}}` + "\n"; resp.StatusCode != 500 || string(b) != want {
		t.Errorf("%d %s, want %s", resp.StatusCode, b, want)
	}
	// Streamed, the error is the last event, and there is no [DONE].
	resp, b = post(t, url+"/v1/chat/completions", `{"messages": [{"role": "user", "content": "Hi"}], "stream": true}`)
	data := sseData(t, resp, b)
	if len(data) != 4 || data[3] != `{"error":{"code":500,"message":"the fake engine failed","type":"server_error"}}` {
		t.Errorf("events %q", data)
	}
}

func TestNoChatTemplate(t *testing.T) {
	c := testConfig(newFake())
	c.Chat = nil
	resp, b := post(t, start(t, c)+"/v1/chat/completions", `{"messages": [{"role": "user", "content": "Hi"}]}`)
	if resp.StatusCode != 501 || !strings.Contains(string(b), `"type":"not_supported_error"`) {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
}

func TestRoutes(t *testing.T) {
	url := start(t, testConfig(newFake()))
	for _, tc := range []struct {
		method, path string
		status       int
		allow, typ   string
	}{
		{"GET", "/nothing", 404, "", "not_found_error"},
		{"POST", "/v1/completions/", 404, "", "not_found_error"},
		{"GET", "/v1/completions", 405, "POST", "invalid_request_error"},
		{"POST", "/health", 405, "GET", "invalid_request_error"},
		{"DELETE", "/v1/models", 405, "GET", "invalid_request_error"},
		{"GET", "/detokenize", 405, "POST", "invalid_request_error"},
	} {
		req, _ := http.NewRequest(tc.method, url+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var got struct{ Error apiError }
		json.Unmarshal(b, &got)
		if resp.StatusCode != tc.status || got.Error.Code != tc.status || got.Error.Type != tc.typ || resp.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d Allow %q %s", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Allow"), b)
		}
	}
}

func TestBodyTooLarge(t *testing.T) {
	body := `{"prompt": "` + strings.Repeat("a", maxBody) + `"}`
	resp, b := post(t, start(t, testConfig(newFake()))+"/v1/completions", body)
	if resp.StatusCode != 413 || !strings.Contains(string(b), "the request body is over 8 MiB") {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
}

func TestTokenize(t *testing.T) {
	url := start(t, testConfig(newFake()))
	for _, tc := range []struct{ body, want string }{
		{`{"content": "a<s>é"}`, `{"tokens":[97,1114112,233]}`},
		{`{"content": "a<s>", "add_special": true}`, `{"tokens":[1114112,97,1114112]}`},
		{`{"content": "a<s>", "parse_special": false}`, `{"tokens":[97,60,115,62]}`},
		{`{"content": "<s>é", "with_pieces": true}`, `{"tokens":[{"id":1114112,"piece":"<s>"},{"id":233,"piece":"é"}]}`},
		{`{}`, `{"tokens":[]}`},
	} {
		resp, b := post(t, url+"/tokenize", tc.body)
		if resp.StatusCode != 200 || strings.TrimSpace(string(b)) != tc.want {
			t.Errorf("%s: %d %s, want %s", tc.body, resp.StatusCode, b, tc.want)
		}
	}
}

func TestDetokenize(t *testing.T) {
	url := start(t, testConfig(newFake()))
	for _, tc := range []struct{ body, want string }{
		{`{"tokens": [1114112, 104, 105, 233]}`, `{"content":"hié"}`},
		{`{"tokens": [60, 62, 38]}`, `{"content":"<>&"}`},
		{`{"tokens": []}`, `{"content":""}`},
		{`{}`, `{"content":""}`},
	} {
		resp, b := post(t, url+"/detokenize", tc.body)
		if resp.StatusCode != 200 || strings.TrimSpace(string(b)) != tc.want {
			t.Errorf("%s: %d %s, want %s", tc.body, resp.StatusCode, b, tc.want)
		}
	}
}

func TestPieceJSON(t *testing.T) {
	for _, tc := range []struct {
		piece string
		want  any
	}{
		{"", ""},
		{" hé", " hé"},
		{"\xc3", []int{0xc3}},
		{"a\xe2\x82", []int{'a', 0xe2, 0x82}},
	} {
		if got := pieceJSON(tc.piece); !cmp.Equal(got, tc.want) {
			t.Errorf("pieceJSON(%q) = %v, want %v", tc.piece, got, tc.want)
		}
	}
}

// TestDisconnect leaves in the middle of a stream: the engine must see
// its sequence canceled, and the server go on serving.
func TestDisconnect(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			e := newFake()
			e.delay = 10 * time.Millisecond
			url := start(t, testConfig(e))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			body := fmt.Sprintf(`{"prompt": %q, "stream": %v}`, strings.Repeat("a", 1000), stream)
			req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/completions", strings.NewReader(body))
			if !stream {
				// The response would come only at the end: leave before.
				time.AfterFunc(50*time.Millisecond, cancel)
			}
			resp, err := http.DefaultClient.Do(req)
			if !stream {
				if err == nil {
					resp.Body.Close()
					t.Fatal("a response before the end of generation")
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				line, err := bufio.NewReader(resp.Body).ReadString('\n')
				if err != nil || !strings.HasPrefix(line, "data: {") {
					t.Fatalf("%q %v", line, err)
				}
				cancel()
				resp.Body.Close()
			}
			select {
			case <-e.canceled:
			case <-time.After(10 * time.Second):
				t.Fatal("the engine did not see its sequence canceled")
			}
			e.delay = 0
			if resp, b := post(t, url+"/v1/completions", `{"prompt": "ok"}`); resp.StatusCode != 200 {
				t.Errorf("after the disconnect: %d %s", resp.StatusCode, b)
			}
		})
	}
}

// logLines is a Config.Log that hands on Serve's address.
type logLines struct {
	mu    sync.Mutex
	lines []string
	addr  chan string
}

func (l *logLines) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := string(b)
	if u, ok := strings.CutPrefix(s, "listening on "); ok {
		l.addr <- strings.TrimSpace(u)
	}
	l.lines = append(l.lines, s)
	return len(b), nil
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "")
}

// serve runs Serve on a port of its own and returns its URL and what
// stops it, returning Serve's error.
func serve(t *testing.T, c Config) (url string, stop func() error, log *logLines) {
	t.Helper()
	log = &logLines{addr: make(chan string, 1)}
	c.Log = log
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, "127.0.0.1:0", c) }()
	select {
	case url = <-log.addr:
	case err := <-served:
		t.Fatalf("Serve: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not say it was listening")
	}
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-served:
			case <-time.After(20 * time.Second):
				t.Fatal("Serve did not return")
			}
		})
		return err
	}
	t.Cleanup(func() { stop() })
	return url, stop, log
}

// settled waits for the goroutines to be back to n at most.
func settled(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestConcurrentClients has 20 clients make 10 requests each at once,
// every endpoint streamed and not, and checks each answer; after the
// server's shutdown, no goroutine of it is left.
func TestConcurrentClients(t *testing.T) {
	before := runtime.NumGoroutine()
	e := newFake()
	e.delay = time.Millisecond
	url, stop, log := serve(t, testConfig(e))
	tr := &http.Transport{}
	client := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for c := range 20 {
		wg.Go(func() {
			for i := range 10 {
				if err := exchange(client, url, c, i); err != nil {
					errs <- fmt.Errorf("client %d request %d: %w", c, i, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Before the shutdown, which would otherwise wait for a connection
	// the transport dialed and did not use.
	tr.CloseIdleConnections()
	if err := stop(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if strings.Contains(log.String(), "shutdown: closed") {
		t.Errorf("the shutdown had to close connections:\n%s", log)
	}
	settled(t, before)
	if n := strings.Count(log.String(), " 200 "); n != 200 {
		t.Errorf("the log has %d requests answered 200, want 200:\n%s", n, log)
	}
}

// exchange makes request i of client c, one of four kinds, and checks the
// text that comes back.
func exchange(client *http.Client, url string, c, i int) error {
	text := fmt.Sprintf("client %d request %d", c, i)
	stream := i%2 == 1
	path, body, want := "/v1/completions", fmt.Sprintf(`{"prompt": %q, "stream": %v}`, text, stream), text
	if i%4 >= 2 {
		path, body = "/v1/chat/completions", fmt.Sprintf(`{"messages": [{"role": "user", "content": %q}], "stream": %v}`, text, stream)
		want = "user: " + text + "\nassistant:"
	}
	resp, err := client.Post(url+path, "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("%d %s", resp.StatusCode, b)
	}
	var got strings.Builder
	var chunks []string
	if stream {
		s, _ := strings.CutSuffix(string(b), "data: [DONE]\n\n")
		chunks = strings.Split(strings.TrimSuffix(s, "\n\n"), "\n\n")
	} else {
		chunks = []string{string(b)}
	}
	for _, ch := range chunks {
		var v struct {
			Choices []struct {
				Text    string
				Message struct{ Content string }
				Delta   struct{ Content string }
			}
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(ch, "data: ")), &v); err != nil || len(v.Choices) != 1 {
			return fmt.Errorf("chunk %q: %v", ch, err)
		}
		ch := v.Choices[0]
		got.WriteString(ch.Text + ch.Message.Content + ch.Delta.Content)
	}
	if got.String() != want {
		return fmt.Errorf("%s, want %q", b, want)
	}
	return nil
}

// TestShutdown ends Serve in the middle of a stream: the stream must end
// with an error event, its sequence canceled, Serve return nil and leave
// no goroutine, and the port no longer take connections.
func TestShutdown(t *testing.T) {
	before := runtime.NumGoroutine()
	e := newFake()
	e.delay = 20 * time.Millisecond
	url, stop, log := serve(t, testConfig(e))
	tr := &http.Transport{}
	resp, err := (&http.Client{Transport: tr}).Post(url+"/v1/completions", "application/json",
		strings.NewReader(fmt.Sprintf(`{"prompt": %q, "stream": true}`, strings.Repeat("a", 1000))))
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(resp.Body)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "data: {") {
		t.Fatalf("%q %v", line, err)
	}
	if err := stop(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	select {
	case <-e.canceled:
	default:
		t.Error("the engine did not see its sequence canceled")
	}
	rest, err := io.ReadAll(r)
	resp.Body.Close()
	if err != nil {
		t.Errorf("reading the stream: %v", err)
	}
	// rest begins with the end of the first event.
	data := strings.Split(strings.Trim(string(rest), "\n"), "\n\n")
	last := data[len(data)-1]
	if !strings.HasPrefix(last, `data: {"error":{"code":503,`) || !strings.Contains(last, `"type":"unavailable_error"`) {
		t.Errorf("the stream ends with %q", last)
	}
	if strings.Contains(log.String(), "shutdown: closed") {
		t.Errorf("the shutdown had to close connections:\n%s", log)
	}
	tr.CloseIdleConnections()
	settled(t, before)
	if c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://")); err == nil {
		c.Close()
		t.Error("the port takes connections after Serve returned")
	}
}

// TestShutdownCloses has a client send half a request's header and
// stop, which net/http's shutdown would wait for until the header's
// timeout: Serve must close its connection after its grace and return.
func TestShutdownCloses(t *testing.T) {
	url, stop, log := serve(t, testConfig(newFake()))
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET /health HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	// Time for the server to read those bytes: unread, they would leave
	// the connection idle, which the shutdown closes at once.
	time.Sleep(200 * time.Millisecond)
	begin := time.Now()
	if err := stop(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if d := time.Since(begin); d < shutdownGrace || !strings.Contains(log.String(), "shutdown: closed the connections still open after 3s") {
		t.Errorf("Serve returned after %v, logging:\n%s", d, log)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the connection is still open: read %d, %v", n, err)
	}
}

func TestServeListenError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := Serve(ctx, ln.Addr().String(), testConfig(newFake())); err == nil || ctx.Err() != nil {
		t.Errorf("Serve on a port in use: %v", err)
	}
}
