package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/graphc/graphc/runtime/lm"
)

// apiError is an error response's body, as llama-server writes it: the
// HTTP status in code and OpenAI's error types, plus the counts of a
// prompt over the context.
type apiError struct {
	Code          int    `json:"code"`
	Message       string `json:"message"`
	Type          string `json:"type"`
	NPromptTokens int    `json:"n_prompt_tokens,omitempty"`
	NCtx          int    `json:"n_ctx,omitempty"`
}

// errorResponse is what an error is sent as, whole or as an event.
type errorResponse struct {
	Error *apiError `json:"error"`
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{Code: http.StatusBadRequest, Type: "invalid_request_error", Message: fmt.Sprintf(format, args...)}
}

// engineError is the answer to an error of the engine's.
func engineError(err error) *apiError {
	var ce *lm.ContextError
	switch {
	case errors.Is(err, lm.ErrBusy):
		return &apiError{Code: http.StatusServiceUnavailable, Type: "unavailable_error", Message: err.Error()}
	case errors.As(err, &ce):
		return &apiError{Code: http.StatusBadRequest, Type: "exceed_context_size_error", Message: err.Error(), NPromptTokens: ce.Tokens, NCtx: ce.NCtx}
	case errors.Is(err, context.Canceled):
		// The request's context: the client is gone or the server is
		// shutting down.
		return &apiError{Code: http.StatusServiceUnavailable, Type: "unavailable_error", Message: "generation canceled: the client went away or the server is shutting down"}
	}
	return &apiError{Code: http.StatusInternalServerError, Type: "server_error", Message: err.Error()}
}

// maxBody is the largest request body: far more than any context's
// prompt, and a bound on what a request can make the server hold.
const maxBody = 8 << 20

// decode reads r's body, one JSON object, into v, which takes only the
// fields it names.
func decode(w http.ResponseWriter, r *http.Request, v any) *apiError {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return &apiError{Code: http.StatusRequestEntityTooLarge, Type: "invalid_request_error", Message: fmt.Sprintf("the request body is over %d MiB", tooLarge.Limit>>20)}
		}
		return badRequest("reading the request body: %v", err)
	}
	// encoding/json would replace invalid UTF-8 in strings with U+FFFD.
	if !utf8.Valid(body) {
		return badRequest("the request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if err := dec.Decode(new(json.RawMessage)); err != io.EOF {
		return badRequest("the request body has more after its JSON object")
	}
	return nil
}

// jsonError says what is wrong with a body decode rejected.
func jsonError(err error) *apiError {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case err == io.EOF:
		return badRequest("the request body is empty; it must be a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("the request body ends inside its JSON")
	case errors.As(err, &syntax):
		return badRequest("malformed JSON at byte %d: %s", syntax.Offset, strings.TrimPrefix(syntax.Error(), "json: "))
	case errors.As(err, &typ):
		if typ.Field == "" {
			return badRequest("the request body must be a JSON object, not %s", typ.Value)
		}
		// The json package names the struct of params, which the request
		// types embed, as if it were a field.
		field := strings.TrimPrefix(typ.Field, "params.")
		return badRequest("%s must be %s, not %s", field, jsonKind(typ.Type), typ.Value)
	}
	// Unknown fields, and the messages of the fields' own decoders.
	return badRequest("%s", strings.TrimPrefix(err.Error(), "json: "))
}

// jsonKind names what JSON value decodes into t.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fmt.Sprintf("a %d-bit integer", t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("a %d-bit unsigned integer", t.Bits())
	case reflect.Float32, reflect.Float64:
		return fmt.Sprintf("a %d-bit floating-point number", t.Bits())
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// writeJSON answers with v, leaving <, > and & as they are: chat tokens
// such as <|im_end|> read better so.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v) // a failed write is a client gone
}
