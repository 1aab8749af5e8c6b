package cli

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/tensor"
)

// archShape is what `graphc gguf new -arch` writes a model file of.
type archShape struct {
	arch                         string // "llama" or "qwen2"
	layers, embd, heads, kvHeads int
	ff, vocab, ctx               int
	ropeTheta, eps               float64
	tied                         bool // no output.weight: the head reads token_embd.weight
}

func (a *archShape) register(fs *flag.FlagSet) {
	fs.IntVar(&a.layers, "layers", 2, "-arch: transformer blocks (<arch>.block_count)")
	fs.IntVar(&a.embd, "embd", 64, "-arch: embedding width (<arch>.embedding_length)")
	fs.IntVar(&a.heads, "heads", 4, "-arch: attention heads")
	fs.IntVar(&a.kvHeads, "kv-heads", 2, "-arch: key/value heads (grouped-query attention when fewer than -heads)")
	fs.IntVar(&a.ff, "ff", 128, "-arch: feed-forward width")
	fs.IntVar(&a.vocab, "vocab", 320, "-arch: vocabulary size (at least 288: byte tokens and specials)")
	fs.IntVar(&a.ctx, "ctx", 2048, "-arch: context length the model is trained for (<arch>.context_length)")
	fs.Float64Var(&a.ropeTheta, "rope-theta", 0, "-arch: rope frequency base (0: 10000 for llama, 1000000 for qwen2)")
	fs.Float64Var(&a.eps, "eps", 0, "-arch: RMS norm epsilon (0: 1e-5 for llama, 1e-6 for qwen2)")
	fs.BoolVar(&a.tied, "tied", false, "-arch: no output.weight; the output head is token_embd.weight (Llama 3.2, small Qwen2)")
}

func (a *archShape) check(dt tensor.DType) error {
	if a.arch != "llama" && a.arch != "qwen2" {
		return &usageError{fmt.Sprintf("-arch %s: want llama or qwen2", a.arch)}
	}
	if a.ropeTheta == 0 {
		a.ropeTheta = map[string]float64{"llama": 10000, "qwen2": 1000000}[a.arch]
	}
	if a.eps == 0 {
		a.eps = map[string]float64{"llama": 1e-5, "qwen2": 1e-6}[a.arch]
	}
	bs := dt.BlockSize()
	switch {
	case a.layers < 1 || a.embd < 1 || a.heads < 1 || a.kvHeads < 1 || a.ff < 1 || a.ctx < 1:
		return &usageError{"-layers, -embd, -heads, -kv-heads, -ff and -ctx must be at least 1"}
	case a.embd%a.heads != 0:
		return &usageError{fmt.Sprintf("-embd %d is not a multiple of -heads %d", a.embd, a.heads)}
	case a.heads%a.kvHeads != 0:
		return &usageError{fmt.Sprintf("-heads %d is not a multiple of -kv-heads %d: each key/value head serves a whole group of query heads", a.heads, a.kvHeads)}
	case (a.embd/a.heads)%2 != 0:
		return &usageError{fmt.Sprintf("head size %d (-embd / -heads) is odd: rope rotates pairs", a.embd/a.heads)}
	case a.embd%bs != 0 || a.ff%bs != 0:
		return &usageError{fmt.Sprintf("-embd %d and -ff %d must be multiples of %s's block size %d", a.embd, a.ff, dt, bs)}
	case a.vocab < 288:
		return &usageError{fmt.Sprintf("-vocab %d: the tokenizer needs at least 288 tokens (bytes, special tokens and a few pieces)", a.vocab)}
	}
	return nil
}

// fileType is llama.cpp's llama_ftype for files whose matrices are dt.
func fileType(dt tensor.DType) uint32 {
	return map[tensor.DType]uint32{tensor.F32: 0, tensor.F16: 1, tensor.Q4_0: 2, tensor.Q8_0: 7, tensor.BF16: 32}[dt]
}

// archFile builds a GGUF file of architecture a as llama.cpp's converter
// writes one: its metadata, a tokenizer vocabulary (see gguf's doc), and
// tensors named and shaped as llama.cpp loads them, random (normal with
// standard deviation 0.02; norms 1), matrices stored as dt. The tensors'
// data is produced while the file is written, row by row, so a 1B-class
// file is never in memory.
func archFile(a *archShape, dt tensor.DType, seed uint64, name string) (*gguf.Writer, error) {
	w := gguf.NewWriter()
	p := a.arch + "."
	headDim := a.embd / a.heads
	meta := []gguf.KV{
		{Key: "general.architecture", Value: a.arch},
		{Key: "general.name", Value: name},
		{Key: "general.file_type", Value: fileType(dt)},
		{Key: p + "vocab_size", Value: uint32(a.vocab)},
		{Key: p + "context_length", Value: uint32(a.ctx)},
		{Key: p + "embedding_length", Value: uint32(a.embd)},
		{Key: p + "block_count", Value: uint32(a.layers)},
		{Key: p + "feed_forward_length", Value: uint32(a.ff)},
		{Key: p + "attention.head_count", Value: uint32(a.heads)},
		{Key: p + "attention.head_count_kv", Value: uint32(a.kvHeads)},
		{Key: p + "rope.dimension_count", Value: uint32(headDim)},
		{Key: p + "rope.freq_base", Value: float32(a.ropeTheta)},
		{Key: p + "attention.layer_norm_rms_epsilon", Value: float32(a.eps)},
	}
	if dt.Quantized() {
		meta = append(meta, gguf.KV{Key: "general.quantization_version", Value: uint32(2)})
	}
	vocab, err := gguf.Vocab(map[string]string{"llama": "llama", "qwen2": "gpt2"}[a.arch], a.vocab)
	if err != nil {
		return nil, err
	}
	meta = append(meta, vocab...)
	for _, kv := range meta {
		if err := w.AddMeta(kv.Key, kv.Value); err != nil {
			return nil, err
		}
	}

	kvDim := headDim * a.kvHeads
	type weight struct {
		name   string
		ne0    int
		rows   int
		matrix bool // stored as dt; otherwise f32
		ones   bool // a norm's weight
	}
	ts := []weight{{name: "token_embd.weight", ne0: a.embd, rows: a.vocab, matrix: true}}
	for l := range a.layers {
		b := fmt.Sprintf("blk.%d.", l)
		ts = append(ts,
			weight{name: b + "attn_norm.weight", ne0: a.embd, rows: 1, ones: true},
			weight{name: b + "attn_q.weight", ne0: a.embd, rows: a.embd, matrix: true},
			weight{name: b + "attn_k.weight", ne0: a.embd, rows: kvDim, matrix: true},
			weight{name: b + "attn_v.weight", ne0: a.embd, rows: kvDim, matrix: true},
		)
		if a.arch == "qwen2" {
			ts = append(ts,
				weight{name: b + "attn_q.bias", ne0: a.embd, rows: 1},
				weight{name: b + "attn_k.bias", ne0: kvDim, rows: 1},
				weight{name: b + "attn_v.bias", ne0: kvDim, rows: 1},
			)
		}
		ts = append(ts,
			weight{name: b + "attn_output.weight", ne0: a.embd, rows: a.embd, matrix: true},
			weight{name: b + "ffn_norm.weight", ne0: a.embd, rows: 1, ones: true},
			weight{name: b + "ffn_gate.weight", ne0: a.embd, rows: a.ff, matrix: true},
			weight{name: b + "ffn_up.weight", ne0: a.embd, rows: a.ff, matrix: true},
			weight{name: b + "ffn_down.weight", ne0: a.ff, rows: a.embd, matrix: true},
		)
	}
	ts = append(ts, weight{name: "output_norm.weight", ne0: a.embd, rows: 1, ones: true})
	if !a.tied {
		ts = append(ts, weight{name: "output.weight", ne0: a.embd, rows: a.vocab, matrix: true})
	}
	for k, t := range ts {
		typ := tensor.F32
		if t.matrix {
			typ = dt
		}
		ne := []int64{int64(t.ne0), int64(t.rows)}
		if t.rows == 1 {
			ne = ne[:1]
		}
		produce := func(out io.Writer) error {
			r := rand.New(rand.NewPCG(seed, uint64(k)))
			row := make([]float32, t.ne0)
			var buf []byte
			for range t.rows {
				for i := range row {
					if t.ones {
						row[i] = 1
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
