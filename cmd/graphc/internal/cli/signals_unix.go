//go:build unix

package cli

import (
	"os"
	"syscall"
)

// forwardedSignals are the signals runProgram passes on to the program.
var forwardedSignals = []os.Signal{syscall.SIGTERM, syscall.SIGHUP}
