package gguf

import (
	"errors"
	"fmt"
	"strings"
)

// FormatError is a problem with a GGUF file's contents. Parse and Open
// return one, or several joined with errors.Join (use errors.As to get the
// first).
type FormatError struct {
	File   string // the file's path, when known
	Tensor string // the tensor the problem is about, if any
	Offset int64  // the file offset of the problem, -1 when none applies
	Msg    string // what was expected and what was found
}

func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString("gguf: ")
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	if e.Tensor != "" {
		fmt.Fprintf(&b, "tensor %q: ", e.Tensor)
	}
	b.WriteString(e.Msg)
	if e.Offset >= 0 {
		fmt.Fprintf(&b, " (at byte %d)", e.Offset)
	}
	return b.String()
}

// maxErrors is how many tensor problems one Parse reports before it
// summarises the rest, so a hostile file cannot produce a huge message.
const maxErrors = 20

// errorList collects the problems of one file.
type errorList struct {
	file string
	errs []error
	more int
}

func (l *errorList) add(tensor string, off int64, format string, args ...any) {
	if len(l.errs) == maxErrors {
		l.more++
		return
	}
	l.errs = append(l.errs, &FormatError{File: l.file, Tensor: tensor, Offset: off, Msg: fmt.Sprintf(format, args...)})
}

func (l *errorList) err() error {
	if len(l.errs) == 0 {
		return nil
	}
	errs := l.errs
	if l.more > 0 {
		errs = append(errs[:len(errs):len(errs)], &FormatError{File: l.file, Offset: -1, Msg: fmt.Sprintf("and %d more problems", l.more)})
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}
