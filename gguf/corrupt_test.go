package gguf_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphc/graphc/gguf"
)

var update = flag.Bool("update", false, "rewrite testdata/corrupt/*.gguf and the seeds in testdata/fuzz/FuzzParse from the generators in this file")

// valid is a small valid file: one metadata pair and one f32[4, 2] tensor.
func valid() *raw {
	var b raw
	b.header(3, 1, 1).kvStr("general.architecture", "tiny")
	b.tensor("w", 0, 0, 4, 2).pad(32).data(32)
	return &b
}

// oneTensor is a file with one tensor info and size bytes of data.
func oneTensor(typ uint32, off uint64, size int, dims ...uint64) []byte {
	var b raw
	b.header(3, 1, 0).tensor("w", typ, off, dims...).pad(32).data(size)
	return b.Bytes()
}

// corrupt lists the files of testdata/corrupt: how each is made and the
// exact error Parse returns for it.
var corrupt = []struct {
	name  string
	build func() []byte
	want  string
}{
	{"bad_magic", func() []byte {
		b := valid().Bytes()
		copy(b, "GGML")
		return b
	}, `gguf: not a GGUF file: magic "GGML", want "GGUF" (at byte 0)`},
	{"empty", func() []byte { return nil }, `gguf: truncated header: the file is 0 bytes, a GGUF header needs 24`},
	{"truncated_header", func() []byte { return valid().Bytes()[:20] }, `gguf: truncated header: the file is 20 bytes, a GGUF header needs 24`},
	{"version_1", func() []byte {
		var b raw
		return b.header(1, 0, 0).Bytes()
	}, `gguf: GGUF version 1 is not supported (it used 32-bit counts; this reader reads versions 2 and 3; convert the model again with a current llama.cpp) (at byte 4)`},
	{"version_big_endian", func() []byte {
		var b raw
		return b.header(0x03000000, 0, 0).Bytes()
	}, `gguf: GGUF version 3 read as 0x03000000: a big-endian file, which is not supported (at byte 4)`},
	{"version_4", func() []byte {
		var b raw
		return b.header(4, 0, 0).Bytes()
	}, `gguf: unsupported GGUF version 4, want 2 or 3 (at byte 4)`},
	{"huge_kv_count", func() []byte {
		var b raw
		return b.header(3, 0, 1<<62).kvU32("a", 1).Bytes()
	}, `gguf: metadata count 4611686018427387904 is more than the 17 bytes after the header can hold (a pair takes at least 14 bytes) (at byte 16)`},
	{"huge_tensor_count", func() []byte {
		var b raw
		return b.header(3, 1<<62, 0).tensor("w", 0, 0, 4).Bytes()
	}, `gguf: tensor count 4611686018427387904 is more than the 33 bytes after the header can hold (a tensor info takes at least 32 bytes) (at byte 8)`},
	{"truncated_metadata", func() []byte {
		var b raw
		return b.header(3, 0, 2).kvU32("a", 1).kvU32("b", 2).Bytes()[:24+17+13]
	}, `gguf: truncated metadata "b": need 4 bytes, the file has 0 left (at byte 54)`},
	{"key_past_eof", func() []byte {
		var b raw
		return b.header(3, 0, 1).u64(1 << 40).u32(4).u32(1).Bytes()
	}, `gguf: metadata key 0: string length 1099511627776 is past the end of the file (8 bytes left) (at byte 24)`},
	{"key_too_long", func() []byte {
		var b raw
		return b.header(3, 0, 1).kvU32(strings.Repeat("k", 65536), 1).Bytes()
	}, `gguf: metadata key 0: string length 65536 exceeds the limit of 65535 bytes (at byte 24)`},
	{"empty_key", func() []byte {
		var b raw
		return b.header(3, 0, 1).kvU32("", 1).Bytes()
	}, `gguf: metadata key 0 is empty (at byte 24)`},
	{"duplicate_key", func() []byte {
		var b raw
		return b.header(3, 0, 2).kvU32("general.alignment", 32).kvU32("general.alignment", 64).Bytes()
	}, `gguf: duplicate metadata key "general.alignment" (pairs 0 and 1) (at byte 57)`},
	{"unknown_value_type", func() []byte {
		var b raw
		return b.header(3, 0, 1).str("k").u32(13).u32(0).Bytes()
	}, `gguf: metadata "k": unknown value type 13 (at byte 33)`},
	{"string_past_eof", func() []byte {
		var b raw
		b.header(3, 0, 1).str("general.name").u32(8).u64(1000)
		b.WriteString("tiny")
		return b.Bytes()
	}, `gguf: metadata "general.name": string length 1000 is past the end of the file (4 bytes left) (at byte 48)`},
	{"bad_bool", func() []byte {
		var b raw
		return b.header(3, 0, 1).str("k").u32(7).u8(2).Bytes()
	}, `gguf: metadata "k": bool value 2, want 0 or 1 (at byte 37)`},
	{"array_past_eof", func() []byte {
		var b raw
		return b.header(3, 0, 1).str("tokenizer.ggml.scores").u32(9).u32(6).u64(1 << 60).u32(0).Bytes()
	}, `gguf: metadata "tokenizer.ggml.scores": array length 1152921504606846976 is past the end of the file (f32 elements take at least 4 bytes each, 4 bytes left) (at byte 57)`},
	{"array_strings_past_eof", func() []byte {
		var b raw
		return b.header(3, 0, 1).str("tokenizer.ggml.tokens").u32(9).u32(8).u64(2).str("a").u64(100).u64(0).Bytes()
	}, `gguf: metadata "tokenizer.ggml.tokens"[1]: string length 100 is past the end of the file (8 bytes left) (at byte 78)`},
	{"array_unknown_type", func() []byte {
		var b raw
		return b.header(3, 0, 1).str("k").u32(9).u32(99).u64(1).u32(0).Bytes()
	}, `gguf: metadata "k": unknown array element type 99 (at byte 37)`},
	{"array_bad_bool", func() []byte {
		var b raw
		return b.header(3, 0, 1).str("k").u32(9).u32(7).u64(3).u8(1).u8(0).u8(9).Bytes()
	}, `gguf: metadata "k": array holds bool value 9, want 0 or 1 (at byte 37)`},
	{"arrays_too_deep", func() []byte {
		var b raw
		b.header(3, 0, 1).str("k").u32(9)
		for range gguf.MaxArrayDepth {
			b.u32(9).u64(1)
		}
		return b.u32(0).u64(0).Bytes()
	}, `gguf: metadata "k"[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]: arrays nested more than 16 deep (at byte 217)`},
	{"alignment_not_power_of_two", func() []byte {
		var b raw
		return b.header(3, 1, 1).kvU32("general.alignment", 48).tensor("w", 0, 0, 4).pad(48).data(16).Bytes()
	}, `gguf: general.alignment = 48 is not a power of two`},
	{"alignment_zero", func() []byte {
		var b raw
		return b.header(3, 0, 1).kvU32("general.alignment", 0).Bytes()
	}, `gguf: general.alignment = 0 is not a power of two`},
	{"alignment_not_u32", func() []byte {
		var b raw
		return b.header(3, 0, 1).str("general.alignment").u32(10).u64(32).Bytes()
	}, `gguf: general.alignment is u64, want u32`},
	{"truncated_tensor_info", func() []byte {
		var b raw
		return b.header(3, 1, 0).tensor("blk.0.attn_q.weight", 0, 0, 8, 8).Bytes()[:24+8+19+4+8+4]
	}, `gguf: truncated tensor info 0 ("blk.0.attn_q.weight") dimension 1: need 8 bytes, the file has 4 left (at byte 63)`},
	{"tensor_count_past_metadata", func() []byte { return valid().Bytes()[:24+40+20] }, `gguf: tensor count 1 is more than the 16 bytes after the metadata can hold (a tensor info takes at least 32 bytes) (at byte 8)`},
	{"tensor_name_past_eof", func() []byte {
		var b raw
		return b.header(3, 1, 0).u64(1 << 50).u32(1).u64(4).u32(0).u64(0).Bytes()
	}, `gguf: tensor info 0: name: string length 1125899906842624 is past the end of the file (24 bytes left) (at byte 24)`},
	{"n_dims_0", func() []byte { return oneTensor(0, 0, 4) }, `gguf: tensor "w": n_dims = 0, want 1 to 4 (at byte 24)`},
	{"n_dims_5", func() []byte { return oneTensor(0, 0, 4, 1, 1, 1, 1, 1) }, `gguf: tensor "w": n_dims = 5, want 1 to 4 (at byte 24)`},
	{"dim_zero", func() []byte { return oneTensor(0, 0, 0, 4, 0) }, `gguf: tensor "w": dimension 1 is 0, want at least 1 (at byte 24)`},
	{"dim_negative", func() []byte { return oneTensor(0, 0, 32, 1<<63|8) }, `gguf: tensor "w": dimension 0 is 9223372036854775816, more than 2^63-1 (at byte 24)`},
	{"element_count_overflow", func() []byte { return oneTensor(0, 0, 32, 1<<32, 1<<32) }, `gguf: tensor "w": shape [4294967296, 4294967296] has more than 2^63-1 elements (at byte 24)`},
	{"byte_size_overflow", func() []byte { return oneTensor(0, 0, 32, 1<<62) }, `gguf: tensor "w": f32 data of shape [4611686018427387904] is more than 2^63-1 bytes (at byte 24)`},
	{"unknown_ggml_type", func() []byte { return oneTensor(31, 0, 32, 8) }, `gguf: tensor "w": unknown ggml type id 31 (at byte 24)`},
	{"not_block_multiple", func() []byte { return oneTensor(8, 0, 34, 33) }, `gguf: tensor "w": ne0 = 33 is not a multiple of q8_0's block size 32 (at byte 24)`},
	{"misaligned_offset", func() []byte { return oneTensor(0, 16, 48, 8) }, `gguf: tensor "w": data offset 16 is not a multiple of the alignment 32 (at byte 24)`},
	{"offset_past_eof", func() []byte { return oneTensor(0, 1<<62, 32, 8) }, `gguf: tensor "w": 32 bytes of data at offset 4611686018427387904 (file bytes 4611686018427387968 to 4611686018427388000) end past the end of the file (96 bytes)`},
	{"data_past_eof", func() []byte { return oneTensor(0, 0, 20, 4, 2) }, `gguf: tensor "w": 32 bytes of data at offset 0 (file bytes 96 to 128) end past the end of the file (116 bytes)`},
	{"missing_padding", func() []byte {
		var b raw
		return b.header(3, 1, 0).tensor("w", 26, 0, 1).Bytes()
	}, `gguf: tensor "w": 4 bytes of data at offset 0 (file bytes 64 to 68) end past the end of the file (57 bytes)`},
	{"name_too_long", func() []byte {
		var b raw
		return b.header(3, 1, 0).tensor(strings.Repeat("x", 64), 0, 0, 1).pad(32).data(4).Bytes()
	}, `gguf: tensor "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx": name is 64 bytes, ggml allows at most 63 (at byte 24)`},
	{"duplicate_tensor", func() []byte {
		var b raw
		return b.header(3, 2, 0).tensor("w", 0, 0, 4).tensor("w", 0, 32, 4).pad(32).data(48).Bytes()
	}, `gguf: tensor "w": duplicate tensor name (tensor infos 0 and 1) (at byte 57)`},
	{"overlap", func() []byte {
		var b raw
		b.header(3, 3, 0).tensor("a", 0, 0, 16).tensor("b", 0, 32, 8).tensor("c", 0, 64, 4)
		return b.pad(32).data(96).Bytes()
	}, `gguf: tensor "b": data [32, 64) overlaps the data of tensor "a" [0, 64) (offsets from the data section)`},
	{"many_problems", func() []byte {
		var b raw
		b.header(3, 5, 1).kvU32("general.alignment", 64)
		b.tensor("blk.0.attn_q.weight", 8, 0, 48, 4)    // ne0 not a multiple of 32
		b.tensor("blk.0.attn_k.weight", 0, 32, 8, 8)    // misaligned
		b.tensor("blk.0.attn_v.weight", 0, 0, 16)       // fine
		b.tensor("blk.0.attn_output.weight", 0, 0, 16)  // overlaps attn_v
		b.tensor("blk.0.ffn_up.weight", 1, 128, 64, 64) // past the end
		return b.pad(64).data(256).Bytes()
	}, "gguf: tensor \"blk.0.attn_q.weight\": ne0 = 48 is not a multiple of q8_0's block size 32 (at byte 57)\ngguf: tensor \"blk.0.attn_k.weight\": data offset 32 is not a multiple of the alignment 64 (at byte 116)\ngguf: tensor \"blk.0.ffn_up.weight\": 8192 bytes of data at offset 128 (file bytes 512 to 8704) end past the end of the file (640 bytes)\ngguf: tensor \"blk.0.attn_output.weight\": data [0, 64) overlaps the data of tensor \"blk.0.attn_v.weight\" [0, 64) (offsets from the data section)"},
}

// hugeAlignment is a valid file without tensors whose alignment is 2^31:
// the first input FuzzParse found, which stalled it as rewriting the file
// padded it to 2 GiB.
func hugeAlignment() []byte {
	var b raw
	return b.header(3, 0, 1).kvU32("general.alignment", 1<<31).Bytes()
}

// fuzzSeeds are the corrupt files also written, with three valid ones, to
// testdata/fuzz/FuzzParse in the go test fuzz v1 format.
var fuzzSeeds = []string{"bad_magic", "arrays_too_deep", "array_strings_past_eof", "overlap", "many_problems"}

func TestCorrupt(t *testing.T) {
	dir := filepath.Join("testdata", "corrupt")
	if *update {
		must(t, os.RemoveAll(dir))
		must(t, os.MkdirAll(dir, 0o755))
		writeFuzzSeeds(t)
	}
	names := map[string]bool{}
	for _, tc := range corrupt {
		names[tc.name+".gguf"] = true
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".gguf")
			b := tc.build()
			if *update {
				must(t, os.WriteFile(path, b, 0o644))
			}
			committed, err := os.ReadFile(path)
			must(t, err)
			if !bytes.Equal(committed, b) {
				t.Fatalf("%s is stale; run: go test ./gguf -run TestCorrupt -update", path)
			}
			_, err = parseBytes(b)
			if err == nil {
				t.Fatalf("Parse succeeded, want %s", tc.want)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("Parse error:\n%s\nwant:\n%s", got, tc.want)
			}
			var fe *gguf.FormatError
			if !errors.As(err, &fe) {
				t.Errorf("error is %T, not a *gguf.FormatError", err)
			}
			_, err = gguf.Open(path)
			if want := strings.ReplaceAll(tc.want, "gguf: ", "gguf: "+path+": "); err == nil || err.Error() != want {
				t.Errorf("Open error:\n%v\nwant:\n%s", err, want)
			}
		})
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		if !names[filepath.Base(f)] {
			t.Errorf("%s has no case in corrupt; run: go test ./gguf -run TestCorrupt -update", f)
		}
	}
}

// writeFuzzSeeds writes the seed corpus of FuzzParse.
func writeFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzParse")
	must(t, os.RemoveAll(dir))
	must(t, os.MkdirAll(dir, 0o755))
	seeds := map[string][]byte{"valid": valid().Bytes(), "valid_all_types": writeTest(t, 64), "huge_alignment": hugeAlignment()}
	for _, tc := range corrupt {
		for _, s := range fuzzSeeds {
			if tc.name == s {
				seeds[s] = tc.build()
			}
		}
	}
	for name, b := range seeds {
		must(t, os.WriteFile(filepath.Join(dir, name), fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", b), 0o644))
	}
}
