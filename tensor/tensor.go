package tensor

import (
	"unsafe"
)

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
		if i == 0 {
			want = t.Type.RowSize(t.Ne[0])
		} else {
			want *= t.Ne[i]
		}
	}
	return true
}

// NElem is the number of elements.
func (t *Tensor) NElem() int { return t.Ne[0] * t.Ne[1] * t.Ne[2] * t.Ne[3] }

// NRows is the number of rows (all dimensions but the first).
func (t *Tensor) NRows() int { return t.Ne[1] * t.Ne[2] * t.Ne[3] }

// Span is the number of bytes from the first to one past the last element
// (ggml_nbytes).
func (t *Tensor) Span() int { return span(t.Type, &t.Ne, &t.Nb) }

// span is Span of a tensor of type t, shape ne and strides nb. Generated
// code computes it for every tensor of every node (At), so it avoids
// multiplying out the element count and reads the type's traits once.
func span(t DType, ne, nb *[4]int) int {
	if ne[0] <= 0 || ne[1] <= 0 || ne[2] <= 0 || ne[3] <= 0 {
		return 0
	}
	tr := &types[t]
	n := tr.Size + (ne[0]-1)*nb[0]
	if tr.Block > 1 {
		n = ne[0] * nb[0] / tr.Block
	}
	return n + (ne[1]-1)*nb[1] + (ne[2]-1)*nb[2] + (ne[3]-1)*nb[3]
}

// ContiguousStrides returns the byte strides of a dense tensor of type t and shape ne.
func ContiguousStrides(t DType, ne [4]int) [4]int {
	var nb [4]int
	nb[0] = t.Size()
	nb[1] = t.RowSize(ne[0])
	for i := 2; i < 4; i++ {
		nb[i] = nb[i-1] * ne[i-1]
	}
	return nb
}

// F32s reinterprets the tensor's bytes as float32s (len(Data)/4 of them).
func (t *Tensor) F32s() []float32 { return castSlice[float32](t.Data) }

// F16s reinterprets the tensor's bytes as raw IEEE half floats.
func (t *Tensor) F16s() []uint16 { return castSlice[uint16](t.Data) }

// I32s reinterprets the tensor's bytes as int32s.
func (t *Tensor) I32s() []int32 { return castSlice[int32](t.Data) }

// F32Bytes is v's memory as bytes, 4·len(v) of them with v's whole
// capacity: float32s given back as tensor memory.
func F32Bytes(v []float32) []byte {
	if cap(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*cap(v))[:4*len(v)]
}

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
