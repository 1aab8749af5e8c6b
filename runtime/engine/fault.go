package engine

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
)

// KernelError is what a kernel panics with when the values it is given,
// not the plan, make its op impossible: a get_rows index outside its
// table. The evaluation returns it as an error (Sched.Recover on the
// issuing goroutine, Flight.Wait for a backend's own goroutine) instead
// of taking the program down.
type KernelError struct {
	Op  string // the op's DSL name
	Msg string
}

func (e *KernelError) Error() string { return e.Op + ": " + e.Msg }

// ErrNoInputs is returned by an evaluation given nil inputs.
var ErrNoInputs = errors.New("evaluation given nil inputs")

// ErrReentered is returned by a model method called from inside its own
// eval callback: the evaluation that called the callback holds the model.
var ErrReentered = errors.New("called from the model's own eval callback, which runs inside an evaluation")

// CheckIndices reports the first of an input's values that is not a row
// of a table with rows rows, naming the input, the element and the table:
// generated code checks every input that get_rows reads as indices before
// an evaluation starts, so a token id out of range is an error, never a
// read outside the table.
func CheckIndices(input, table string, idx []int32, rows int) error {
	for i, v := range idx {
		if v < 0 || int(v) >= rows {
			return fmt.Errorf("input %s: element %d is %d, not a row of %s (0..%d)", input, i, v, table, rows-1)
		}
	}
	return nil
}

// goid is the calling goroutine's id, from its stack header
// ("goroutine 17 [running]:"). It is slow next to a kernel call and used
// only while an eval callback runs, to tell the callback's own calls from
// other goroutines' (which wait their turn).
func goid() int64 {
	var buf [64]byte
	s := string(buf[:runtime.Stack(buf[:], false)])
	s = strings.TrimPrefix(s, "goroutine ")
	if i := strings.IndexByte(s, ' '); i > 0 {
		if id, err := strconv.ParseInt(s[:i], 10, 64); err == nil {
			return id
		}
	}
	panic("BUG: runtime: cannot read the goroutine id from " + strconv.Quote(s))
}
