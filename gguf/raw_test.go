package gguf_test

import (
	"bytes"
	"encoding/binary"
)

// raw builds GGUF bytes field by field, independently of gguf.Writer, so
// tests can write what the Writer refuses to: corrupt files, and files to
// check the Writer's own bytes against.
type raw struct{ bytes.Buffer }

func (b *raw) u8(v uint8) *raw { b.WriteByte(v); return b }

func (b *raw) u32(v uint32) *raw {
	b.Write(binary.LittleEndian.AppendUint32(nil, v))
	return b
}

func (b *raw) u64(v uint64) *raw {
	b.Write(binary.LittleEndian.AppendUint64(nil, v))
	return b
}

func (b *raw) str(s string) *raw { b.u64(uint64(len(s))); b.WriteString(s); return b }

// header writes the magic, version and counts.
func (b *raw) header(version uint32, nTensors, nKV uint64) *raw {
	b.WriteString("GGUF")
	return b.u32(version).u64(nTensors).u64(nKV)
}

// kvU32 writes a u32 metadata pair.
func (b *raw) kvU32(key string, v uint32) *raw { return b.str(key).u32(4).u32(v) }

// kvStr writes a string metadata pair.
func (b *raw) kvStr(key, v string) *raw { return b.str(key).u32(8).str(v) }

// tensor writes a tensor info.
func (b *raw) tensor(name string, typ uint32, off uint64, dims ...uint64) *raw {
	b.str(name).u32(uint32(len(dims)))
	for _, d := range dims {
		b.u64(d)
	}
	return b.u32(typ).u64(off)
}

// pad writes zeros up to a multiple of a.
func (b *raw) pad(a int) *raw {
	for b.Len()%a != 0 {
		b.WriteByte(0)
	}
	return b
}

// data writes n bytes 1, 2, 3, ….
func (b *raw) data(n int) *raw {
	for i := range n {
		b.WriteByte(byte(i + 1))
	}
	return b
}
