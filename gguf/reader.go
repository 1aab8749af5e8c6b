package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/graphc/graphc/tensor"
	"io"
	"math"
	"math/bits"
	"sort"
	"strings"
	"unsafe"
)

const (
	// Magic is the four bytes a GGUF file starts with.
	Magic = "GGUF"
	// Version is the version Writer writes. Parse reads versions 2 and 3,
	// which have the same little-endian layout.
	Version = 3
	// DefaultAlignment is the alignment of the data section and of every
	// tensor's data when the file has no general.alignment.
	DefaultAlignment = 32
	// AlignmentKey is the metadata key that sets the alignment (a u32).
	AlignmentKey = "general.alignment"
	// MaxDims is the most dimensions a tensor has (GGML_MAX_DIMS).
	MaxDims = 4
	// MaxNameLen is the longest tensor name ggml accepts, in bytes
	// (GGML_MAX_NAME less its terminating NUL).
	MaxNameLen = 63
	// MaxKeyLen is the longest metadata key the format allows, in bytes.
	MaxKeyLen = 65535
	// MaxArrayDepth is how deeply Parse lets metadata arrays nest.
	MaxArrayDepth = 16

	headerSize = 4 + 4 + 8 + 8
	// The fewest bytes a metadata pair (8-byte key length, 1-byte key,
	// type, 1-byte value) and a tensor info (name length, n_dims, one dim,
	// type, offset) take; counts in the header are checked against them
	// before anything is read.
	minKVSize         = 8 + 1 + 4 + 1
	minTensorInfoSize = 8 + 4 + 8 + 4 + 8
)

// File is a parsed GGUF file: its header, metadata and tensor infos. It
// holds no tensor data; Open's Mapped adds that.
type File struct {
	Version uint32
	// Meta holds the metadata pairs in file order.
	Meta []KV
	// Tensors holds the tensor infos in file order.
	Tensors []TensorInfo
	// Alignment is general.alignment, or DefaultAlignment.
	Alignment int64
	// DataOffset is the file offset of the data section: the end of the
	// tensor infos rounded up to Alignment. TensorInfo.Offset is relative
	// to it.
	DataOffset int64
	// Size is the size of the file in bytes.
	Size int64

	tensorIndex map[string]int
	metaIndex   map[string]int
}

// KV is a metadata pair. Value's Go type gives its GGUF type: uint8, int8,
// uint16, int16, uint32, int32, float32, bool, string, uint64, int64 and
// float64 are the scalars; a slice of one of those ([]uint32, []string, …)
// is an array of it; []any is an array of arrays, each element such a
// slice or another []any.
type KV struct {
	Key   string
	Value any
}

// Type is the value's GGUF type (TypeArray for every array).
func (kv KV) Type() ValueType {
	t, _, _ := valueTypeOf(kv.Value)
	return t
}

// TensorInfo describes one tensor: its name, type, shape and where its
// data lies.
type TensorInfo struct {
	Name string
	Type tensor.DType
	// NDims is the number of dimensions stored in the file (1 to 4).
	NDims int
	// Ne is the shape in ggml order, ne0 fastest; dimensions past NDims are 1.
	Ne [4]int64
	// Offset is the offset of the data from File.DataOffset, a multiple of
	// File.Alignment.
	Offset int64
	// Size is the size of the data in bytes: NElem/BlockSize*TypeSize.
	Size int64
}

// NElem is the number of elements.
func (t *TensorInfo) NElem() int64 { return t.Ne[0] * t.Ne[1] * t.Ne[2] * t.Ne[3] }

// String prints the tensor as "name type[ne0, ne1, …]".
func (t *TensorInfo) String() string {
	return t.Name + " " + t.Type.String() + shapeString(t.Ne[:max(t.NDims, 1)])
}

func shapeString[I int | int64 | uint64](ne []I) string {
	s := make([]string, len(ne))
	for i, n := range ne {
		s[i] = fmt.Sprint(n)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// Lookup returns the tensor named name.
func (f *File) Lookup(name string) (*TensorInfo, bool) {
	i, ok := f.tensorIndex[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// MetaValue returns the value of the metadata key (see KV for its Go
// type). Arrays are shared with f, not copied.
func (f *File) MetaValue(key string) (any, bool) {
	i, ok := f.metaIndex[key]
	if !ok {
		return nil, false
	}
	return f.Meta[i].Value, true
}

// MetaString returns the metadata key's value if it is a string.
func (f *File) MetaString(key string) (string, bool) {
	v, _ := f.MetaValue(key)
	s, ok := v.(string)
	return s, ok
}

// MetaInt returns the metadata key's value if it is an integer of any
// width that fits in an int64; GGUF writers store counts as u32 or u64.
func (f *File) MetaInt(key string) (int64, bool) {
	v, _ := f.MetaValue(key)
	switch v := v.(type) {
	case uint8:
		return int64(v), true
	case int8:
		return int64(v), true
	case uint16:
		return int64(v), true
	case int16:
		return int64(v), true
	case uint32:
		return int64(v), true
	case int32:
		return int64(v), true
	case uint64:
		return int64(v), v <= math.MaxInt64
	case int64:
		return v, true
	}
	return 0, false
}

// Parse reads and validates the GGUF file of size bytes that r holds. It
// reads only the header, metadata and tensor infos, and checks that every
// tensor's data lies, aligned and without overlapping another's, inside
// the file. Problems are *FormatError values; every tensor problem is
// reported at once.
func Parse(r io.ReaderAt, size int64) (*File, error) {
	return parse(r, size, "")
}

func parse(r io.ReaderAt, size int64, name string) (*File, error) {
	if size < 0 {
		return nil, &FormatError{File: name, Offset: -1, Msg: fmt.Sprintf("negative file size %d", size)}
	}
	d := &decoder{
		br:   bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 64<<10),
		size: size,
		errs: errorList{file: name},
	}
	f, err := d.file()
	if err != nil {
		return nil, err
	}
	if err := d.errs.err(); err != nil {
		return nil, err
	}
	return f, nil
}

// errStop ends decoding after a problem that leaves the rest of the file
// unreadable; the problem itself is in decoder.errs.
var errStop = errors.New("stop")

// decoder reads a GGUF file front to back, checking every length against
// the bytes left before it reads or allocates.
type decoder struct {
	br      *bufio.Reader
	off     int64
	size    int64
	scratch [8]byte
	errs    errorList
}

func (d *decoder) left() int64 { return d.size - d.off }

// stop records a problem after which nothing more can be read.
func (d *decoder) stop(tensor string, off int64, format string, args ...any) error {
	d.errs.add(tensor, off, format, args...)
	return errStop
}

// read fills p, which the caller has checked fits in the bytes left.
func (d *decoder) read(p []byte) error {
	if _, err := io.ReadFull(d.br, p); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return d.stop("", d.off, "file is shorter than its stated size %d", d.size)
		}
		if d.errs.file != "" {
			return fmt.Errorf("gguf: %s: reading at byte %d: %w", d.errs.file, d.off, err)
		}
		return fmt.Errorf("gguf: reading at byte %d: %w", d.off, err)
	}
	d.off += int64(len(p))
	return nil
}

// fixed reads n ≤ 8 bytes into the scratch buffer; what names the field
// for the message if the file ends first.
func (d *decoder) fixed(n int, what string) ([]byte, error) {
	if int64(n) > d.left() {
		return nil, d.stop("", d.off, "truncated %s: need %d bytes, the file has %d left", what, n, d.left())
	}
	b := d.scratch[:n]
	return b, d.read(b)
}

func (d *decoder) u32(what string) (uint32, error) {
	b, err := d.fixed(4, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (d *decoder) u64(what string) (uint64, error) {
	b, err := d.fixed(8, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// str reads a length-prefixed string of at most maxLen bytes.
func (d *decoder) str(what string, maxLen uint64) (string, error) {
	return d.strElem(what, -1, maxLen)
}

// strElem reads a string; elem ≥ 0 is its index in an array, which joins
// what in messages (formatted only then: vocabularies have 10⁵ strings).
func (d *decoder) strElem(what string, elem int64, maxLen uint64) (string, error) {
	at := d.off
	if d.left() < 8 {
		if elem >= 0 {
			what = fmt.Sprintf("%s[%d]", what, elem)
		}
		return "", d.stop("", at, "truncated %s length: need 8 bytes, the file has %d left", what, d.left())
	}
	n, err := d.u64("") // cannot be truncated
	if err != nil {
		return "", err
	}
	if elem >= 0 && (n > uint64(d.left()) || n > maxLen) {
		what = fmt.Sprintf("%s[%d]", what, elem)
	}
	if n > uint64(d.left()) {
		return "", d.stop("", at, "%s: string length %d is past the end of the file (%d bytes left)", what, n, d.left())
	}
	if n > maxLen {
		return "", d.stop("", at, "%s: string length %d exceeds the limit of %d bytes", what, n, maxLen)
	}
	if n == 0 {
		return "", nil
	}
	b := make([]byte, n)
	if err := d.read(b); err != nil {
		return "", err
	}
	return unsafe.String(&b[0], len(b)), nil // b is not used again
}

func (d *decoder) file() (*File, error) {
	f := &File{Size: d.size, tensorIndex: map[string]int{}, metaIndex: map[string]int{}}
	if err := d.header(f); err != nil {
		return nil, ignoreStop(err)
	}
	nTensors, nKV, err := d.counts()
	if err != nil {
		return nil, ignoreStop(err)
	}
	for i := uint64(0); i < nKV; i++ {
		if err := d.kv(f, i); err != nil {
			return nil, ignoreStop(err)
		}
	}
	if err := d.alignment(f); err != nil {
		return nil, ignoreStop(err)
	}
	if nTensors > uint64(d.left())/minTensorInfoSize {
		return nil, ignoreStop(d.stop("", 8, "tensor count %d is more than the %d bytes after the metadata can hold (a tensor info takes at least %d bytes)", nTensors, d.left(), minTensorInfoSize))
	}
	for i := uint64(0); i < nTensors; i++ {
		if err := d.tensorInfo(f, i); err != nil {
			return nil, ignoreStop(err)
		}
	}
	f.DataOffset = alignUp(d.off, f.Alignment)
	d.checkData(f)
	return f, nil
}

// ignoreStop turns errStop into nil (the problem is in decoder.errs) and
// passes I/O errors through.
func ignoreStop(err error) error {
	if err == errStop {
		return nil
	}
	return err
}

func (d *decoder) header(f *File) error {
	if d.size >= 4 {
		magic := make([]byte, 4)
		if err := d.read(magic); err != nil {
			return err
		}
		if string(magic) != Magic {
			return d.stop("", 0, "not a GGUF file: magic %q, want %q", magic, Magic)
		}
	}
	if d.size < headerSize {
		return d.stop("", -1, "truncated header: the file is %d bytes, a GGUF header needs %d", d.size, headerSize)
	}
	v, err := d.u32("version")
	if err != nil {
		return err
	}
	switch {
	case v == 2 || v == 3:
	case v == 1:
		return d.stop("", 4, "GGUF version 1 is not supported (it used 32-bit counts; this reader reads versions 2 and 3; convert the model again with a current llama.cpp)")
	case bits.ReverseBytes32(v) == 2 || bits.ReverseBytes32(v) == 3:
		return d.stop("", 4, "GGUF version %d read as 0x%08x: a big-endian file, which is not supported", bits.ReverseBytes32(v), v)
	default:
		return d.stop("", 4, "unsupported GGUF version %d, want 2 or 3", v)
	}
	f.Version = v
	return nil
}

func (d *decoder) counts() (nTensors, nKV uint64, err error) {
	if nTensors, err = d.u64("tensor count"); err != nil {
		return
	}
	if nKV, err = d.u64("metadata count"); err != nil {
		return
	}
	left := uint64(d.left())
	if nKV > left/minKVSize {
		return 0, 0, d.stop("", 16, "metadata count %d is more than the %d bytes after the header can hold (a pair takes at least %d bytes)", nKV, left, minKVSize)
	}
	if nTensors > left/minTensorInfoSize {
		return 0, 0, d.stop("", 8, "tensor count %d is more than the %d bytes after the header can hold (a tensor info takes at least %d bytes)", nTensors, left, minTensorInfoSize)
	}
	return nTensors, nKV, nil
}

func (d *decoder) kv(f *File, i uint64) error {
	at := d.off
	key, err := d.str(fmt.Sprintf("metadata key %d", i), MaxKeyLen)
	if err != nil {
		return err
	}
	if key == "" {
		return d.stop("", at, "metadata key %d is empty", i)
	}
	if j, dup := f.metaIndex[key]; dup {
		return d.stop("", at, "duplicate metadata key %q (pairs %d and %d)", key, j, i)
	}
	what := fmt.Sprintf("metadata %q", key)
	t, err := d.u32(what + " type")
	if err != nil {
		return err
	}
	v, err := d.value(what, ValueType(t), 0)
	if err != nil {
		return err
	}
	f.metaIndex[key] = len(f.Meta)
	f.Meta = append(f.Meta, KV{Key: key, Value: v})
	return nil
}

// value reads one value of type t; depth counts the arrays around it.
func (d *decoder) value(what string, t ValueType, depth int) (any, error) {
	at := d.off
	switch t {
	case TypeString:
		return d.str(what, math.MaxUint64)
	case TypeArray:
		return d.array(what, depth+1)
	case TypeBool:
		b, err := d.fixed(1, what)
		if err != nil {
			return nil, err
		}
		if b[0] > 1 {
			return nil, d.stop("", at, "%s: bool value %d, want 0 or 1", what, b[0])
		}
		return b[0] == 1, nil
	}
	n := t.fixedSize()
	if n == 0 {
		return nil, d.stop("", at-4, "%s: unknown value type %d", what, uint32(t))
	}
	b, err := d.fixed(int(n), what)
	if err != nil {
		return nil, err
	}
	return decodeScalar(t, b), nil
}

func decodeScalar(t ValueType, b []byte) any {
	le := binary.LittleEndian
	switch t {
	case TypeUint8:
		return b[0]
	case TypeInt8:
		return int8(b[0])
	case TypeUint16:
		return le.Uint16(b)
	case TypeInt16:
		return int16(le.Uint16(b))
	case TypeUint32:
		return le.Uint32(b)
	case TypeInt32:
		return int32(le.Uint32(b))
	case TypeFloat32:
		return math.Float32frombits(le.Uint32(b))
	case TypeUint64:
		return le.Uint64(b)
	case TypeInt64:
		return int64(le.Uint64(b))
	case TypeFloat64:
		return math.Float64frombits(le.Uint64(b))
	}
	panic("BUG: decodeScalar of " + t.String())
}

// array reads an array's element type, length and elements.
func (d *decoder) array(what string, depth int) (any, error) {
	at := d.off
	et32, err := d.u32(what + " array type")
	if err != nil {
		return nil, err
	}
	et := ValueType(et32)
	n, err := d.u64(what + " array length")
	if err != nil {
		return nil, err
	}
	var minSize int64
	switch et {
	case TypeString:
		minSize = 8
	case TypeArray:
		if depth >= MaxArrayDepth {
			return nil, d.stop("", at, "%s: arrays nested more than %d deep", what, MaxArrayDepth)
		}
		minSize = 4 + 8
	default:
		minSize = et.fixedSize()
		if minSize == 0 {
			return nil, d.stop("", at, "%s: unknown array element type %d", what, et32)
		}
	}
	if n > uint64(d.left()/minSize) {
		return nil, d.stop("", at, "%s: array length %d is past the end of the file (%s elements take at least %d bytes each, %d bytes left)", what, n, et, minSize, d.left())
	}
	le := binary.LittleEndian
	switch et {
	case TypeUint8:
		return readFixed(d, n, 1, func(b []byte) uint8 { return b[0] })
	case TypeInt8:
		return readFixed(d, n, 1, func(b []byte) int8 { return int8(b[0]) })
	case TypeUint16:
		return readFixed(d, n, 2, le.Uint16)
	case TypeInt16:
		return readFixed(d, n, 2, func(b []byte) int16 { return int16(le.Uint16(b)) })
	case TypeUint32:
		return readFixed(d, n, 4, le.Uint32)
	case TypeInt32:
		return readFixed(d, n, 4, func(b []byte) int32 { return int32(le.Uint32(b)) })
	case TypeFloat32:
		return readFixed(d, n, 4, func(b []byte) float32 { return math.Float32frombits(le.Uint32(b)) })
	case TypeUint64:
		return readFixed(d, n, 8, le.Uint64)
	case TypeInt64:
		return readFixed(d, n, 8, func(b []byte) int64 { return int64(le.Uint64(b)) })
	case TypeFloat64:
		return readFixed(d, n, 8, func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) })
	case TypeBool:
		bad := -1
		v, err := readFixed(d, n, 1, func(b []byte) bool {
			if b[0] > 1 && bad < 0 {
				bad = int(b[0])
			}
			return b[0] == 1
		})
		if err == nil && bad >= 0 {
			return nil, d.stop("", at, "%s: array holds bool value %d, want 0 or 1", what, bad)
		}
		return v, err
	case TypeString:
		out := make([]string, 0, min(n, 1<<16))
		for i := uint64(0); i < n; i++ {
			s, err := d.strElem(what, int64(i), math.MaxUint64)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	case TypeArray:
		out := make([]any, 0, min(n, 1<<10))
		for i := uint64(0); i < n; i++ {
			v, err := d.array(fmt.Sprintf("%s[%d]", what, i), depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	panic("BUG: array of " + et.String())
}

// readFixed reads n elements of size bytes each, which the caller has
// checked fit in the file, in chunks through a small buffer.
func readFixed[T any](d *decoder, n uint64, size int, conv func([]byte) T) ([]T, error) {
	out := make([]T, n)
	var buf [4096]byte
	per := len(buf) / size
	for i := 0; i < len(out); i += per {
		k := min(per, len(out)-i)
		b := buf[:k*size]
		if err := d.read(b); err != nil {
			return nil, err
		}
		for j := range k {
			out[i+j] = conv(b[j*size:])
		}
	}
	return out, nil
}

func (d *decoder) alignment(f *File) error {
	f.Alignment = DefaultAlignment
	v, ok := f.MetaValue(AlignmentKey)
	if !ok {
		return nil
	}
	a, ok := v.(uint32)
	if !ok {
		return d.stop("", -1, "%s is %s, want u32", AlignmentKey, KV{Value: v}.Type())
	}
	if a == 0 || a&(a-1) != 0 {
		return d.stop("", -1, "%s = %d is not a power of two", AlignmentKey, a)
	}
	f.Alignment = int64(a)
	return nil
}

// tensorInfo reads tensor info i. Problems with the name's uniqueness,
// the shape, the type or the offset are recorded and reading goes on;
// only a truncated record or an impossible n_dims stop it.
func (d *decoder) tensorInfo(f *File, i uint64) error {
	at := d.off
	name, err := d.str(fmt.Sprintf("tensor info %d: name", i), math.MaxUint64)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("tensor info %d (%q)", i, name)
	nDims, err := d.u32(what + " n_dims")
	if err != nil {
		return err
	}
	if nDims == 0 || nDims > MaxDims {
		return d.stop(name, at, "n_dims = %d, want 1 to %d", nDims, MaxDims)
	}
	t := TensorInfo{Name: name, NDims: int(nDims), Ne: [4]int64{1, 1, 1, 1}}
	var ne [4]uint64
	for j := range nDims {
		if ne[j], err = d.u64(fmt.Sprintf("%s dimension %d", what, j)); err != nil {
			return err
		}
	}
	typ, err := d.u32(what + " type")
	if err != nil {
		return err
	}
	t.Type = tensor.DType(typ)
	off, err := d.u64(what + " offset")
	if err != nil {
		return err
	}

	ok := true // no problem found in this tensor yet
	bad := func(format string, args ...any) {
		d.errs.add(name, at, format, args...)
		ok = false
	}
	if len(name) > MaxNameLen {
		bad("name is %d bytes, ggml allows at most %d", len(name), MaxNameLen)
	}
	if j, dup := f.tensorIndex[name]; dup {
		bad("duplicate tensor name (tensor infos %d and %d)", j, i)
	} else {
		f.tensorIndex[name] = len(f.Tensors)
	}
	shapeOK := true
	for j := range nDims {
		switch {
		case ne[j] == 0:
			bad("dimension %d is 0, want at least 1", j)
			shapeOK = false
		case ne[j] > math.MaxInt64:
			bad("dimension %d is %d, more than 2^63-1", j, ne[j])
			shapeOK = false
		default:
			t.Ne[j] = int64(ne[j])
		}
	}
	var nelem uint64 = 1
	for j := range nDims {
		if !shapeOK {
			break
		}
		hi, lo := bits.Mul64(nelem, max(ne[j], 1))
		if hi != 0 || lo > math.MaxInt64 {
			bad("shape %s has more than 2^63-1 elements", shapeString(ne[:nDims]))
			shapeOK = false
			break
		}
		nelem = lo
	}
	switch {
	case !t.Type.Known():
		bad("unknown ggml type id %d", typ)
	case shapeOK && t.Ne[0]%int64(t.Type.BlockSize()) != 0:
		bad("ne0 = %d is not a multiple of %s's block size %d", t.Ne[0], t.Type, t.Type.BlockSize())
	case shapeOK:
		hi, lo := bits.Mul64(nelem/uint64(t.Type.BlockSize()), uint64(t.Type.Size()))
		if hi != 0 || lo > math.MaxInt64 {
			bad("%s data of shape %s is more than 2^63-1 bytes", t.Type, shapeString(t.Ne[:nDims]))
		} else {
			t.Size = int64(lo)
		}
	}
	if off%uint64(f.Alignment) != 0 {
		bad("data offset %d is not a multiple of the alignment %d", off, f.Alignment)
	}
	if off > math.MaxInt64 {
		bad("data offset %d is more than 2^63-1", off)
	} else {
		t.Offset = int64(off)
	}
	if !ok {
		t.Size = 0 // marks a tensor checkData skips
	}
	f.Tensors = append(f.Tensors, t)
	return nil
}

// checkData checks that every tensor's data lies inside the file and that
// no two tensors' data overlap.
func (d *decoder) checkData(f *File) {
	var valid []int
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if t.Size == 0 {
			continue // already reported
		}
		room := d.size - f.DataOffset // may be negative when padding is missing
		if room < 0 || t.Offset > room || t.Size > room-t.Offset {
			d.errs.add(t.Name, -1, "%d bytes of data at offset %d (file bytes %d to %d) end past the end of the file (%d bytes)",
				t.Size, t.Offset, uint64(f.DataOffset)+uint64(t.Offset), uint64(f.DataOffset)+uint64(t.Offset)+uint64(t.Size), d.size)
			continue
		}
		valid = append(valid, i)
	}
	sort.SliceStable(valid, func(a, b int) bool { return f.Tensors[valid[a]].Offset < f.Tensors[valid[b]].Offset })
	last := -1 // the tensor whose data ends furthest so far
	for _, i := range valid {
		t := &f.Tensors[i]
		if last >= 0 {
			p := &f.Tensors[last]
			if t.Offset < p.Offset+p.Size {
				d.errs.add(t.Name, -1, "data [%d, %d) overlaps the data of tensor %q [%d, %d) (offsets from the data section)",
					t.Offset, t.Offset+t.Size, p.Name, p.Offset, p.Offset+p.Size)
			}
			if t.Offset+t.Size <= p.Offset+p.Size {
				continue
			}
		}
		last = i
	}
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }
