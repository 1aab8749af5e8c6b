package llamacpp_test

import (
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
// those, so f16).
var mixCases = []struct {
	name string
	opts ggufarch.Options
}{
	{"llama-mha-2", archOpts("llama", func(o *ggufarch.Options) {
		o.Layers, o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab = 2, 256, 4, 4, 512, 512
	})},
	{"llama-gqa4-8", archOpts("llama", func(o *ggufarch.Options) {
		o.Layers, o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab = 8, 256, 8, 2, 1024, 512
	})},
	{"qwen2-gqa8-tied-4", archOpts("qwen2", func(o *ggufarch.Options) {
		o.Layers, o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab, o.Tied = 4, 512, 8, 1, 1024, 512, true
	})},
	{"llama-320-tied-5", archOpts("llama", func(o *ggufarch.Options) {
		o.Layers, o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab, o.Tied = 5, 320, 4, 1, 864, 512, true
	})},
	{"qwen2-ff864-3", archOpts("qwen2", func(o *ggufarch.Options) {
		o.Layers, o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab = 3, 256, 4, 2, 864, 512
	})},
	{"llama-ff400-7", archOpts("llama", func(o *ggufarch.Options) {
		o.Layers, o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab = 7, 512, 8, 8, 400, 512
	})},
	{"llama-gqa4-16", archOpts("llama", func(o *ggufarch.Options) {
		o.Layers, o.Embd, o.Heads, o.KVHeads, o.FF, o.Vocab = 16, 256, 4, 1, 256, 512
	})},
}

// TestMixMatchesLlamaCpp quantizes f32 files of mixCases with
// llama_model_quantize to every file type gguf.Mix knows and checks that
// the file llama.cpp writes has the types gguf.Mix chooses, its tensors
// in gguf.LoaderLess's order, and gguf.QuantizedMeta's metadata, and that
// gguf.FileType numbers the file types as llama.h does.
func TestMixMatchesLlamaCpp(t *testing.T) {
	h := oracle(t)
	for _, c := range mixCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			checkMixes(t, h, c.opts, gguf.FileTypes(), false)
		})
	}
}

// TestMix70BMatchesLlamaCpp checks the mixes of 80-layer files, which
// llama.cpp takes for 70B models (llama's with grouped-query attention,
// every qwen2) and gives attn_v more bits, in the file types where that
// changes a type.
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
			checkMixes(t, h, c.opts, fts, false)
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
			checkMixes(t, h, c.opts, []gguf.FileType{gguf.FileQ8_0, gguf.FileQ4_0, gguf.FileQ4_K_M, gguf.FileQ6_K, gguf.FileIQ4_XS}, true)
		})
	}
}

// checkMixes writes the f32 file of o and quantizes it with llama.cpp to
// each of fts (pure: as llama-quantize --pure), checking each file with
// checkMix.
func checkMixes(t *testing.T, h *llamacpp.Harness, o ggufarch.Options, fts []gguf.FileType, pure bool) {
	dir := t.TempDir()
	in := filepath.Join(dir, "source.gguf")
	o.Type = tensor.F32
	if err := ggufarch.WriteFile(in, o); err != nil {
		t.Fatal(err)
	}
	src, err := gguf.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
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
			quantize := h.Quantize
			if pure {
				quantize = h.QuantizePure
			}
			if err := quantize(in, out, ft.String()); err != nil {
				t.Fatal(err)
			}
			q, err := gguf.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			checkMix(t, src.File, q.File, ft, model, ts, pure)
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
	slices.SortStableFunc(names, func(a, b string) int {
		if gguf.LoaderLess(a, b) {
			return -1
		}
		if gguf.LoaderLess(b, a) {
			return 1
		}
		return 0
	})
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
