//go:build !noasm

package cpu

import (
	"encoding/binary"
	"unsafe"
)

// prefetchRows asks for the cache lines of rows rows of bytes bytes, the
// first at p and the others stride bytes apart, ahead of a kernel that
// reads them: it never faults, and it loads nothing into registers.
//
//go:noescape
func prefetchRows(p unsafe.Pointer, rows, stride, bytes int)

// cpuVendor is CPUID leaf 0's vendor string, in register order ("Genu",
// "ineI", "ntel" on Intel; "Auth", "enti", "cAMD" on AMD).
//
//go:noescape
func cpuVendor() (ebx, edx, ecx uint32)

// isAMD reports an AMD processor (CPUID's "AuthenticAMD").
func isAMD() bool {
	b, d, c := cpuVendor()
	var v [12]byte
	binary.LittleEndian.PutUint32(v[0:], b)
	binary.LittleEndian.PutUint32(v[4:], d)
	binary.LittleEndian.PutUint32(v[8:], c)
	return string(v[:]) == "AuthenticAMD"
}

// streamAhead is how far, in bytes, the one-column packed kernels
// (packed_amd64.s) prefetch ahead of the weights they stream; the
// assembly reads it. On the 1B q4_0 model at 2 threads, the same process
// alternating distances: on Intel (Sapphire Rapids) 2 KiB beat 0.5, 1, 3
// and 4 KiB by 5–15 %; on AMD (Zen 4) 2 KiB was 9–20 % slower than 1 and
// 1.5 KiB in every round where the host's memory was contended, and equal
// where it was not.
var streamAhead = func() int {
	if isAMD() {
		return 1536
	}
	return 2048
}()
