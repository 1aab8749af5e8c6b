// Package server is graphc serve's HTTP API, as llama.cpp's llama-server
// has it: OpenAI's /v1/completions, /v1/chat/completions and /v1/models,
// streamed as server-sent events or not, and llama-server's /health,
// /tokenize and /detokenize. It generates through an Engine, which
// decodes many requests' sequences together (runtime/lm's continuous
// batching); each request is one sequence, canceled when its client goes
// away.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/graphc/graphc/runtime/lm"
	"github.com/graphc/graphc/runtime/lm/sample"
)

// Engine generates text; *lm.Engine is one.
type Engine interface {
	// Start queues r. It fails at once with lm.ErrBusy when the queue is
	// full and with a *lm.ContextError when the prompt does not fit. ctx
	// ends the sequence: the server passes the request's, canceled when
	// its client goes away or the server shuts down.
	Start(ctx context.Context, r lm.Request) (Stream, error)
	Info() lm.Info
}

// Stream is one sequence being generated.
type Stream interface {
	// Tokens yields the generated tokens as they come and ends with the
	// sequence. The engine buffers them: a client that reads slowly holds
	// up only its own response. The server stops ranging early when its
	// client is gone; the canceled ctx then ends the sequence.
	Tokens() iter.Seq[lm.Token]
	// Result is what the sequence took, or the error that ended it. The
	// server calls it once Tokens has ended.
	Result() (lm.Result, error)
}

// Tokenizer is the model's vocabulary; *tokenizer.Tokenizer is one.
type Tokenizer interface {
	// Encode is llama_tokenize: addSpecial adds the BOS (and EOS) the
	// vocabulary asks for, parseSpecial turns control tokens' text into
	// those tokens.
	Encode(text string, addSpecial, parseSpecial bool) []int32
	// Decode is llama_detokenize, control tokens left out.
	Decode(ids []int32) string
	// Piece is one token's text, a control token's only with special.
	Piece(id int32, special bool) string
	// BOS is the begin-of-sequence token, or a negative id for none.
	BOS() int32
}

// Message is one message of a chat, its content's text parts joined.
// Its fields are runtime/lm/chat's Message's, so that chat.Message(m)
// converts one.
type Message struct {
	Role    string
	Content string
}

// Config is what New serves.
type Config struct {
	Model     string // the model's name in /v1/models and in responses
	Engine    Engine
	Tokenizer Tokenizer
	// Chat renders messages with the model's chat template and its
	// generation prompt. Nil: /v1/chat/completions answers 501.
	Chat func(msgs []Message) (string, error)
	// Sampling and MaxTokens are a request's before its own fields
	// change them: graphc serve's are llama.cpp's defaults (the zero
	// Params is greedy with top_p 0). MaxTokens counts as lm.Request's
	// (0: no limit).
	Sampling  sample.Params
	MaxTokens int
	// ContextShift and Keep are lm.Request's for every request (graphc
	// serve's -context-shift and -keep); a request's n_keep changes Keep.
	ContextShift bool
	Keep         int
	// Log gets Serve's "listening on" line and a line for each request.
	// Nil: no log.
	Log io.Writer
}

// Serve listens on addr (host:port) and serves c until ctx is done. It
// writes "listening on http://HOST:PORT" to c.Log once it accepts
// connections, the port the one it got when addr's is 0. When ctx is
// done it cancels the requests in flight, which ends their sequences,
// and returns nil once they have ended, or once shutdownGrace has passed
// and it has closed the connections left.
func Serve(ctx context.Context, addr string, c Config) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	s := newServer(c)
	srv := &http.Server{
		Handler: s,
		// Requests' contexts derive from ctx, so that its end cancels them.
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          log.New(s.log, "", 0),
	}
	s.log.printf("listening on http://%s", ln.Addr())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	grace, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(grace); err != nil {
		// Left are handlers blocked writing to clients that stopped
		// reading, and connections that have not sent a request (which
		// net/http waits 5 s for); closing the connections ends both.
		srv.Close()
		s.log.printf("shutdown: closed the connections still open after %v", shutdownGrace)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// shutdownGrace is how long Serve's shutdown waits for canceled requests
// to end: each has only its response's last chunk to write.
const shutdownGrace = 3 * time.Second

// New returns c's API as a handler.
func New(c Config) http.Handler { return newServer(c) }

type server struct {
	c       Config
	created int64 // /v1/models' created
	log     *logger
	routes  map[string]route
}

// route is an endpoint: its method and handler. A handler returns the
// error to answer with, or nil once it has answered.
type route struct {
	method  string
	handler func(w *response, r *http.Request) *apiError
}

func newServer(c Config) *server {
	s := &server{c: c, created: time.Now().Unix(), log: &logger{w: c.Log}}
	s.routes = map[string]route{
		"/health":              {http.MethodGet, s.health},
		"/v1/models":           {http.MethodGet, s.models},
		"/v1/completions":      {http.MethodPost, s.completions},
		"/v1/chat/completions": {http.MethodPost, s.chatCompletions},
		"/tokenize":            {http.MethodPost, s.tokenize},
		"/detokenize":          {http.MethodPost, s.detokenize},
	}
	return s
}

func (s *server) ServeHTTP(hw http.ResponseWriter, r *http.Request) {
	start := time.Now()
	w := &response{ResponseWriter: hw}
	rt, ok := s.routes[r.URL.Path]
	var err *apiError
	switch {
	case !ok:
		err = &apiError{Code: http.StatusNotFound, Type: "not_found_error", Message: fmt.Sprintf("no endpoint %s", r.URL.Path)}
	case r.Method != rt.method:
		w.Header().Set("Allow", rt.method)
		err = &apiError{Code: http.StatusMethodNotAllowed, Type: "invalid_request_error", Message: fmt.Sprintf("%s takes %s, not %s", r.URL.Path, rt.method, r.Method)}
	default:
		err = rt.handler(w, r)
	}
	if err != nil {
		w.note = err.Message
		writeJSON(w, err.Code, errorResponse{err})
	}
	line := fmt.Sprintf("%s %q %d %v", r.Method, r.URL.Path, w.status, time.Since(start).Round(time.Millisecond))
	if w.note != "" {
		line += ": " + w.note
	}
	s.log.printf("%s", line)
}

// response is a ResponseWriter that keeps what the request's log line
// reports.
type response struct {
	http.ResponseWriter
	status int
	note   string // a generation's counts and times, or an error's message
}

func (w *response) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *response) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController flush the connection's writer.
func (w *response) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logger writes whole lines from concurrent requests, one at a time.
type logger struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *logger) printf(format string, args ...any) {
	if l.w == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format+"\n", args...)
}

// Write takes http.Server's error log.
func (l *logger) Write(b []byte) (int, error) {
	if l.w == nil {
		return len(b), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
