//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package engine

// reserveHandle returns the handle of a device allocation (DeviceMemory): host
// memory of its own filled with 0xff bytes (NaN as f32 and f16), so that
// host code reading device memory directly sees NaNs, and writes to it are
// lost.
func reserveHandle(size int) ([]byte, func(), error) {
	b := make([]byte, size)
	for i := range b {
		b[i] = 0xff
	}
	return b, nil, nil
}
