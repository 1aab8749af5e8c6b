// Package ggufarch writes GGUF model files of a llama.cpp architecture
// (llama, with experts or without, qwen2, qwen3, qwen3moe, gemma3, phi3) at any shape, as llama.cpp's converter writes them, with
// random weights: what `graphc gguf new -arch` writes, and what tests and
// benchmarks run graphc and llama.cpp on; or, with Options.Mix, the file
// llama.cpp's quantizer writes from such a file.
package ggufarch

import (
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"

	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/internal/atomicfile"
	"github.com/graphc/graphc/tensor"
)

// Options are a file's architecture, shape and storage. A zero field is
// not its default: start from Defaults. Each field is set by the flag of
// `graphc gguf new -arch` of the same name (-kv-heads: KVHeads), and
// Check's errors name the fields by those flags.
type Options struct {
	Arch    string // "llama", "qwen2", "qwen3", "qwen3moe", "gemma3" or "phi3"
	Layers  int    // transformer blocks (<arch>.block_count)
	Embd    int    // embedding width (<arch>.embedding_length)
	Heads   int    // attention heads
	KVHeads int    // key/value heads: grouped-query attention when fewer than Heads
	FF      int    // feed-forward width
	Vocab   int    // vocabulary size, at least 288: byte tokens and specials
	Ctx     int    // context length the model is trained for (<arch>.context_length)
	// HeadDim is the size of a query, key and value head
	// (<arch>.attention.key_length and value_length); 0 is Embd / Heads.
	// Only qwen3 and gemma3 files state it, as their converter does
	// (config.json's head_dim: 128 at Qwen3-0.6B's width 1024 and 16
	// heads, 256 at Gemma 3 1B's 1152 and 4).
	HeadDim int
	// SlidingWindow is gemma3's attention.sliding_window: five of every
	// six layers (those whose index modulo 6 is below 5) attend to the
	// last SlidingWindow positions only. gemma3 files need one (Gemma 3
	// 1B's is 512, Defaults' too). phi3 files may state one
	// (phi3.attention.sliding_window; the converter writes 0 where
	// config.json has none), which llama.cpp turns off for phi3 whatever
	// it says. The others have none.
	SlidingWindow int
	// RopeTheta is the rope frequency base and Eps the RMS norm epsilon;
	// 0 is the architecture's: 10000 and 1e-5 for llama, 1000000 and 1e-6
	// for qwen2, qwen3 and gemma3.
	RopeTheta, Eps float64
	// Tied: no output.weight; the output head reads token_embd.weight
	// (Llama 3.2, small Qwen2 and Qwen3, Gemma 3).
	Tied bool
	// RopeFreqs writes rope_freqs.weight (llama only): Llama 3.1/3.2's
	// llama3 rope scaling, a factor per rotated pair that divides its
	// frequency (ggml_rope_ext's third operand), computed as llama.cpp's
	// converter does (RopeFactors) with factor 32, low and high frequency
	// factors 1 and 4 and an original context of RopeOrigCtx.
	RopeFreqs bool
	// RopeOrigCtx is the llama3 scaling's original context length
	// (original_max_position_embeddings); 0 is Llama 3's 8192. Pairs
	// whose wavelength is below RopeOrigCtx/4 keep their frequency, those
	// above RopeOrigCtx are slowed by the factor, those between by a
	// blend. A file for short tests takes a short one, so that the
	// factors touch the positions the tests reach.
	RopeOrigCtx int
	// RopeFactors writes rope_factors_long.weight and
	// rope_factors_short.weight (phi3 only): Phi-3's longrope scaling, a
	// factor per rotated pair for contexts beyond RopeOrigCtx (Ctx when 0:
	// phi3.rope.scaling.original_context_length) and one for those up to
	// it (Phi3RopeFactors), and the converter's attn_factor
	// (Phi3AttnFactor).
	RopeFactors bool
	// Type is the matrices' type: f32, f16, bf16, q8_0 or q4_0, every
	// matrix that type (q4_0's output head too, as llama-quantize --pure
	// writes it). Norms and biases are f32.
	Type tensor.DType
	// Mix, where not empty, is a llama.cpp file type (gguf.ParseFileType's
	// names: q4_K_m, q6_K, iq4_xs, …) whose mix of types the matrices
	// take instead of Type (which must be f32): the file is the one
	// llama_model_quantize writes from the f32 file of the other options,
	// tensor for tensor and byte for byte (gguf.Mix's types,
	// gguf.QuantizedMeta's metadata, gguf.LoaderCompare's order).
	Mix string
	// Seed seeds the weights: normal with standard deviation 0.02, norms 1
	// (qwen3's and gemma3's query and key norms, and gemma3's norms after
	// the attention and the feed-forward, 1 + N(0, 0.1)).
	Seed uint64
	// Name is general.name; WriteFile's default is the file's name
	// without .gguf.
	Name string
	// ChatTemplate, where not empty, is tokenizer.chat_template: the Jinja
	// source chat programs format conversations with.
	ChatTemplate string
	// Experts, ExpertsUsed and ExpertFF are a qwen3moe file's mixture of
	// experts (moe.go): 0 is its default. A llama file with Experts has
	// one too (Mixtral's), ExpertsUsed 0 its default, its experts FF wide.
	Experts, ExpertsUsed, ExpertFF int
}

// Defaults returns the options of a small file of architecture arch, the
// defaults of `graphc gguf new -arch`: 2 layers, width 64, 4 heads, 2
// key/value heads, feed-forward width 128, 320 tokens, context 2048, f32,
// seed 1.
func Defaults(arch string) Options {
	o := Options{Arch: arch, Layers: 2, Embd: 64, Heads: 4, KVHeads: 2, FF: 128, Vocab: 320, Ctx: 2048, Type: tensor.F32, Seed: 1}
	if arch == "gemma3" {
		o.SlidingWindow = 512
	}
	return o
}

// fileTypes are llama.cpp's llama_ftype for files whose matrices are of
// each type the files take.
var fileTypes = map[tensor.DType]uint32{tensor.F32: 0, tensor.F16: 1, tensor.Q4_0: 2, tensor.Q8_0: 7, tensor.BF16: 32}

// MixWritable reports whether New writes files of the llama.cpp file type
// ft as Options.Mix: graphc has an encoder for its default type (the types
// its mix and fallbacks add, q8_0, q6_K, q5_K, q4_K, q3_K, q5_1, q5_0,
// q4_0 and f16, all have one).
func MixWritable(ft gguf.FileType) bool {
	return ft.Known() && ft.Default().Traits().Encode != nil
}

// Mixes lists the names of the file types MixWritable accepts.
func Mixes() []string {
	var names []string
	for _, ft := range gguf.FileTypes() {
		if MixWritable(ft) {
			names = append(names, ft.String())
		}
	}
	return names
}

// Check reports the first option that makes no file llama.cpp loads.
func (o *Options) Check() error {
	if _, ok := archDefaults[o.Arch]; !ok {
		return fmt.Errorf("-arch %s: want %s", o.Arch, strings.Join(Archs(), ", "))
	}
	if o.Mix != "" {
		if ft, ok := gguf.ParseFileType(o.Mix); !ok || !MixWritable(ft) {
			return fmt.Errorf("-type %s: want f32, f16, bf16, q8_0, q4_0 or one of llama.cpp's mixes %s", o.Mix, strings.Join(Mixes(), ", "))
		}
		if o.Type != tensor.F32 {
			return fmt.Errorf("a file of llama.cpp's mix %s takes its types from the mix, not -type %s", o.Mix, o.Type)
		}
	}
	if err := o.checkMoE(); err != nil {
		return err
	}
	if _, ok := fileTypes[o.Type]; !ok {
		return fmt.Errorf("-type %s: want f32, f16, bf16, q8_0 or q4_0", o.Type)
	}
	bs := o.Type.BlockSize()
	switch {
	case o.Layers < 1 || o.Embd < 1 || o.Heads < 1 || o.KVHeads < 1 || o.FF < 1 || o.Ctx < 1:
		return fmt.Errorf("-layers, -embd, -heads, -kv-heads, -ff and -ctx must be at least 1")
	case o.HeadDim < 0:
		return fmt.Errorf("-head-dim %d is negative", o.HeadDim)
	case o.HeadDim > 0 && !ownHeads(o.Arch):
		return fmt.Errorf("-head-dim: only qwen3, qwen3moe and gemma3 files state a head size of their own, not %s", o.Arch)
	case o.Arch == "gemma3" && o.SlidingWindow < 1:
		return fmt.Errorf("-sliding-window %d: gemma3 files need a window of at least 1", o.SlidingWindow)
	case o.Arch != "gemma3" && o.Arch != "phi3" && o.SlidingWindow != 0:
		return fmt.Errorf("-sliding-window: only gemma3 and phi3 files state a sliding window, not %s", o.Arch)
	case o.HeadDim == 0 && o.Embd%o.Heads != 0:
		return fmt.Errorf("-embd %d is not a multiple of -heads %d", o.Embd, o.Heads)
	case o.Heads%o.KVHeads != 0:
		return fmt.Errorf("-heads %d is not a multiple of -kv-heads %d: each key/value head serves a whole group of query heads", o.Heads, o.KVHeads)
	case o.headDim()%2 != 0:
		return fmt.Errorf("head size %d (-head-dim, or -embd / -heads) is odd: rope rotates pairs", o.headDim())
	case o.Embd%bs != 0 || o.FF%bs != 0 || o.headDim()*o.Heads%bs != 0:
		return fmt.Errorf("-embd %d, -ff %d and the attention's width %d (-head-dim × -heads) must be multiples of %s's block size %d", o.Embd, o.FF, o.headDim()*o.Heads, o.Type, bs)
	case o.RopeFreqs && o.Arch != "llama":
		return fmt.Errorf("-rope-freqs: only llama files have rope_freqs.weight (Llama 3's rope scaling), not %s", o.Arch)
	case o.RopeFactors && o.Arch != "phi3":
		return fmt.Errorf("-rope-factors: only phi3 files have rope_factors_long/short.weight (Phi-3's rope scaling), not %s", o.Arch)
	case o.SlidingWindow < 0:
		return fmt.Errorf("-sliding-window %d is negative", o.SlidingWindow)
	case o.RopeOrigCtx < 0:
		return fmt.Errorf("the rope scaling's original context %d is negative", o.RopeOrigCtx)
	case o.Vocab < 288:
		return fmt.Errorf("-vocab %d: the tokenizer needs at least 288 tokens (bytes, special tokens and a few pieces)", o.Vocab)
	}
	return nil
}

// headDim is the size of an attention head.
func (o *Options) headDim() int {
	if o.HeadDim > 0 {
		return o.HeadDim
	}
	return o.Embd / o.Heads
}

// archDefaults are each architecture's rope base, RMS norm epsilon and
// tokenizer model (gguf.Vocab's).
var archDefaults = map[string]struct {
	ropeTheta, eps float64
	vocab          string
}{
	"llama": {10000, 1e-5, "llama"},
	"qwen2": {1000000, 1e-6, "gpt2"},
	"qwen3": {1000000, 1e-6, "gpt2"},
	// Gemma 3's tokenizer is SentencePiece, as llama's.
	"gemma3": {1000000, 1e-6, "llama"},
	"phi3":   {10000, 1e-5, "llama"},
}

// Archs are the architectures New writes, sorted.
func Archs() []string {
	return slices.Sorted(maps.Keys(archDefaults))
}

// The llama3 rope scaling of Llama 3.2's config.json (Llama 3.1's factor
// is 8).
const (
	ropeFactor         = 32
	ropeLowFreqFactor  = 1
	ropeHighFreqFactor = 4
	ropeOrigCtx        = 8192
)

// RopeFactors are the llama3 rope scaling's frequency factors for nDims
// rotated dimensions at rope base theta, one per pair, as llama.cpp's
// convert_hf_to_gguf.py computes rope_freqs.weight: 1 where the pair's
// wavelength 2π/freq is below origCtx/high, factor above origCtx/low, and
// in between 1/((1-s)/factor + s) with s = (origCtx/wavelength - low) /
// (high - low).
func RopeFactors(nDims int, theta, factor, low, high, origCtx float64) []float32 {
	out := make([]float32, nDims/2)
	lowWave, highWave := origCtx/low, origCtx/high
	for i := range out {
		freq := float64(float32(1 / math.Pow(theta, float64(2*i)/float64(nDims)))) // torch's f32 arange
		wave := 2 * math.Pi / freq
		switch {
		case wave < highWave:
			out[i] = 1
		case wave > lowWave:
			out[i] = float32(factor)
		default:
			s := (origCtx/wave - low) / (high - low)
			out[i] = float32(1 / ((1-s)/factor + s))
		}
	}
	return out
}

// weight is one tensor New writes: rows of ne0 values, ne2 matrices of
// them (0: a single one).
type weight struct {
	name   string
	ne0    int
	rows   int
	ne2    int
	matrix bool // stored as Options.Type; otherwise f32
	ones   bool // a norm's weight
	// nearOne: a norm's weight of 1 + N(0, 0.1) values.
	nearOne bool
	freqs   bool      // rope_freqs.weight: ropeFreqs
	data    []float32 // fixed values (phi3's rope factors)
}

// WriteFile writes the file of o to path, whole or not at all.
func WriteFile(path string, o Options) error {
	if o.Name == "" {
		o.Name = strings.TrimSuffix(filepath.Base(path), ".gguf")
	}
	w, err := New(o)
	if err != nil {
		return err
	}
	return atomicfile.WriteFunc(path, 0o644, func(out io.Writer) error {
		_, err := w.WriteTo(out)
		return err
	})
}

// New builds the file of o as llama.cpp's converter writes one: its
// metadata, a tokenizer vocabulary (gguf.Vocab), and tensors named and
// shaped as llama.cpp loads them. The tensors' data is produced while the
// file is written, row by row, so a 1B-class file is never in memory.
func New(o Options) (*gguf.Writer, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	ad := archDefaults[o.Arch]
	if o.RopeTheta == 0 {
		o.RopeTheta = ad.ropeTheta
	}
	if o.Eps == 0 {
		o.Eps = ad.eps
	}
	dt := o.Type
	w := gguf.NewWriter()
	p := o.Arch + "."
	headDim := o.headDim()
	meta := []gguf.KV{
		{Key: "general.architecture", Value: o.Arch},
		{Key: "general.name", Value: o.Name},
		{Key: "general.file_type", Value: fileTypes[dt]},
		{Key: p + "vocab_size", Value: uint32(o.Vocab)},
		{Key: p + "context_length", Value: uint32(o.Ctx)},
		{Key: p + "embedding_length", Value: uint32(o.Embd)},
		{Key: p + "block_count", Value: uint32(o.Layers)},
		{Key: p + "feed_forward_length", Value: uint32(o.FF)},
		{Key: p + "attention.head_count", Value: uint32(o.Heads)},
		{Key: p + "attention.head_count_kv", Value: uint32(o.KVHeads)},
	}
	if ownHeads(o.Arch) {
		// Their converter writes config.json's head_dim as the key and
		// value head sizes, and no rope dimension count (llama.cpp rotates
		// whole key heads).
		meta = append(meta,
			gguf.KV{Key: p + "attention.key_length", Value: uint32(headDim)},
			gguf.KV{Key: p + "attention.value_length", Value: uint32(headDim)},
		)
	} else {
		meta = append(meta, gguf.KV{Key: p + "rope.dimension_count", Value: uint32(headDim)})
	}
	if o.Arch == "gemma3" {
		meta = append(meta, gguf.KV{Key: p + "attention.sliding_window", Value: uint32(o.SlidingWindow)})
	}
	meta = append(meta,
		gguf.KV{Key: p + "rope.freq_base", Value: float32(o.RopeTheta)},
		gguf.KV{Key: p + "attention.layer_norm_rms_epsilon", Value: float32(o.Eps)},
	)
	if o.Arch == "phi3" {
		meta = append(meta, phi3Meta(o)...)
	}
	meta = append(meta, o.moeMeta()...)
	if dt.Quantized() {
		meta = append(meta, gguf.KV{Key: "general.quantization_version", Value: uint32(2)})
	}
	vocab, err := gguf.Vocab(ad.vocab, o.Vocab)
	if err != nil {
		return nil, err
	}
	if o.Arch == "phi3" {
		vocab = phi3Vocab(vocab)
	}
	meta = append(meta, vocab...)
	if o.ChatTemplate != "" {
		// After the vocabulary, where llama.cpp's converter writes it.
		meta = append(meta, gguf.KV{Key: "tokenizer.chat_template", Value: o.ChatTemplate})
	}
	var mix gguf.FileType
	if o.Mix != "" {
		mix, _ = gguf.ParseFileType(o.Mix)
		meta = gguf.QuantizedMeta(meta, mix)
	}
	for _, kv := range meta {
		if err := w.AddMeta(kv.Key, kv.Value); err != nil {
			return nil, err
		}
	}

	kvDim, qDim := headDim*o.KVHeads, headDim*o.Heads
	var ts []weight
	var ropeFreqs []float32
	if o.RopeFreqs {
		// First, as the converter yields its generated tensors first.
		orig := ropeOrigCtx
		if o.RopeOrigCtx > 0 {
			orig = o.RopeOrigCtx
		}
		ropeFreqs = RopeFactors(headDim, o.RopeTheta, ropeFactor, ropeLowFreqFactor, ropeHighFreqFactor, float64(orig))
		ts = append(ts, weight{name: "rope_freqs.weight", ne0: len(ropeFreqs), rows: 1, freqs: true})
	}
	if o.RopeFactors {
		long, short := Phi3RopeFactors(headDim)
		ts = append(ts, weight{name: "rope_factors_long.weight", ne0: len(long), rows: 1, data: long},
			weight{name: "rope_factors_short.weight", ne0: len(short), rows: 1, data: short})
	}
	ts = append(ts, weight{name: "token_embd.weight", ne0: o.Embd, rows: o.Vocab, matrix: true})
	for l := range o.Layers {
		b := fmt.Sprintf("blk.%d.", l)
		if o.Arch == "phi3" {
			// Phi-3's fused projections: the queries', keys' and values'
			// rows in one matrix, the gate's and up's in another.
			ts = append(ts,
				weight{name: b + "attn_norm.weight", ne0: o.Embd, rows: 1, ones: true},
				weight{name: b + "attn_qkv.weight", ne0: o.Embd, rows: o.Embd + 2*kvDim, matrix: true},
				weight{name: b + "attn_output.weight", ne0: o.Embd, rows: o.Embd, matrix: true},
				weight{name: b + "ffn_norm.weight", ne0: o.Embd, rows: 1, ones: true},
				weight{name: b + "ffn_up.weight", ne0: o.Embd, rows: 2 * o.FF, matrix: true},
				weight{name: b + "ffn_down.weight", ne0: o.FF, rows: o.Embd, matrix: true},
			)
			continue
		}
		ts = append(ts,
			weight{name: b + "attn_norm.weight", ne0: o.Embd, rows: 1, ones: true},
			weight{name: b + "attn_q.weight", ne0: o.Embd, rows: qDim, matrix: true},
			weight{name: b + "attn_k.weight", ne0: o.Embd, rows: kvDim, matrix: true},
			weight{name: b + "attn_v.weight", ne0: o.Embd, rows: kvDim, matrix: true},
		)
		if o.Arch == "qwen2" {
			ts = append(ts,
				weight{name: b + "attn_q.bias", ne0: o.Embd, rows: 1},
				weight{name: b + "attn_k.bias", ne0: kvDim, rows: 1},
				weight{name: b + "attn_v.bias", ne0: kvDim, rows: 1},
			)
		}
		if ownHeads(o.Arch) {
			// The per-head norms' weights are not all 1, so that a graph
			// that skips them, or swaps them, computes other logits.
			ts = append(ts,
				weight{name: b + "attn_q_norm.weight", ne0: headDim, rows: 1, nearOne: true},
				weight{name: b + "attn_k_norm.weight", ne0: headDim, rows: 1, nearOne: true},
			)
		}
		ts = append(ts, weight{name: b + "attn_output.weight", ne0: qDim, rows: o.Embd, matrix: true})
		if o.Arch == "gemma3" {
			// Gemma's norms after the attention and the feed-forward,
			// stored as the converter does (1 + the checkpoint's weight).
			ts = append(ts, weight{name: b + "post_attention_norm.weight", ne0: o.Embd, rows: 1, nearOne: true})
		}
		ts = append(ts,
			weight{name: b + "ffn_norm.weight", ne0: o.Embd, rows: 1, ones: true},
		)
		if o.hasExperts() {
			ts = append(ts, o.moeFFN(b)...)
			continue
		}
		ts = append(ts,
			weight{name: b + "ffn_gate.weight", ne0: o.Embd, rows: o.FF, matrix: true},
			weight{name: b + "ffn_up.weight", ne0: o.Embd, rows: o.FF, matrix: true},
			weight{name: b + "ffn_down.weight", ne0: o.FF, rows: o.Embd, matrix: true},
		)
		if o.Arch == "gemma3" {
			ts = append(ts, weight{name: b + "post_ffw_norm.weight", ne0: o.Embd, rows: 1, nearOne: true})
		}
	}
	ts = append(ts, weight{name: "output_norm.weight", ne0: o.Embd, rows: 1, ones: true})
	if !o.Tied {
		ts = append(ts, weight{name: "output.weight", ne0: o.Embd, rows: o.Vocab, matrix: true})
	}
	shape := func(t weight) []int64 {
		if t.ne2 > 0 {
			return []int64{int64(t.ne0), int64(t.rows), int64(t.ne2)}
		}
		if t.rows == 1 {
			return []int64{int64(t.ne0)}
		}
		return []int64{int64(t.ne0), int64(t.rows)}
	}
	// The types and order: each matrix dt, in this order; or, with a
	// mix, each tensor the mix's type, in llama.cpp's loader's order.
	types := make([]tensor.DType, len(ts))
	order := make([]int, len(ts))
	for k, t := range ts {
		order[k] = k
		types[k] = tensor.F32
		if t.matrix {
			types[k] = dt
		}
	}
	if o.Mix != "" {
		nExperts := 0
		if o.hasExperts() {
			nExperts, _, _ = o.experts()
		}
		mts := make([]gguf.MixTensor, len(ts))
		for k, t := range ts {
			mts[k] = gguf.MixTensor{Name: t.name, Ne: shape(t), Type: tensor.F32}
		}
		if types, err = gguf.Mix(mix, gguf.MixModel{Arch: o.Arch, Layers: o.Layers, Heads: o.Heads, KVHeads: o.KVHeads, Experts: nExperts}, mts, false); err != nil {
			return nil, err
		}
		slices.SortStableFunc(order, func(a, b int) int { return gguf.LoaderCompare(ts[a].name, ts[b].name) })
	}
	for _, k := range order {
		t, typ, ne := ts[k], types[k], shape(ts[k])
		if typ.Traits().Encode == nil {
			return nil, fmt.Errorf("%s: graphc has no encoder for %s", t.name, typ)
		}
		produce := func(out io.Writer) error {
			r := rand.New(rand.NewPCG(o.Seed, uint64(k)))
			row := make([]float32, t.ne0)
			var buf []byte
			for range t.rows * max(t.ne2, 1) {
				for i := range row {
					if t.freqs {
						row[i] = ropeFreqs[i]
					} else if t.data != nil {
						row[i] = t.data[i]
					} else if t.ones {
						row[i] = 1
					} else if t.nearOne {
						row[i] = float32(1 + r.NormFloat64()*0.1)
					} else {
						row[i] = float32(r.NormFloat64() * 0.02)
					}
				}
				buf = tensor.Quantize(buf[:0], typ, row)
				if _, err := out.Write(buf); err != nil {
					return err
				}
			}
			return nil
		}
		if err := w.AddTensorFunc(t.name, typ, ne, produce); err != nil {
			return nil, err
		}
	}
	return w, nil
}
