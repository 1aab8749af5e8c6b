package compiler

import (
	"strings"
	"testing"
)

// TestCatchBug: a BUG: panic anywhere in the pipeline reaches the caller
// as an InternalError with its stack, which the command line exits 3 on.
func TestCatchBug(t *testing.T) {
	err := func() (err error) {
		defer catchBug(&err)
		panic("BUG: something broke")
	}()
	ie, ok := err.(*InternalError)
	if !ok {
		t.Fatalf("got %T, want *InternalError", err)
	}
	if ie.Msg != "BUG: something broke" || !strings.Contains(ie.Stack, "TestCatchBug") {
		t.Errorf("message %q, stack:\n%s", ie.Msg, ie.Stack)
	}
}
