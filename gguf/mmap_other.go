//go:build (!linux && !darwin) || nommap

package gguf

import (
	"io"
	"os"

	"github.com/graphc/graphc/tensor"
)

// mapFile reads the file into an aligned buffer where this package does
// not use mmap (other systems, or the nommap build tag, which tests this
// path on Linux). The data is the same; only the loading is slower and the
// memory is not shared with the page cache.
func mapFile(f *os.File, size int) ([]byte, func([]byte) error, error) {
	b := tensor.NewBuffer(size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, nil, &os.PathError{Op: "read", Path: f.Name(), Err: err}
	}
	return b, func([]byte) error { return nil }, nil
}
