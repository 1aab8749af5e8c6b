package gguf_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/graphc/graphc/gguf"
)

// FuzzParse checks that Parse never panics and returns only
// *gguf.FormatError problems, that what it accepts is consistent (every
// tensor's data inside the file, aligned, not overlapping another's), and
// that writing an accepted file with Writer gives a file Parse accepts
// and that rewrites to the same bytes. The seeds are the corrupt corpus,
// valid files, and testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, tc := range corrupt {
		f.Add(tc.build())
	}
	f.Add(valid().Bytes())
	f.Add(writeTest(f, 0))
	f.Add(writeTest(f, 64))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := parseBytes(data)
		if err != nil {
			var fe *gguf.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is %T, not a *gguf.FormatError", err, err)
			}
			return
		}
		if file.Alignment <= 0 || file.Alignment&(file.Alignment-1) != 0 || file.DataOffset%file.Alignment != 0 {
			t.Fatalf("alignment %d, data offset %d", file.Alignment, file.DataOffset)
		}
		var end int64
		for i, ti := range file.Tensors {
			start := file.DataOffset + ti.Offset
			if ti.Offset%file.Alignment != 0 || ti.Size <= 0 || start+ti.Size > int64(len(data)) {
				t.Fatalf("tensor %d (%s): offset %d size %d in a %d-byte file", i, ti.Name, ti.Offset, ti.Size, len(data))
			}
			if ti.Offset < end && i > 0 && file.Tensors[i-1].Offset <= ti.Offset {
				t.Fatalf("tensor %d overlaps the one before", i)
			}
			end = max(end, ti.Offset+ti.Size)
			if got, ok := file.Lookup(ti.Name); !ok || got != &file.Tensors[i] {
				t.Fatalf("Lookup(%q) = %v, %v", ti.Name, got, ok)
			}
		}
		for _, kv := range file.Meta {
			if v, ok := file.MetaValue(kv.Key); !ok || kv.Type() != (gguf.KV{Value: v}).Type() {
				t.Fatalf("MetaValue(%q) = %v, %v", kv.Key, v, ok)
			}
		}

		if file.Alignment > 1<<16 {
			return // valid, but rewriting pads the data section to gigabytes
		}
		rewrite := func(file *gguf.File, data []byte) []byte {
			w := gguf.NewWriter()
			for _, kv := range file.Meta {
				if err := w.AddMeta(kv.Key, kv.Value); err != nil {
					t.Fatalf("Writer refuses metadata Parse accepted: %v", err)
				}
			}
			for _, ti := range file.Tensors {
				start := file.DataOffset + ti.Offset
				if err := w.AddTensor(ti.Name, ti.Type, ti.Ne[:ti.NDims], data[start:start+ti.Size]); err != nil {
					t.Fatalf("Writer refuses a tensor Parse accepted: %v", err)
				}
			}
			var buf bytes.Buffer
			if _, err := w.WriteTo(&buf); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}
		once := rewrite(file, data)
		file2, err := parseBytes(once)
		if err != nil {
			t.Fatalf("Parse refuses what Writer wrote: %v", err)
		}
		if len(file2.Meta) != len(file.Meta) || len(file2.Tensors) != len(file.Tensors) {
			t.Fatalf("rewritten: %d pairs and %d tensors, want %d and %d", len(file2.Meta), len(file2.Tensors), len(file.Meta), len(file.Tensors))
		}
		for i, ti := range file.Tensors {
			t2 := file2.Tensors[i]
			a, b := data[file.DataOffset+ti.Offset:][:ti.Size], once[file2.DataOffset+t2.Offset:][:t2.Size]
			if t2.Name != ti.Name || t2.Type != ti.Type || t2.Ne != ti.Ne || t2.NDims != ti.NDims || !bytes.Equal(a, b) {
				t.Fatalf("tensor %d rewritten as %v, was %v", i, &t2, &ti)
			}
		}
		if twice := rewrite(file2, once); !bytes.Equal(once, twice) {
			t.Fatalf("rewriting is not stable")
		}
	})
}
