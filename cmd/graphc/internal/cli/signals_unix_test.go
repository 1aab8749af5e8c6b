//go:build unix

package cli

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestRunProgramForwardsTERM sends SIGTERM to graphc alone while it runs
// a program: the program gets it and its exit status is graphc's.
func TestRunProgramForwardsTERM(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	e := &env{ctx: context.Background(), stdout: io.Discard, stderr: io.Discard}
	done := make(chan error, 1)
	go func() { done <- runProgram(e, sh, []string{"-c", "trap 'exit 7' TERM; while :; do sleep 0.05; done"}) }()
	time.Sleep(500 * time.Millisecond) // the program started, the handler set
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var s exitStatus
		if !errors.As(err, &s) || s != 7 {
			t.Fatalf("runProgram: %v, want the program's exit status 7", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the program did not end after graphc got SIGTERM")
	}
}
