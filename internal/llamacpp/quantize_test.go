package llamacpp_test

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/gguf/ggufarch"
	"github.com/graphc/graphc/internal/llamacpp"
	"github.com/graphc/graphc/tensor"
)

// mixCases are the shapes whose mixes graphc must choose as llama.cpp's
// quantizer does: multi-head and grouped-query attention (n_gqa 1, 2, 4
// and 8, which the q2_K, iq3 and iq4 mixes test), tied and untied heads,
// 2 to 16 layers (use_more_bits' eighths and thirds, q3_K_m's sixteenth),
// rows of whole 256-blocks and rows that need a fallback (width 320,
// feed-forward 864: whole 32-blocks only; feed-forward 400: not even
// those, so f16); qwen3's and gemma3's query and key norms (gemma3's
// norms after the attention and the feed-forward too), and their heads
// wider than n_embd / n_head; files with experts.
var mixCases = []struct {
	name string
	opts ggufarch.Options
}{
	{"llama-mha-2", archOpts("llama", func(o *ggufarch.Options) {
		o.Layers, o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab = 2, 256, 4, 4, 512, 512
	})},
	{"llama-gqa4-8", archOpts("llama", func(o *ggufarch.Options) {
		o.Layers, o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab = 8, 256, 8, 2, 512, 512
	})},
	{"qwen2-gqa8-tied-3", archOpts("qwen2", func(o *ggufarch.Options) {
		o.Layers, o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab, o.Tied = 3, 512, 8, 1, 1024, 512, true
	})},
	{"llama-320-tied-5", archOpts("llama", func(o *ggufarch.Options) {
		o.Layers, o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab, o.Tied = 5, 320, 4, 1, 864, 512, true
	})},
	{"qwen2-ff864-3", archOpts("qwen2", func(o *ggufarch.Options) {
		o.Layers, o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab = 3, 256, 4, 2, 864, 512
	})},
	{"llama-ff400-7", archOpts("llama", func(o *ggufarch.Options) {
		o.Layers, o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab = 7, 256, 4, 4, 400, 512
	})},
	{"llama-gqa4-16", archOpts("llama", func(o *ggufarch.Options) {
		o.Layers, o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab = 16, 256, 4, 1, 256, 512
	})},
	{"qwen3-hd128-tied-4", archOpts("qwen3", func(o *ggufarch.Options) {
		o.Layers, o.Embd, o.Heads, o.KVHeads, o.HeadDim, o.FF, o.Vocab, o.Tied = 4, 256, 4, 2, 128, 512, 512, true
	})},
	{"gemma3-hd128-tied-6", archOpts("gemma3", func(o *ggufarch.Options) {
		o.Layers, o.Embd, o.Heads, o.KVHeads, o.HeadDim, o.FF, o.Vocab, o.Tied = 6, 256, 4, 1, 128, 512, 512, true
	})},
	// Mixtures of experts: Mixtral's 8 experts, which llama.cpp's mix
	// treats apart (attn_v and attn_k q8_0, attn_output q5_K), and
	// qwen3moe's other counts, which it does not.
	{"mixtral-8x2-9", archOpts("llama", func(o *ggufarch.Options) {
		o.Layers, o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab, o.Experts = 9, 256, 4, 2, 256, 512, 8
	})},
	{"qwen3moe-16x4-hd64-5", archOpts("qwen3moe", func(o *ggufarch.Options) {
		o.Layers, o.Embd, o.Heads, o.KVHeads, o.HeadDim, o.FF, o.Vocab, o.Experts, o.ExpertsUsed, o.ExpertFF = 5, 256, 4, 2, 64, 512, 512, 16, 4, 256
	})},
}

// TestMixMatchesLlamaCpp quantizes f32 files of mixCases with
// llama_model_quantize to every file type gguf.Mix knows and checks that
// the file llama.cpp writes has the types gguf.Mix chooses, its tensors
// in gguf.LoaderCompare's order, and gguf.QuantizedMeta's metadata, and that
// gguf.FileType numbers the file types as llama.h does. Where graphc
// writes the file type (ggufarch.MixWritable), the file ggufarch writes
// with Options.Mix must be llama.cpp's byte for byte. -short checks the
// first three shapes.
func TestMixMatchesLlamaCpp(t *testing.T) {
	h := oracle(t)
	cases := mixCases
	if testing.Short() {
		cases = cases[:3]
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			how := mixBytes
			if c.opts.Experts > 0 {
				how = mixBytesExceptIQ
			}
			checkMixes(t, h, c.opts, gguf.FileTypes(), how)
		})
	}
}

// TestMix70BMatchesLlamaCpp checks the mixes of 80-layer files, which
// llama.cpp takes for 70B models (llama's with grouped-query attention,
// every qwen2) and gives attn_v more bits, in the file types where that
// changes a type (the types alone: mixTypes).
func TestMix70BMatchesLlamaCpp(t *testing.T) {
	if testing.Short() {
		t.Skip("80-layer files: skipped in -short")
	}
	h := oracle(t)
	fts := []gguf.FileType{gguf.FileQ2_K, gguf.FileQ3_K_M, gguf.FileQ4_K_M}
	for _, c := range []struct {
		name string
		opts ggufarch.Options
	}{
		{"llama-gqa-80", archOpts("llama", func(o *ggufarch.Options) {
			o.Layers, o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab = 80, 256, 4, 2, 256, 288
		})},
		{"llama-mha-80", archOpts("llama", func(o *ggufarch.Options) {
			o.Layers, o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab = 80, 256, 4, 4, 256, 288
		})},
		{"qwen2-mha-80", archOpts("qwen2", func(o *ggufarch.Options) {
			o.Layers, o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab = 80, 256, 4, 4, 256, 288
		})},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkMixes(t, h, c.opts, fts, mixTypes)
		})
	}
}

// TestPureMatchesLlamaCpp checks gguf.Mix's pure types against
// llama-quantize --pure's, on the shapes whose rows need fallbacks.
func TestPureMatchesLlamaCpp(t *testing.T) {
	h := oracle(t)
	for _, c := range mixCases {
		if c.opts.Embd%256 == 0 && c.opts.FF%256 == 0 {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			checkMixes(t, h, c.opts, []gguf.FileType{gguf.FileQ8_0, gguf.FileQ4_0, gguf.FileQ4_K_M, gguf.FileQ6_K, gguf.FileIQ4_XS}, mixPure)
		})
	}
}

// mixCheck says what checkMixes compares beyond the tensors' types.
type mixCheck int

const (
	// mixBytes: graphc's file of the mix is llama.cpp's byte for byte,
	// where graphc writes the file type (ggufarch.MixWritable).
	mixBytes mixCheck = iota
	// mixBytesExceptIQ: as mixBytes but for the IQ file types, whose
	// types alone are checked (mixTypes). llama.cpp's IQ quantizers search
	// their scales and took most of this package's time on the experts'
	// tensors; their bytes are checked on the dense shapes.
	mixBytesExceptIQ
	// mixTypes: the types, order and metadata only, from a source of zero
	// weights, which llama.cpp's quantizers pass over quickly (the mix
	// depends on the tensors' names and shapes, never on their values).
	mixTypes
	// mixPure: the types llama-quantize --pure chooses.
	mixPure
)

// checkMixes writes the f32 file of o and quantizes it with llama.cpp to
// each of fts, checking each file with checkMix and, as how says, its
// bytes against the file graphc writes.
func checkMixes(t *testing.T, h *llamacpp.Harness, o ggufarch.Options, fts []gguf.FileType, how mixCheck) {
	dir := t.TempDir()
	in := filepath.Join(dir, "source.gguf")
	o.Type, o.Name = tensor.F32, "source"

	if err := ggufarch.WriteFile(in, o); err != nil {
		t.Fatal(err)
	}
	src, err := gguf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	zeros := filepath.Join(dir, "zeros.gguf") // in's tensors, all zero
	if err := writeZeroed(zeros, in, src.DataOffset); err != nil {
		t.Fatal(err)
	}
	model, err := gguf.MixModelOf(src.File)
	if err != nil {
		t.Fatal(err)
	}
	ts := make([]gguf.MixTensor, len(src.Tensors))
	for i, ti := range src.Tensors {
		ts[i] = gguf.MixTensor{Name: ti.Name, Ne: ti.Ne[:ti.NDims], Type: ti.Type}
	}
	for _, ft := range fts {
		t.Run(ft.String(), func(t *testing.T) {
			if n := llamacpp.FileTypes[strings.ToLower(ft.String())]; n != uint32(ft) {
				t.Fatalf("gguf numbers %s %d, llama.h %d", ft, uint32(ft), n)
			}
			out := filepath.Join(dir, ft.String()+".gguf")
			quantize, from := h.Quantize, in
			sameBytes := ggufarch.MixWritable(ft)
			switch {
			case how == mixPure:
				quantize, from, sameBytes = h.QuantizePure, zeros, false
			case how == mixTypes, how == mixBytesExceptIQ && strings.HasPrefix(ft.String(), "iq"):
				from, sameBytes = zeros, false
			}
			if err := quantize(from, out, ft.String()); err != nil {
				t.Fatal(err)
			}
			q, err := gguf.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			checkMix(t, src.File, q.File, ft, model, ts, how == mixPure)
			if sameBytes {
				mine := filepath.Join(dir, ft.String()+"-graphc.gguf")
				m := o
				m.Mix = ft.String()
				if err := ggufarch.WriteFile(mine, m); err != nil {
					t.Fatal(err)
				}
				checkSameFile(t, out, mine)
				os.Remove(mine)
			}
			os.Remove(out)
		})
	}
}

// checkMix compares llama.cpp's quantized file q of src with what gguf's
// mix says it is.
func checkMix(t *testing.T, src, q *gguf.File, ft gguf.FileType, model gguf.MixModel, ts []gguf.MixTensor, pure bool) {
	t.Helper()
	if got, want := metaString(q.Meta), metaString(gguf.QuantizedMeta(src.Meta, ft)); got != want {
		t.Errorf("metadata:\nllama.cpp %s\ngraphc    %s", got, want)
	}
	want, err := gguf.Mix(ft, model, ts, pure)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ti := range src.Tensors {
		names = append(names, ti.Name)
	}
	slices.SortStableFunc(names, gguf.LoaderCompare)
	var gotNames []string
	for _, ti := range q.Tensors {
		gotNames = append(gotNames, ti.Name)
	}
	if !slices.Equal(gotNames, names) {
		t.Errorf("tensor order:\nllama.cpp %v\ngraphc    %v", gotNames, names)
	}
	bad := 0
	for i, ti := range src.Tensors {
		qi, ok := q.Lookup(ti.Name)
		switch {
		case !ok:
			t.Errorf("%s: not in llama.cpp's file", ti.Name)
		case qi.Type != want[i]:
			if bad++; bad <= 10 {
				t.Errorf("%s %v: llama.cpp %s, graphc %s", ti.Name, ti.Ne[:ti.NDims], qi.Type, want[i])
			}
		}
	}
	if bad > 10 {
		t.Errorf("%d tensors' types differ in all", bad)
	}
}

// metaString prints metadata pairs in order, arrays by length and hash,
// for comparing two files' metadata.
func metaString(kvs []gguf.KV) string {
	var b strings.Builder
	for _, kv := range kvs {
		v := kv.Value
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice {
			h := fnv.New64a()
			fmt.Fprint(h, v)
			v = fmt.Sprintf("len %d hash %x", rv.Len(), h.Sum64())
		}
		fmt.Fprintf(&b, "%s=%T(%v) ", kv.Key, kv.Value, v)
	}
	return b.String()
}

// checkSameFile checks that graphc's file mine is llama.cpp's theirs byte
// for byte, saying which tensors differ where it is not.
func checkSameFile(t *testing.T, theirs, mine string) {
	t.Helper()
	a, err := os.ReadFile(theirs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(mine)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, b) {
		return
	}
	t.Errorf("graphc's file (%d bytes) is not llama.cpp's (%d bytes)", len(b), len(a))
	fa, err := gguf.Open(theirs)
	if err != nil {
		t.Fatal(err)
	}
	defer fa.Close()
	fb, err := gguf.Open(mine)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	if ma, mb := metaString(fa.Meta), metaString(fb.Meta); ma != mb {
		t.Errorf("metadata:\nllama.cpp %s\ngraphc    %s", ma, mb)
	}
	bad := 0
	for i := range fa.Tensors {
		ta := &fa.Tensors[i]
		tb, ok := fb.Lookup(ta.Name)
		switch {
		case !ok:
			t.Errorf("%s: not in graphc's file", ta.Name)
		case tb.Type != ta.Type:
			t.Errorf("%s: llama.cpp %s, graphc %s", ta.Name, ta.Type, tb.Type)
		case !bytes.Equal(fa.Data(ta), fb.Data(tb)):
			if bad++; bad <= 5 {
				da, db := fa.Data(ta), fb.Data(tb)
				at := 0
				for at < len(da) && da[at] == db[at] {
					at++
				}
				t.Errorf("%s (%s): data differ from byte %d of %d (block %d)", ta.Name, ta.Type, at, len(da), at/ta.Type.Size())
			}
		}
	}
	if bad > 5 {
		t.Errorf("%d tensors' data differ in all", bad)
	}
}

// writeZeroed writes to path the GGUF file src with every byte of its data
// section, from dataOffset on, zero.
func writeZeroed(path, src string, dataOffset int64) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	clear(b[dataOffset:])
	return os.WriteFile(path, b, 0o644)
}
