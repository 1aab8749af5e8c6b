//go:build !linux

package cpu

// allocPacked returns n zeroed bytes for a packed weight, from the Go heap.
func allocPacked(n int) (data []byte, free func()) { return make([]byte, n), func() {} }
