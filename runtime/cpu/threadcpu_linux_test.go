package cpu_test

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPU is the calling OS thread's CPU time (CLOCK_THREAD_CPUTIME_ID,
// to the nanosecond), and true: what a one-thread product costs whatever
// else the machine runs, where its wall time also counts the time the
// thread waited for a CPU.
func threadCPU() (time.Duration, bool) {
	var ts syscall.Timespec
	const clockThreadCPUTime = 3
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
