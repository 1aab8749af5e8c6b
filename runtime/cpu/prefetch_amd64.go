//go:build !noasm

package cpu

import "unsafe"

// prefetchRows asks for the cache lines of rows rows of bytes bytes, the
// first at p and the others stride bytes apart, ahead of a kernel that
// reads them: it never faults, and it loads nothing into registers.
//
//go:noescape
func prefetchRows(p unsafe.Pointer, rows, stride, bytes int)
