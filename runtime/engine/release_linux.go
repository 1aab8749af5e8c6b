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
// data's content never changes. The CPU backend releases the weights only
// a packed copy reads, or get_rows besides (ir.Packing.Release), as it
// packs them, so that a copy and its weight are never both in memory.
// Errors (an older kernel) are ignored: it is advice.
func ReleasePages(data []byte) {
	if len(data) == 0 {
		return
	}
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(&data[0]))
	pageout(start&^(page-1), (start+uintptr(len(data))+page-1)&^(page-1))
}

// ReleasePagesWithin is ReleasePages for the pages wholly inside data
// only: the weight's bytes a packing thread has read, while others still
// read their neighbours.
func ReleasePagesWithin(data []byte) {
	if len(data) == 0 {
		return
	}
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(&data[0]))
	pageout((start+page-1)&^(page-1), (start+uintptr(len(data)))&^(page-1))
}

// pageout advises MADV_PAGEOUT for the page-aligned range [lo, hi).
func pageout(lo, hi uintptr) {
	if hi > lo {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, madvPageout)
	}
}

const madvPageout = 21 // MADV_PAGEOUT, not in package syscall
