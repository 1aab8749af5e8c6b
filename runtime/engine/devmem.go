package engine

import (
	"fmt"
	"sort"
	"unsafe"

	"github.com/graphc/graphc/tensor"
)

// DeviceMemory is the allocation table of a backend with memory of its
// own (runtime/sim, runtime/rpc, runtime/ggml). Each allocation is handed
// to generated code as a handle: an address range reserved with no access
// (on other systems a block of 0xff bytes, NaN to any float reader) that
// stands for the device's memory the way a device pointer does, so that
// host code dereferencing it faults instead of reading the wrong bytes.
// Tensors are slices of handles; Locate maps one back to its allocation
// and offset. A, the backend's own record of an allocation, says where the
// bytes really are. DeviceMemory does no locking.
type DeviceMemory[A any] struct {
	allocs []deviceAlloc[A] // by their handles' addresses
}

type deviceAlloc[A any] struct {
	handle []byte
	free   func()
	a      A
}

// Add reserves a handle of size bytes (> 0) for allocation a.
func (m *DeviceMemory[A]) Add(size int, a A) ([]byte, error) {
	handle, free, err := reserveHandle(size)
	if err != nil {
		return nil, err
	}
	i := sort.Search(len(m.allocs), func(i int) bool { return addr(m.allocs[i].handle) > addr(handle) })
	m.allocs = append(m.allocs, deviceAlloc[A]{})
	copy(m.allocs[i+1:], m.allocs[i:])
	m.allocs[i] = deviceAlloc[A]{handle: handle, free: free, a: a}
	return handle, nil
}

// At is allocation i, as Locate numbers them (until the next Add).
func (m *DeviceMemory[A]) At(i int) *A { return &m.allocs[i].a }

// Locate returns the allocation whose handle holds t's bytes, and their
// offset in it. backend names the backend for the panic that a tensor
// outside every allocation is: host memory or another device's given to
// this one, a missing copy in the caller.
func (m *DeviceMemory[A]) Locate(backend string, t *tensor.Tensor) (i, off int) {
	p := addr(t.Data)
	i = sort.Search(len(m.allocs), func(i int) bool { return addr(m.allocs[i].handle) > p }) - 1
	if i >= 0 {
		h := m.allocs[i].handle
		if off := int(p - addr(h)); off+len(t.Data) <= len(h) {
			return i, off
		}
	}
	panic(fmt.Sprintf("BUG: %s: a %s%v tensor outside %s's memory was given to it (host memory, or another device's: a missing copy)", backend, t.Type, t.Ne, backend))
}

// Release calls done on every allocation, frees their handles and empties
// m.
func (m *DeviceMemory[A]) Release(done func(*A)) {
	for i := range m.allocs {
		done(&m.allocs[i].a)
		if m.allocs[i].free != nil {
			m.allocs[i].free()
		}
	}
	m.allocs = nil
}

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
