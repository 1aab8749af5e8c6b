package engine

import (
	"os"
	"syscall"
	"unsafe"
)

// ReleasePages tells the kernel that data's pages will not be read soon
// (madvise MADV_PAGEOUT, Linux 5.4 and later): pages of a mapped file
// leave memory at once and come back from the file if they are read;
// anonymous pages (the Go heap) go to swap, or stay where there is none.
// data's content never changes. The CPU backend's Pack releases the
// weights only a packed copy reads, or get_rows besides
// (ir.Packing.Release), once packed, so that the copy does not double
// their memory. Errors (an older kernel) are ignored: it is advice.
func ReleasePages(data []byte) {
	if len(data) == 0 {
		return
	}
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(&data[0]))
	lo := start &^ (page - 1)
	n := (start + uintptr(len(data)) - lo + page - 1) &^ (page - 1)
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, lo, n, madvPageout)
}

const madvPageout = 21 // MADV_PAGEOUT, not in package syscall
