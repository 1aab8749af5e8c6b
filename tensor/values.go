package tensor

import (
	"fmt"
	"math"
)

// At returns the tensor of type t, shape ne and strides nb whose first
// element is at byte off of buf. Generated code uses it for every tensor
// that lives in a planned buffer.
func At(buf []byte, off int, t DType, ne, nb [4]int) Tensor {
	return Tensor{Type: t, Ne: ne, Nb: nb, Data: buf[off : off+span(t, &ne, &nb)]}
}

// Dense returns the contiguous tensor of type t and shape ne whose first
// element is at byte off of buf.
func Dense(buf []byte, off int, t DType, ne [4]int) Tensor {
	return At(buf, off, t, ne, ContiguousStrides(t, ne))
}

// Clone returns a contiguous copy of t with its own memory, so callers may
// keep results while the compute buffers are reused.
func Clone(t *Tensor) Tensor {
	c := NewTensor(t.Type, t.Ne)
	Copy(&c, t)
	return c
}

// Float64 returns element i (flat, row-major ggml order) of a contiguous
// tensor as float64, whatever its type.
func (t *Tensor) Float64(i int) float64 {
	switch t.Type {
	case F32:
		return float64(t.F32s()[i])
	case F16:
		return float64(F16ToF32(t.F16s()[i]))
	case I32:
		return float64(t.I32s()[i])
	}
	panic("BUG: Float64 of " + t.Type.String())
}

// FillFunc computes element i, at coordinates c, of a tensor being filled.
type FillFunc func(i int, c [4]int) float64

// Fill sets every element of a contiguous tensor from f, evaluated in
// float64 and converted to the tensor's type (f16 rounded to nearest).
func Fill(t *Tensor, f FillFunc) {
	i := 0
	for i3 := 0; i3 < t.Ne[3]; i3++ {
		for i2 := 0; i2 < t.Ne[2]; i2++ {
			for i1 := 0; i1 < t.Ne[1]; i1++ {
				for i0 := 0; i0 < t.Ne[0]; i0++ {
					v := f(i, [4]int{i0, i1, i2, i3})
					switch t.Type {
					case F32:
						t.F32s()[i] = float32(v)
					case F16:
						t.F16s()[i] = F32ToF16(float32(v))
					case I32:
						t.I32s()[i] = int32(v)
					}
					i++
				}
			}
		}
	}
}

// GGMLFill is the conformance traces' fill rule for the k-th declared
// weight or state tensor: element i = (float)(sin(i*0.01 + k)*0.1),
// computed in double, f16 tensors rounded with ggml's fp32→fp16.
func GGMLFill(k int) FillFunc {
	return func(i int, _ [4]int) float64 {
		return float64(float32(math.Sin(float64(i)*0.01+float64(k)) * 0.1))
	}
}

// NewTensor allocates a zeroed contiguous tensor.
func NewTensor(t DType, ne [4]int) Tensor {
	v := Tensor{Type: t, Ne: ne, Nb: ContiguousStrides(t, ne)}
	v.Data = NewBuffer(v.Span())
	return v
}

// Copy copies src's elements into dst in logical (row-major ggml) order:
// same type and element count, any strides (block-quantized tensors must
// be contiguous). It is the synchronous copy between host-visible buffers.
func Copy(dst, src *Tensor) {
	if dst.Type != src.Type || dst.NElem() != src.NElem() {
		panic(fmt.Sprintf("BUG: Copy %s%v into %s%v", src.Type, src.Ne, dst.Type, dst.Ne))
	}
	if SameLayout(dst, src) || dst.Contiguous() && src.Contiguous() {
		n := src.Span()
		copy(dst.Data[:n], src.Data[:n])
		return
	}
	if dst.Type.Quantized() {
		panic(fmt.Sprintf("BUG: Copy of strided %s tensors", dst.Type))
	}
	es := dst.Type.Size()
	d, s := cursor{t: dst}, cursor{t: src}
	for n := src.NElem(); n > 0; n-- {
		do, so := d.next(), s.next()
		copy(dst.Data[do:do+es], src.Data[so:so+es])
	}
}

// SameLayout reports whether a and b have the same type, shape and strides.
func SameLayout(a, b *Tensor) bool {
	return a.Type == b.Type && a.Ne == b.Ne && a.Nb == b.Nb
}

// cursor walks a tensor's element offsets in logical order.
type cursor struct {
	t   *Tensor
	i   [4]int
	off int
}

// next returns the current element's byte offset and advances.
func (c *cursor) next() int {
	off := c.off
	for d := 0; d < 4; d++ {
		c.i[d]++
		c.off += c.t.Nb[d]
		if c.i[d] < c.t.Ne[d] {
			break
		}
		c.off -= c.i[d] * c.t.Nb[d]
		c.i[d] = 0
	}
	return off
}
