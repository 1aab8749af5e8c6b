//go:build unix

package cli

import (
	"errors"
	"os/exec"
	"syscall"
)

// killGroupOnCancel runs cmd in a process group of its own and, when its
// context ends (Ctrl-C, SIGTERM), kills the whole group: `go build`'s
// compiler and linker too, which would otherwise go on and write a binary
// after graphc has gone.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// brokenPipe reports whether err is a child's death by SIGPIPE: its
// reader (graphc's stdout, say `| head`) went away, which is no failure.
func brokenPipe(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGPIPE
}
