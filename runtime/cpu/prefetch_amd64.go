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

// cpuid is the CPUID instruction's registers for leaf (sub-leaf 0).
//
//go:noescape
func cpuid(leaf uint32) (eax, ebx, ecx, edx uint32)

// cpuVendor is CPUID leaf 0's vendor string, in register order ("Genu",
// "ineI", "ntel" on Intel; "Auth", "enti", "cAMD" on AMD).
func cpuVendor() (ebx, edx, ecx uint32) {
	_, ebx, ecx, edx = cpuid(0)
	return ebx, edx, ecx
}

// isAMD reports an AMD processor (CPUID's "AuthenticAMD").
func isAMD() bool {
	b, d, c := cpuVendor()
	var v [12]byte
	binary.LittleEndian.PutUint32(v[0:], b)
	binary.LittleEndian.PutUint32(v[4:], d)
	binary.LittleEndian.PutUint32(v[8:], c)
	return string(v[:]) == "AuthenticAMD"
}

// cpuFamily is CPUID leaf 1's display family: the base family, plus the
// extended family where the base is 0xf (AMD's Zen 3 and 4 are 0x19, Zen
// 5 0x1a).
func cpuFamily() int {
	a, _, _, _ := cpuid(1)
	f := int(a>>8) & 0xf
	if f == 0xf {
		f += int(a>>20) & 0xff
	}
	return f
}

// zen5OrLater reports an AMD processor of family 0x1a (Zen 5) or later,
// whose one-column K-quant kernels prefetch farther (kColumnAhead).
func zen5OrLater() bool { return isAMD() && cpuFamily() >= 0x1a }

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
