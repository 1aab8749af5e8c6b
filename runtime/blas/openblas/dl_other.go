//go:build !(darwin || freebsd || linux || netbsd)

package openblas

import (
	"fmt"
	goruntime "runtime"
)

// openLibrary: loading OpenBLAS is implemented for Unix only.
func openLibrary(path string) (func(name string) uintptr, error) {
	return nil, fmt.Errorf("loading shared libraries is not supported on %s", goruntime.GOOS)
}
