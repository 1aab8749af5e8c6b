package engine

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
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
//
// MADV_PAGEOUT passes over the pages another mapping maps too (another
// process serving the same file, or llama.cpp beside graphc bench): where
// data lies in a shared mapping of a file, MADV_DONTNEED then unmaps them
// from this process, which reads them back from the file if need be.
// Nowhere else: it would drop the content of anonymous memory.
func ReleasePages(data []byte) {
	if len(data) == 0 {
		return
	}
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(&data[0]))
	lo := start &^ (page - 1)
	n := (start + uintptr(len(data)) - lo + page - 1) &^ (page - 1)
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, lo, n, madvPageout)
	if sharedFileMapping(lo, lo+n) {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, lo, n, syscall.MADV_DONTNEED)
	}
}

const madvPageout = 21 // MADV_PAGEOUT, not in package syscall

// sharedFileMapping reports whether [lo, hi) lies in one mapping of this
// process that is shared and backed by a file (/proc/self/maps: perms
// "r?s?", an inode).
func sharedFileMapping(lo, hi uintptr) bool {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode [path]
		fields := bytes.Fields(sc.Bytes())
		if len(fields) < 5 {
			continue
		}
		span := bytes.SplitN(fields[0], []byte("-"), 2)
		if len(span) != 2 {
			continue
		}
		start, err1 := strconv.ParseUint(string(span[0]), 16, 64)
		end, err2 := strconv.ParseUint(string(span[1]), 16, 64)
		if err1 != nil || err2 != nil || uintptr(start) > lo || uintptr(end) <= lo {
			continue
		}
		perms, inode := fields[1], string(fields[4])
		return uintptr(end) >= hi && len(perms) == 4 && perms[3] == 's' && inode != "0"
	}
	return false
}
