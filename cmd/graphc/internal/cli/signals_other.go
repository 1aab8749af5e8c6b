//go:build !unix

package cli

import "os"

// forwardedSignals are the signals runProgram passes on to the program:
// none where a process cannot be sent one.
var forwardedSignals []os.Signal
