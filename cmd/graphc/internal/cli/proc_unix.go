//go:build unix

package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
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

// peakRSS is a running process's peak resident set so far, in bytes:
// Linux's VmHWM (0 where /proc does not say). Not the wait4 rusage of the
// ended process: Linux counts there the parent's memory the child shared
// between fork and exec.
func peakRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
