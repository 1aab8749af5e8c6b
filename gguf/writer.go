package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"github.com/graphc/graphc/tensor"
	"io"
	"math"
	"math/bits"
)

// Writer writes a GGUF version 3 file: metadata pairs in the order they
// were added, then the tensor infos and the tensor data in the order the
// tensors were added, each tensor's data aligned and padded to the
// alignment as ggml's gguf_write_to_file does. The alignment is 32 unless
// a u32 general.alignment pair is added.
//
// Add* check their arguments and keep the tensor data slices, not copies,
// until WriteTo; the caller must not change them in between.
type Writer struct {
	meta      []KV
	metaIndex map[string]bool
	tensors   []TensorInfo
	data      [][]byte
	producers []func(io.Writer) error // per tensor, nil where data holds it
	names     map[string]bool
	alignment int64
}

// NewWriter returns an empty Writer.
func NewWriter() *Writer {
	return &Writer{metaIndex: map[string]bool{}, names: map[string]bool{}, alignment: DefaultAlignment}
}

// AddMeta adds a metadata pair. The value's Go type gives its GGUF type,
// as described at KV; an int or a map, for example, is an error.
func (w *Writer) AddMeta(key string, value any) error {
	switch {
	case key == "":
		return fmt.Errorf("gguf: metadata key is empty")
	case len(key) > MaxKeyLen:
		return fmt.Errorf("gguf: metadata key %.20q… is %d bytes, at most %d allowed", key, len(key), MaxKeyLen)
	case w.metaIndex[key]:
		return fmt.Errorf("gguf: duplicate metadata key %q", key)
	}
	if err := checkValue(value, 0); err != nil {
		return fmt.Errorf("gguf: metadata %q: %w", key, err)
	}
	if key == AlignmentKey {
		a, ok := value.(uint32)
		if !ok {
			return fmt.Errorf("gguf: %s is %T, want uint32", AlignmentKey, value)
		}
		if a == 0 || a&(a-1) != 0 {
			return fmt.Errorf("gguf: %s = %d is not a power of two", AlignmentKey, a)
		}
		w.alignment = int64(a)
	}
	w.metaIndex[key] = true
	w.meta = append(w.meta, KV{Key: key, Value: value})
	return nil
}

// checkValue checks that v has a GGUF type; depth counts enclosing arrays.
func checkValue(v any, depth int) error {
	t, elem, ok := valueTypeOf(v)
	if !ok {
		return fmt.Errorf("value of Go type %T has no GGUF type", v)
	}
	if t != TypeArray {
		return nil
	}
	if elem == TypeArray {
		// The reader's rule: an array at depth MaxArrayDepth may not
		// have arrays as elements, even none of them.
		if depth+1 >= MaxArrayDepth {
			return fmt.Errorf("arrays nested more than %d deep", MaxArrayDepth)
		}
		for i, e := range v.([]any) {
			if et, _, ok := valueTypeOf(e); ok && et != TypeArray {
				return fmt.Errorf("element %d of an array of arrays is %T, want a slice", i, e)
			}
			if err := checkValue(e, depth+1); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
	}
	return nil
}

// AddTensor adds a tensor of type typ and shape ne (ggml order, ne0
// fastest, 1 to 4 dimensions) whose data, len(data) bytes, must be exactly
// the tensor's size.
func (w *Writer) AddTensor(name string, typ tensor.DType, ne []int64, data []byte) error {
	t, err := w.tensorInfo(name, typ, ne)
	if err != nil {
		return err
	}
	if int64(len(data)) != t.Size {
		return fmt.Errorf("gguf: tensor %q: %d bytes of data, want %d for %s%s", name, len(data), t.Size, typ, shapeString(ne))
	}
	w.add(t, data, nil)
	return nil
}

// AddTensorFunc adds a tensor like AddTensor whose data produce writes
// when the file is written, exactly the tensor's size (WriteTo fails
// otherwise): a file of many gigabytes of generated or converted weights
// is written one tensor at a time instead of held in memory whole.
func (w *Writer) AddTensorFunc(name string, typ tensor.DType, ne []int64, produce func(io.Writer) error) error {
	t, err := w.tensorInfo(name, typ, ne)
	if err != nil {
		return err
	}
	w.add(t, nil, produce)
	return nil
}

func (w *Writer) add(t TensorInfo, data []byte, produce func(io.Writer) error) {
	w.names[t.Name] = true
	w.tensors = append(w.tensors, t)
	w.data = append(w.data, data)
	w.producers = append(w.producers, produce)
}

// tensorInfo validates a tensor's name, type and shape and returns its
// info without an offset.
func (w *Writer) tensorInfo(name string, typ tensor.DType, ne []int64) (TensorInfo, error) {
	switch {
	case len(name) > MaxNameLen:
		return TensorInfo{}, fmt.Errorf("gguf: tensor name %q is %d bytes, ggml allows at most %d", name, len(name), MaxNameLen)
	case w.names[name]:
		return TensorInfo{}, fmt.Errorf("gguf: duplicate tensor %q", name)
	case len(ne) == 0 || len(ne) > MaxDims:
		return TensorInfo{}, fmt.Errorf("gguf: tensor %q has %d dimensions, want 1 to %d", name, len(ne), MaxDims)
	case !typ.Known():
		return TensorInfo{}, fmt.Errorf("gguf: tensor %q: unknown ggml type id %d", name, uint32(typ))
	}
	t := TensorInfo{Name: name, Type: typ, NDims: len(ne), Ne: [4]int64{1, 1, 1, 1}}
	var nelem uint64 = 1
	for i, n := range ne {
		if n < 1 {
			return TensorInfo{}, fmt.Errorf("gguf: tensor %q: dimension %d is %d, want at least 1", name, i, n)
		}
		hi, lo := bits.Mul64(nelem, uint64(n))
		if hi != 0 || lo > math.MaxInt64 {
			return TensorInfo{}, fmt.Errorf("gguf: tensor %q: shape %s has more than 2^63-1 elements", name, shapeString(ne))
		}
		nelem = lo
		t.Ne[i] = n
	}
	if ne[0]%int64(typ.BlockSize()) != 0 {
		return TensorInfo{}, fmt.Errorf("gguf: tensor %q: ne0 = %d is not a multiple of %s's block size %d", name, ne[0], typ, typ.BlockSize())
	}
	hi, size := bits.Mul64(nelem/uint64(typ.BlockSize()), uint64(typ.Size()))
	if hi != 0 || size > math.MaxInt64 {
		return TensorInfo{}, fmt.Errorf("gguf: tensor %q: %s data of shape %s is more than 2^63-1 bytes", name, typ, shapeString(ne))
	}
	t.Size = int64(size)
	return t, nil
}

// WriteTo writes the file to out and returns the number of bytes written.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	e := &encoder{w: bufio.NewWriterSize(out, 64<<10)}
	e.raw([]byte(Magic))
	e.u32(Version)
	e.u64(uint64(len(w.tensors)))
	e.u64(uint64(len(w.meta)))
	for _, kv := range w.meta {
		e.str(kv.Key)
		t, _, _ := valueTypeOf(kv.Value)
		e.u32(uint32(t))
		e.value(kv.Value)
	}
	var off int64
	for _, t := range w.tensors {
		e.str(t.Name)
		e.u32(uint32(t.NDims))
		for _, n := range t.Ne[:t.NDims] {
			e.u64(uint64(n))
		}
		e.u32(uint32(t.Type))
		e.u64(uint64(off))
		off = alignUp(off+t.Size, w.alignment)
	}
	e.pad(w.alignment)
	for i, d := range w.data {
		if produce := w.producers[i]; produce != nil && e.err == nil {
			start := e.n
			if err := produce(encoderWriter{e}); err != nil && e.err == nil {
				e.err = fmt.Errorf("gguf: tensor %q: %w", w.tensors[i].Name, err)
			}
			if got := e.n - start; e.err == nil && got != w.tensors[i].Size {
				e.err = fmt.Errorf("gguf: tensor %q: %d bytes of data written, want %d", w.tensors[i].Name, got, w.tensors[i].Size)
			}
		} else {
			e.raw(d)
		}
		e.pad(w.alignment)
	}
	if e.err == nil {
		e.err = e.w.Flush()
	}
	return e.n, e.err
}

// encoder writes little-endian fields, counting bytes and keeping the
// first error.
// encoderWriter lets a tensor's producer write through the encoder, which
// counts the bytes and keeps the first error.
type encoderWriter struct{ e *encoder }

func (w encoderWriter) Write(b []byte) (int, error) {
	if w.e.err != nil {
		return 0, w.e.err
	}
	n := w.e.n
	w.e.raw(b)
	return int(w.e.n - n), w.e.err
}

type encoder struct {
	w       *bufio.Writer
	n       int64
	err     error
	scratch [8]byte
}

func (e *encoder) raw(b []byte) {
	if e.err != nil {
		return
	}
	var k int
	k, e.err = e.w.Write(b)
	e.n += int64(k)
}

func (e *encoder) u8(v uint8) {
	e.scratch[0] = v
	e.raw(e.scratch[:1])
}

func (e *encoder) u16(v uint16) {
	binary.LittleEndian.PutUint16(e.scratch[:], v)
	e.raw(e.scratch[:2])
}

func (e *encoder) u32(v uint32) {
	binary.LittleEndian.PutUint32(e.scratch[:], v)
	e.raw(e.scratch[:4])
}

func (e *encoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.scratch[:], v)
	e.raw(e.scratch[:8])
}

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	e.raw([]byte(s))
}

func (e *encoder) pad(a int64) {
	var zeros [64]byte
	for e.n%a != 0 && e.err == nil {
		e.raw(zeros[:min(a-e.n%a, int64(len(zeros)))])
	}
}

func (e *encoder) bool(b bool) {
	if b {
		e.u8(1)
	} else {
		e.u8(0)
	}
}

// value writes v, which checkValue accepted, without its type tag.
func (e *encoder) value(v any) {
	switch v := v.(type) {
	case uint8:
		e.u8(v)
	case int8:
		e.u8(uint8(v))
	case uint16:
		e.u16(v)
	case int16:
		e.u16(uint16(v))
	case uint32:
		e.u32(v)
	case int32:
		e.u32(uint32(v))
	case float32:
		e.u32(math.Float32bits(v))
	case bool:
		e.bool(v)
	case string:
		e.str(v)
	case uint64:
		e.u64(v)
	case int64:
		e.u64(uint64(v))
	case float64:
		e.u64(math.Float64bits(v))
	default:
		_, elem, _ := valueTypeOf(v)
		e.u32(uint32(elem))
		switch v := v.(type) {
		case []uint8:
			e.u64(uint64(len(v)))
			e.raw(v)
		case []int8:
			writeArray(e, v)
		case []uint16:
			writeArray(e, v)
		case []int16:
			writeArray(e, v)
		case []uint32:
			writeArray(e, v)
		case []int32:
			writeArray(e, v)
		case []float32:
			writeArray(e, v)
		case []bool:
			writeArray(e, v)
		case []string:
			writeArray(e, v)
		case []uint64:
			writeArray(e, v)
		case []int64:
			writeArray(e, v)
		case []float64:
			writeArray(e, v)
		case []any:
			writeArray(e, v)
		default:
			panic(fmt.Sprintf("BUG: encoder.value of %T", v))
		}
	}
}

func writeArray[T any](e *encoder, v []T) {
	e.u64(uint64(len(v)))
	for _, x := range v {
		e.value(x)
	}
}
