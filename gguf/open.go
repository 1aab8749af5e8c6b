package gguf

import (
	"bytes"
	"fmt"
	"math"
	"os"
)

// Mapped is a GGUF file mapped read-only into memory (on Linux and macOS;
// elsewhere read into an aligned buffer). Tensor data is used in place:
// Data and Weights return slices of the mapping, valid until Close.
//
// The mapping is read-only, so writing to a returned slice faults; and as
// with every mmap, truncating the file while it is mapped makes reads of
// the lost pages fault too.
type Mapped struct {
	*File
	path  string
	data  []byte
	unmap func([]byte) error
}

// Open maps the GGUF file at path and parses and validates it as Parse
// does; its errors name the file.
func Open(path string) (*Mapped, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size > math.MaxInt {
		return nil, &FormatError{File: path, Offset: -1, Msg: fmt.Sprintf("%d bytes is too large to map on this platform", size)}
	}
	var data []byte
	unmap := func([]byte) error { return nil }
	if size > 0 { // mmap of 0 bytes fails; Parse reports the empty file
		if data, unmap, err = mapFile(f, int(size)); err != nil {
			return nil, err
		}
	}
	file, err := parse(bytes.NewReader(data), size, path)
	if err != nil {
		unmap(data)
		return nil, err
	}
	return &Mapped{File: file, path: path, data: data, unmap: unmap}, nil
}

// Path is the path the file was opened from.
func (m *Mapped) Path() string { return m.path }

// Data returns the tensor's data, a slice of the mapping (no copy) whose
// capacity ends with the tensor. t must be one of m.Tensors, as Lookup
// returns them.
func (m *Mapped) Data(t *TensorInfo) []byte {
	start := m.DataOffset + t.Offset
	end := start + t.Size
	return m.data[start:end:end]
}

// Close unmaps the file. Slices from Data and Weights must not be used
// afterwards. Close is idempotent.
func (m *Mapped) Close() error {
	if m.data == nil {
		return nil
	}
	data := m.data
	m.data = nil
	return m.unmap(data)
}
