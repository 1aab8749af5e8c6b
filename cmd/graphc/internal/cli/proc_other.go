//go:build !unix

package cli

import "os/exec"

// killGroupOnCancel: exec.CommandContext's default, killing the process.
func killGroupOnCancel(cmd *exec.Cmd) {}

// brokenPipe: no SIGPIPE here.
func brokenPipe(err error) bool { return false }

// peakRSS is a running process's peak resident set: unknown here.
func peakRSS(pid int) int64 { return 0 }
