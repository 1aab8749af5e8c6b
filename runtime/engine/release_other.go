//go:build !linux

package engine

// ReleasePages would advise the system that data's pages will not be read
// soon; only Linux is advised (see release_linux.go).
func ReleasePages(data []byte) {}
