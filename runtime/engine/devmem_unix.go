//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package engine

import "syscall"

// reserveHandle reserves size bytes of address space with no access: the
// handle of a device allocation (DeviceMemory). Host code that dereferences
// device memory faults there instead of silently reading host memory.
func reserveHandle(size int) ([]byte, func(), error) {
	page := syscall.Getpagesize()
	n := (size + page - 1) / page * page
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, nil, err
	}
	return b[:size:size], func() { syscall.Munmap(b) }, nil
}
