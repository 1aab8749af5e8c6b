//go:build !(darwin || freebsd || linux || netbsd || windows)

package ggmlapi

import (
	"fmt"
	"runtime"

	"github.com/graphc/graphc/backend/libs"
)

// Load: loading shared libraries without cgo is supported on Linux, macOS,
// the BSDs purego supports and Windows only.
func Load() (*API, *libs.GGML, error) {
	return nil, nil, fmt.Errorf("loading ggml's libraries is not supported on %s", runtime.GOOS)
}
