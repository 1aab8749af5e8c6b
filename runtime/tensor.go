package runtime

import (
	"fmt"
	"unsafe"
)

// DType is an element type, named and laid out as in ggml.
type DType uint8

const (
	F32 DType = iota
	F16
	I32
)

var dtypeNames = [...]string{F32: "f32", F16: "f16", I32: "i32"}
var dtypeSizes = [...]int{F32: 4, F16: 2, I32: 4}

func (t DType) String() string {
	if int(t) < len(dtypeNames) {
		return dtypeNames[t]
	}
	return fmt.Sprintf("dtype(%d)", uint8(t))
}

// Size is the size of one element in bytes.
func (t DType) Size() int { return dtypeSizes[t] }

// ParseDType maps a DSL/ggml type name ("f32", "f16", "i32") to its DType.
func ParseDType(s string) (DType, bool) {
	for i, n := range dtypeNames {
		if n == s {
			return DType(i), true
		}
	}
	return 0, false
}

// Tensor is a strided 4-D view over bytes, with ggml's conventions: Ne[0] is
// the fastest dimension and Nb holds strides in bytes. Data starts at element
// (0,0,0,0) and reaches at least to the last addressed byte.
type Tensor struct {
	Type DType
	Ne   [4]int
	Nb   [4]int
	Data []byte
}

// Contiguous reports whether the tensor's elements are densely packed in
// row-major ggml order.
func (t *Tensor) Contiguous() bool {
	want := t.Type.Size()
	for i := 0; i < 4; i++ {
		if t.Ne[i] != 1 && t.Nb[i] != want {
			return false
		}
		want *= t.Ne[i]
	}
	return true
}

// NElem is the number of elements.
func (t *Tensor) NElem() int { return t.Ne[0] * t.Ne[1] * t.Ne[2] * t.Ne[3] }

// NRows is the number of rows (all dimensions but the first).
func (t *Tensor) NRows() int { return t.Ne[1] * t.Ne[2] * t.Ne[3] }

// Span is the number of bytes from the first to one past the last element.
func (t *Tensor) Span() int {
	if t.NElem() == 0 {
		return 0
	}
	n := t.Type.Size()
	for i := 0; i < 4; i++ {
		n += (t.Ne[i] - 1) * t.Nb[i]
	}
	return n
}

// ContiguousStrides returns the byte strides of a dense tensor of type t and shape ne.
func ContiguousStrides(t DType, ne [4]int) [4]int {
	var nb [4]int
	nb[0] = t.Size()
	for i := 1; i < 4; i++ {
		nb[i] = nb[i-1] * ne[i-1]
	}
	return nb
}

// View returns a dense tensor of the given type and shape over buf at offset.
func View(buf []byte, offset int, t DType, ne [4]int) Tensor {
	v := Tensor{Type: t, Ne: ne, Nb: ContiguousStrides(t, ne)}
	v.Data = buf[offset : offset+v.Span()]
	return v
}

// F32s reinterprets the tensor's bytes as float32s (len(Data)/4 of them).
func (t *Tensor) F32s() []float32 { return castSlice[float32](t.Data) }

// F16s reinterprets the tensor's bytes as raw IEEE half floats.
func (t *Tensor) F16s() []uint16 { return castSlice[uint16](t.Data) }

// I32s reinterprets the tensor's bytes as int32s.
func (t *Tensor) I32s() []int32 { return castSlice[int32](t.Data) }

func castSlice[E any](b []byte) []E {
	var zero E
	n := len(b) / int(unsafe.Sizeof(zero))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*E)(unsafe.Pointer(&b[0])), n)
}

// BufferAlign is the alignment of every buffer NewBuffer returns; it covers
// the largest vector width the kernels use and every backend's buffer
// alignment requirement.
const BufferAlign = 64

// NewBuffer allocates size zeroed bytes aligned to BufferAlign.
func NewBuffer(size int) []byte {
	words := make([]uint64, (size+BufferAlign)/8+1)
	b := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)
	skip := (BufferAlign - int(uintptr(unsafe.Pointer(&b[0]))%BufferAlign)) % BufferAlign
	return b[skip : skip+size : skip+size]
}
