package dsl

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// Error is a problem in a DSL source file, positioned at the offending
// text. It renders as "file:line:col: message", the format of participle's
// own errors, and implements participle.Error.
type Error struct {
	Pos lexer.Position
	// EndPos is the position just past the offending text, or the zero
	// Position if unknown.
	EndPos lexer.Position
	Msg    string
}

var _ participle.Error = (*Error)(nil)

// errorf returns an *Error spanning node n.
func errorf(n Node, format string, args ...any) *Error {
	return &Error{Pos: n.Position(), EndPos: n.End(), Msg: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	return participle.FormatError(e)
}

// Message returns the message without the position.
func (e *Error) Message() string { return e.Msg }

// Position returns the position of the offending text.
func (e *Error) Position() lexer.Position { return e.Pos }

// ErrorList is a list of errors, each on its own line when printed. Parse
// and Check return one, sorted by position.
type ErrorList []*Error

func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the errors, so that errors.As finds an *Error.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// Sort sorts the list by file, then position, then message.
func (l ErrorList) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i], l[j]
		if a.Pos.Filename != b.Pos.Filename {
			return a.Pos.Filename < b.Pos.Filename
		}
		if a.Pos.Offset != b.Pos.Offset {
			return a.Pos.Offset < b.Pos.Offset
		}
		return a.Msg < b.Msg
	})
}

// Err returns l as an error, or nil if l is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Render formats err for a terminal. Each positioned error in err (an
// *Error, an ErrorList, a participle.Error or errors joined with
// errors.Join) prints as its "file:line:col: message" line followed by the
// source line and a caret line: "^" under the first column, and "~" under
// the rest of the offending text when it ends on the same line. src is the
// source that the positions refer to. Other errors print as err.Error().
func Render(err error, src []byte) string {
	var b strings.Builder
	for _, e := range flatten(err) {
		var perr participle.Error
		if !errors.As(e, &perr) {
			b.WriteString(e.Error() + "\n")
			continue
		}
		b.WriteString(capLine(participle.FormatError(perr), maxMessage) + "\n")
		var end lexer.Position
		if de, ok := perr.(*Error); ok {
			end = de.EndPos
		}
		b.WriteString(snippet(src, perr.Position(), end))
	}
	return b.String()
}

// flatten returns the errors that err is made of.
func flatten(err error) []error {
	switch e := err.(type) {
	case nil:
		return nil
	case ErrorList:
		return e.Unwrap()
	case participle.Error:
		return []error{e}
	case interface{ Unwrap() []error }:
		var out []error
		for _, e := range e.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// Echoed text is cut to a window so that an error in a huge generated
// source line prints a readable line, not megabytes.
const (
	snippetBefore = 60   // runes of the source line shown before the caret
	snippetAfter  = 60   // and after it
	maxMessage    = 1000 // bytes of a message line (participle quotes tokens)
)

// capLine shortens line to about max bytes, keeping its start and end.
func capLine(line string, max int) string {
	if len(line) <= max {
		return line
	}
	head, tail := line[:max/2], line[len(line)-max/2:]
	for !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	for !utf8.ValidString(tail) {
		tail = tail[1:]
	}
	return fmt.Sprintf("%s … (%d bytes cut) … %s", head, len(line)-len(head)-len(tail), tail)
}

// snippet returns the source line holding pos and a caret line under it,
// or "" if pos does not fit src. A long line shows only a window around
// pos, with "…" where it was cut.
func snippet(src []byte, pos, end lexer.Position) string {
	if pos.Line == 0 || pos.Offset < 0 || pos.Offset > len(src) {
		return ""
	}
	start := strings.LastIndexByte(string(src[:pos.Offset]), '\n') + 1
	stop := len(src)
	if i := strings.IndexByte(string(src[pos.Offset:]), '\n'); i >= 0 {
		stop = pos.Offset + i
	}
	lead, cutLead := "", false
	// Cut by the bytes each rune takes in src: []rune(string(…)) turns an
	// invalid byte into a three-byte U+FFFD and cut past the line's end.
	if before := src[start:pos.Offset]; utf8.RuneCount(before) > snippetBefore {
		for n := 0; n < snippetBefore; n++ {
			_, w := utf8.DecodeLastRune(before)
			before = before[:len(before)-w]
		}
		start += len(before)
		lead, cutLead = "… ", true
	}
	trail, cutStop := "", stop
	if after := src[pos.Offset:stop]; utf8.RuneCount(after) > snippetAfter {
		cutStop = pos.Offset
		for n := 0; n < snippetAfter; n++ {
			_, w := utf8.DecodeRune(src[cutStop:stop])
			cutStop += w
		}
		trail = " …"
	}
	line := lead + strings.TrimRight(string(src[start:cutStop]), "\r") + trail
	var caret strings.Builder
	if cutLead {
		caret.WriteString("  ")
	}
	for _, r := range string(src[start:pos.Offset]) {
		if r == '\t' {
			caret.WriteByte('\t')
		} else {
			caret.WriteByte(' ')
		}
	}
	caret.WriteByte('^')
	if end.Offset > pos.Offset && end.Offset <= stop {
		n := utf8.RuneCount(src[pos.Offset:min(end.Offset, cutStop)])
		caret.WriteString(strings.Repeat("~", n-1))
	}
	return line + "\n" + caret.String() + "\n"
}
