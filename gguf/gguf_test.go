package gguf_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/tensor"
)

// allValues is a metadata value of every type, arrays of every element
// type (some empty), and nested arrays.
var allValues = []gguf.KV{
	{Key: "general.architecture", Value: "llama"},
	{Key: "t.u8", Value: uint8(200)},
	{Key: "t.i8", Value: int8(-100)},
	{Key: "t.u16", Value: uint16(60000)},
	{Key: "t.i16", Value: int16(-30000)},
	{Key: "t.u32", Value: uint32(4000000000)},
	{Key: "t.i32", Value: int32(-2000000000)},
	{Key: "t.f32", Value: float32(1.5e-5)},
	{Key: "t.bool", Value: true},
	{Key: "t.bool_false", Value: false},
	{Key: "t.string", Value: "héllo, wörld"},
	{Key: "t.empty_string", Value: ""},
	{Key: "t.u64", Value: uint64(math.MaxUint64)},
	{Key: "t.i64", Value: int64(math.MinInt64)},
	{Key: "t.f64", Value: math.Pi},
	{Key: "t.arr.u8", Value: []uint8{1, 2, 255}},
	{Key: "t.arr.i8", Value: []int8{-1, 0, 127}},
	{Key: "t.arr.u16", Value: []uint16{1, 65535}},
	{Key: "t.arr.i16", Value: []int16{-32768, 5}},
	{Key: "t.arr.u32", Value: []uint32{7, 8, 9}},
	{Key: "t.arr.i32", Value: []int32{-7, 1 << 30}},
	{Key: "t.arr.f32", Value: []float32{0.5, -2, float32(math.Inf(1))}},
	{Key: "t.arr.bool", Value: []bool{true, false, true}},
	{Key: "tokenizer.ggml.tokens", Value: []string{"<s>", "</s>", "", "▁the"}},
	{Key: "t.arr.u64", Value: []uint64{math.MaxUint64, 0}},
	{Key: "t.arr.i64", Value: []int64{math.MinInt64, math.MaxInt64}},
	{Key: "t.arr.f64", Value: []float64{1e300, -0.25}},
	{Key: "t.arr.empty", Value: []float32{}},
	{Key: "t.arr.nested", Value: []any{[]uint32{1, 2}, []string{"a", "b"}, []any{[]bool{true}, []any{}}, []int8{}}},
}

// testTensors are a few tensors of different types, shapes and sizes.
func testTensors() []struct {
	name string
	typ  tensor.DType
	ne   []int64
	data []byte
} {
	mk := func(n int, seed byte) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i)*7 + seed
		}
		return b
	}
	return []struct {
		name string
		typ  tensor.DType
		ne   []int64
		data []byte
	}{
		{"token_embd.weight", tensor.F32, []int64{8, 5}, mk(8*5*4, 1)},
		{"blk.0.attn_norm.weight", tensor.F32, []int64{8}, mk(8*4, 2)},
		{"blk.0.attn_q.weight", tensor.F16, []int64{8, 8}, mk(8*8*2, 3)},
		{"blk.0.ffn_up.weight", tensor.Q8_0, []int64{64, 3}, mk(2*3*34, 4)},
		{"blk.0.ffn_down.weight", tensor.Q4_K, []int64{256, 1, 2}, mk(2*144, 5)},
		{"pos", tensor.I32, []int64{3, 1, 1, 2}, mk(6*4, 6)},
	}
}

// writeTest writes allValues and testTensors with the given alignment (0:
// no general.alignment pair).
func writeTest(t testing.TB, alignment uint32) []byte {
	t.Helper()
	w := gguf.NewWriter()
	if alignment != 0 {
		must(t, w.AddMeta(gguf.AlignmentKey, alignment))
	}
	for _, kv := range allValues {
		must(t, w.AddMeta(kv.Key, kv.Value))
	}
	for _, tt := range testTensors() {
		must(t, w.AddTensor(tt.name, tt.typ, tt.ne, tt.data))
	}
	var buf bytes.Buffer
	n, err := w.WriteTo(&buf)
	must(t, err)
	if n != int64(buf.Len()) {
		t.Fatalf("WriteTo returned %d, wrote %d bytes", n, buf.Len())
	}
	return buf.Bytes()
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func parseBytes(b []byte) (*gguf.File, error) {
	return gguf.Parse(bytes.NewReader(b), int64(len(b)))
}

func TestRoundTrip(t *testing.T) {
	for _, align := range []uint32{0, 32, 64} {
		t.Run(map[uint32]string{0: "default", 32: "32", 64: "64"}[align], func(t *testing.T) {
			b := writeTest(t, align)
			f, err := parseBytes(b)
			must(t, err)
			want := int64(align)
			if align == 0 {
				want = gguf.DefaultAlignment
			}
			if f.Version != 3 || f.Alignment != want || f.Size != int64(len(b)) {
				t.Errorf("version %d, alignment %d, size %d; want 3, %d, %d", f.Version, f.Alignment, f.Size, want, len(b))
			}
			wantMeta := allValues
			if align != 0 {
				wantMeta = append([]gguf.KV{{Key: gguf.AlignmentKey, Value: align}}, allValues...)
			}
			if diff := cmp.Diff(wantMeta, f.Meta); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
			if f.DataOffset%want != 0 {
				t.Errorf("data offset %d not aligned to %d", f.DataOffset, want)
			}
			tts := testTensors()
			if len(f.Tensors) != len(tts) {
				t.Fatalf("%d tensors, want %d", len(f.Tensors), len(tts))
			}
			for i, tt := range tts {
				ti, ok := f.Lookup(tt.name)
				if !ok || ti != &f.Tensors[i] {
					t.Fatalf("Lookup(%q) = %v, %v; want tensor %d", tt.name, ti, ok, i)
				}
				var ne [4]int64
				for j := range ne {
					ne[j] = 1
				}
				copy(ne[:], tt.ne)
				if ti.Type != tt.typ || ti.Ne != ne || ti.NDims != len(tt.ne) || ti.Size != int64(len(tt.data)) {
					t.Errorf("tensor %s: got %s ndims %d size %d, want %s%v size %d", tt.name, ti, ti.NDims, ti.Size, tt.typ, tt.ne, len(tt.data))
				}
				if ti.Offset%want != 0 {
					t.Errorf("tensor %s: offset %d not aligned to %d", tt.name, ti.Offset, want)
				}
				start := f.DataOffset + ti.Offset
				if got := b[start : start+ti.Size]; !bytes.Equal(got, tt.data) {
					t.Errorf("tensor %s: data differs", tt.name)
				}
			}
			if len(b)%int(want) != 0 {
				t.Errorf("file size %d is not padded to %d", len(b), want)
			}
			// Writing what was read gives the same bytes.
			w := gguf.NewWriter()
			for _, kv := range f.Meta {
				must(t, w.AddMeta(kv.Key, kv.Value))
			}
			for _, ti := range f.Tensors {
				start := f.DataOffset + ti.Offset
				must(t, w.AddTensor(ti.Name, ti.Type, ti.Ne[:ti.NDims], b[start:start+ti.Size]))
			}
			var again bytes.Buffer
			_, err = w.WriteTo(&again)
			must(t, err)
			if !bytes.Equal(again.Bytes(), b) {
				t.Errorf("rewriting the parsed file changed its bytes")
			}
		})
	}
}

func TestMetaAccessors(t *testing.T) {
	f, err := parseBytes(writeTest(t, 0))
	must(t, err)
	if v, ok := f.MetaValue("tokenizer.ggml.tokens"); !ok || !reflect.DeepEqual(v, []string{"<s>", "</s>", "", "▁the"}) {
		t.Errorf("MetaValue(tokens) = %v, %v", v, ok)
	}
	if _, ok := f.MetaValue("nope"); ok {
		t.Errorf("MetaValue(nope) found")
	}
	if s, ok := f.MetaString("general.architecture"); !ok || s != "llama" {
		t.Errorf("MetaString = %q, %v", s, ok)
	}
	if _, ok := f.MetaString("t.u32"); ok {
		t.Errorf("MetaString of a u32 succeeded")
	}
	for key, want := range map[string]int64{"t.u8": 200, "t.i8": -100, "t.u16": 60000, "t.i16": -30000, "t.u32": 4000000000, "t.i32": -2000000000, "t.i64": math.MinInt64} {
		if got, ok := f.MetaInt(key); !ok || got != want {
			t.Errorf("MetaInt(%s) = %d, %v; want %d", key, got, ok, want)
		}
	}
	for _, key := range []string{"t.u64", "t.f32", "general.architecture", "nope"} { // u64 max does not fit
		if got, ok := f.MetaInt(key); ok {
			t.Errorf("MetaInt(%s) = %d, want not ok", key, got)
		}
	}
	if got := f.Meta[0].Type(); got != gguf.TypeString {
		t.Errorf("Type() = %s, want str", got)
	}
	if got := f.Meta[len(f.Meta)-1].Type(); got != gguf.TypeArray {
		t.Errorf("Type() = %s, want arr", got)
	}
	if _, ok := f.Lookup("missing"); ok {
		t.Errorf("Lookup(missing) found")
	}
	ti, _ := f.Lookup("blk.0.ffn_down.weight")
	if got := ti.String(); got != "blk.0.ffn_down.weight q4_K[256, 1, 2]" {
		t.Errorf("String() = %q", got)
	}
	if ti.NElem() != 512 {
		t.Errorf("NElem = %d", ti.NElem())
	}
}

// TestWriterBytes checks the Writer's bytes against a file built field by
// field from the spec.
func TestWriterBytes(t *testing.T) {
	w := gguf.NewWriter()
	must(t, w.AddMeta("general.name", "tiny"))
	must(t, w.AddMeta("a.list", []int32{-1, 2}))
	must(t, w.AddTensor("a", tensor.F32, []int64{3}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}))
	must(t, w.AddTensor("b", tensor.I8, []int64{2, 1}, []byte{13, 14}))
	var got bytes.Buffer
	_, err := w.WriteTo(&got)
	must(t, err)

	var want raw
	want.header(3, 2, 2)
	want.kvStr("general.name", "tiny")
	want.str("a.list").u32(9).u32(5).u64(2).u32(0xffffffff).u32(2)
	want.tensor("a", 0, 0, 3)
	want.tensor("b", 24, 32, 2, 1)
	want.pad(32)
	want.data(12).pad(32)
	want.u8(13).u8(14).pad(32)
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("Writer bytes differ from the spec's layout:\n got %x\nwant %x", got.Bytes(), want.Bytes())
	}
}

// TestParseV2 reads a version 2 file, whose layout is version 3's.
func TestParseV2(t *testing.T) {
	var b raw
	b.header(2, 1, 1).kvU32("x", 5).tensor("t", 0, 0, 2).pad(32).data(8)
	f, err := parseBytes(b.Bytes())
	must(t, err)
	if f.Version != 2 || len(f.Tensors) != 1 || f.Tensors[0].Size != 8 {
		t.Errorf("got version %d, tensors %v", f.Version, f.Tensors)
	}
}

// TestParseLayouts accepts what the spec allows beyond what our Writer
// writes: tensors out of offset order, gaps, no padding after a file's
// last tensor, and no tensors at all without padding.
func TestParseLayouts(t *testing.T) {
	var b raw
	b.header(3, 2, 0).tensor("late", 0, 64, 2).tensor("early", 0, 0, 4).pad(32).data(72)
	f, err := parseBytes(b.Bytes())
	must(t, err)
	if f.Tensors[0].Offset != 64 || f.Tensors[1].Offset != 0 {
		t.Errorf("offsets %d, %d", f.Tensors[0].Offset, f.Tensors[1].Offset)
	}
	var empty raw
	empty.header(3, 0, 1).kvU32("general.alignment", 64)
	if _, err := parseBytes(empty.Bytes()); err != nil {
		t.Errorf("no tensors, no padding: %v", err)
	}
	if f, err := parseBytes(hugeAlignment()); err != nil || f.Alignment != 1<<31 {
		t.Errorf("alignment 2^31: %v", err)
	}
}

func TestWriterErrors(t *testing.T) {
	w := gguf.NewWriter()
	must(t, w.AddMeta("k", uint32(1)))
	must(t, w.AddTensor("t", tensor.F32, []int64{1}, make([]byte, 4)))
	deep := any([]uint8{})
	for range gguf.MaxArrayDepth {
		deep = []any{deep}
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{w.AddMeta("", "x"), `gguf: metadata key is empty`},
		{w.AddMeta("k", "x"), `gguf: duplicate metadata key "k"`},
		{w.AddMeta("n", 5), `gguf: metadata "n": value of Go type int has no GGUF type`},
		{w.AddMeta("n", []any{[]int{1}}), `gguf: metadata "n": element 0: value of Go type []int has no GGUF type`},
		{w.AddMeta("n", []any{uint8(1)}), `gguf: metadata "n": element 0 of an array of arrays is uint8, want a slice`},
		{w.AddMeta("n", deep), `gguf: metadata "n": element 0: element 0: element 0: element 0: element 0: element 0: element 0: element 0: element 0: element 0: element 0: element 0: element 0: element 0: element 0: arrays nested more than 16 deep`},
		{w.AddMeta(gguf.AlignmentKey, uint64(64)), `gguf: general.alignment is uint64, want uint32`},
		{w.AddMeta(gguf.AlignmentKey, uint32(48)), `gguf: general.alignment = 48 is not a power of two`},
		{w.AddTensor("t", tensor.F32, []int64{1}, make([]byte, 4)), `gguf: duplicate tensor "t"`},
		{w.AddTensor(strings.Repeat("n", 64), tensor.F32, []int64{1}, make([]byte, 4)), `gguf: tensor name "` + strings.Repeat("n", 64) + `" is 64 bytes, ggml allows at most 63`},
		{w.AddTensor("u", tensor.F32, nil, nil), `gguf: tensor "u" has 0 dimensions, want 1 to 4`},
		{w.AddTensor("u", tensor.F32, []int64{1, 1, 1, 1, 1}, nil), `gguf: tensor "u" has 5 dimensions, want 1 to 4`},
		{w.AddTensor("u", tensor.DType(4), []int64{1}, nil), `gguf: tensor "u": unknown ggml type id 4`},
		{w.AddTensor("u", tensor.F32, []int64{2, 0}, nil), `gguf: tensor "u": dimension 1 is 0, want at least 1`},
		{w.AddTensor("u", tensor.F32, []int64{1 << 40, 1 << 40}, nil), `gguf: tensor "u": shape [1099511627776, 1099511627776] has more than 2^63-1 elements`},
		{w.AddTensor("u", tensor.F32, []int64{1 << 62}, nil), `gguf: tensor "u": f32 data of shape [4611686018427387904] is more than 2^63-1 bytes`},
		{w.AddTensor("u", tensor.Q8_0, []int64{33}, nil), `gguf: tensor "u": ne0 = 33 is not a multiple of q8_0's block size 32`},
		{w.AddTensor("u", tensor.Q8_0, []int64{64}, make([]byte, 64)), `gguf: tensor "u": 64 bytes of data, want 68 for q8_0[64]`},
	} {
		if tc.err == nil || tc.err.Error() != tc.want {
			t.Errorf("got error %v\nwant %s", tc.err, tc.want)
		}
	}
	// The failed calls added nothing.
	var buf bytes.Buffer
	_, err := w.WriteTo(&buf)
	must(t, err)
	f, err := parseBytes(buf.Bytes())
	must(t, err)
	if len(f.Meta) != 1 || len(f.Tensors) != 1 || f.Alignment != 32 {
		t.Errorf("after failed Adds: %d pairs, %d tensors, alignment %d", len(f.Meta), len(f.Tensors), f.Alignment)
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n < len(p) {
		k := w.n
		w.n = 0
		return k, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

func TestWriterIOError(t *testing.T) {
	w := gguf.NewWriter()
	must(t, w.AddTensor("t", tensor.F32, []int64{1 << 16}, make([]byte, 4<<16)))
	n, err := w.WriteTo(&failWriter{n: 100000})
	if err == nil || err.Error() != "disk full" || n != 100000 {
		t.Errorf("WriteTo = %d, %v; want 100000, disk full", n, err)
	}
}

func TestOpen(t *testing.T) {
	b := writeTest(t, 64)
	path := filepath.Join(t.TempDir(), "model.gguf")
	must(t, os.WriteFile(path, b, 0o644))
	m, err := gguf.Open(path)
	must(t, err)
	if m.Path() != path || m.Alignment != 64 || len(m.Tensors) != len(testTensors()) {
		t.Errorf("path %q, alignment %d, %d tensors", m.Path(), m.Alignment, len(m.Tensors))
	}
	for _, tt := range testTensors() {
		ti, ok := m.Lookup(tt.name)
		if !ok {
			t.Fatalf("no tensor %s", tt.name)
		}
		d := m.Data(ti)
		if !bytes.Equal(d, tt.data) || cap(d) != len(d) {
			t.Errorf("Data(%s): len %d cap %d, equal %v", tt.name, len(d), cap(d), bytes.Equal(d, tt.data))
		}
	}
	must(t, m.Close())
	must(t, m.Close()) // idempotent

	if _, err := gguf.Open(filepath.Join(t.TempDir(), "none.gguf")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of a missing file: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.gguf")
	must(t, os.WriteFile(empty, nil, 0o644))
	_, err = gguf.Open(empty)
	if want := "gguf: " + empty + ": truncated header: the file is 0 bytes, a GGUF header needs 24"; err == nil || err.Error() != want {
		t.Errorf("Open of an empty file: %v\nwant %s", err, want)
	}
}

func TestValueTypes(t *testing.T) {
	if gguf.TypeFloat64.String() != "f64" || gguf.ValueType(13).String() != "value_type(13)" {
		t.Errorf("ValueType names: %s, %s", gguf.TypeFloat64, gguf.ValueType(13))
	}
}

type errReaderAt struct{}

func (errReaderAt) ReadAt([]byte, int64) (int, error) { return 0, errors.New("device gone") }

// TestParseReaderErrors: a reader that fails is an I/O error, one that
// holds less than the stated size a FormatError.
func TestParseReaderErrors(t *testing.T) {
	b := writeTest(t, 0)
	_, err := gguf.Parse(errReaderAt{}, int64(len(b)))
	if err == nil || err.Error() != "gguf: reading at byte 0: device gone" {
		t.Errorf("failing reader: %v", err)
	}
	_, err = gguf.Parse(bytes.NewReader(b[:100]), int64(len(b)))
	if want := fmt.Sprintf("gguf: file is shorter than its stated size %d (at byte 98)", len(b)); err == nil || err.Error() != want {
		t.Errorf("short reader: %v\nwant %s", err, want)
	}
	_, err = gguf.Parse(bytes.NewReader(b), -1)
	if err == nil || err.Error() != "gguf: negative file size -1" {
		t.Errorf("negative size: %v", err)
	}
}
