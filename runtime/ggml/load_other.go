//go:build !(darwin || freebsd || linux || netbsd || windows)

package ggml

import (
	"fmt"
	"runtime"

	"github.com/graphc/graphc/backend/libs"
)

// SupportedVersions names the ggml versions graphc supports.
const SupportedVersions = "none on this system"

// Load: loading shared libraries without cgo is supported on Linux, macOS,
// the BSDs purego supports and Windows only.
func Load() (*libs.GGML, error) {
	return nil, fmt.Errorf("loading ggml's libraries is not supported on %s", runtime.GOOS)
}

func lib() (*api, error) {
	_, err := Load()
	return nil, err
}
