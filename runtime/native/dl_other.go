//go:build !(darwin || freebsd || linux || netbsd || windows)

package native

import (
	"fmt"
	"runtime"
)

// Open: loading shared libraries is implemented for Unix and Windows only.
func Open(path string, global bool) (func(name string) uintptr, error) {
	return nil, fmt.Errorf("loading shared libraries is not supported on %s", runtime.GOOS)
}
