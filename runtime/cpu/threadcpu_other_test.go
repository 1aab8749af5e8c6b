//go:build !linux

package cpu_test

import "time"

// threadCPU is false where the thread's CPU time is not measured.
func threadCPU() (time.Duration, bool) { return 0, false }
