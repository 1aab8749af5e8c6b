//go:build !amd64 || noasm

package cpu

import "unsafe"

// prefetchRows is a hint, and this build has no instruction for it.
func prefetchRows(p unsafe.Pointer, rows, stride, bytes int) {}

// isAMD is false: this build's kernels do not depend on the vendor.
func isAMD() bool { return false }
