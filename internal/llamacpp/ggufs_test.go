package llamacpp_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphc/graphc/gguf"
	"github.com/graphc/graphc/internal/llamacpp"
	"github.com/graphc/graphc/tensor"
	"github.com/graphc/graphc/tokenizer"
)

// oracle builds the harness, skipping the test where llama.cpp's
// libraries are absent.
func oracle(t *testing.T) *llamacpp.Harness {
	t.Helper()
	h, err := llamacpp.Build(t.TempDir())
	if errors.Is(err, llamacpp.ErrNoLibs) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// model holds what a GGUF file for llama.cpp needs besides the vocabulary:
// the architecture's hyperparameters and its tensors.
type model struct {
	arch                            string
	nEmbd, nHead, nLayer, nFF, nCtx int
	tensors                         []ggufTensor
}

type ggufTensor struct {
	name string
	typ  tensor.DType
	ne   []int64
	data []byte
}

// writeGGUF writes a file llama.cpp loads: m's metadata and tensors and
// v's tokenizer.ggml.* keys.
func writeGGUF(t *testing.T, m model, v tokenizer.Vocab) string {
	t.Helper()
	w := gguf.NewWriter()
	add := func(key string, value any) {
		if err := w.AddMeta(key, value); err != nil {
			t.Fatal(err)
		}
	}
	a := m.arch
	add("general.architecture", a)
	add(a+".context_length", uint32(m.nCtx))
	add(a+".embedding_length", uint32(m.nEmbd))
	add(a+".block_count", uint32(m.nLayer))
	add(a+".feed_forward_length", uint32(m.nFF))
	add(a+".attention.head_count", uint32(m.nHead))
	add(a+".attention.head_count_kv", uint32(m.nHead))
	add(a+".attention.layer_norm_rms_epsilon", float32(1e-5))
	add(a+".rope.freq_base", float32(10000))
	add(a+".rope.dimension_count", uint32(m.nEmbd/m.nHead))
	add(a+".vocab_size", uint32(len(v.Tokens)))

	add("tokenizer.ggml.model", v.Model)
	if v.Pre != "" {
		add("tokenizer.ggml.pre", v.Pre)
	}
	add("tokenizer.ggml.tokens", v.Tokens)
	if len(v.Scores) > 0 {
		add("tokenizer.ggml.scores", v.Scores)
	}
	types := make([]int32, len(v.Types))
	for i, typ := range v.Types {
		types[i] = int32(typ)
	}
	add("tokenizer.ggml.token_type", types)
	if len(v.Merges) > 0 {
		add("tokenizer.ggml.merges", v.Merges)
	}
	for key, id := range map[string]int32{"bos_token_id": v.BOS, "eos_token_id": v.EOS, "unknown_token_id": v.UNK, "padding_token_id": v.PAD} {
		if id != tokenizer.NoToken {
			add("tokenizer.ggml."+key, uint32(id))
		}
	}
	add("tokenizer.ggml.add_bos_token", v.AddBOS)
	add("tokenizer.ggml.add_eos_token", v.AddEOS)
	if v.Model == "llama" {
		add("tokenizer.ggml.add_space_prefix", v.AddSpacePrefix)
	}
	for _, x := range m.tensors {
		if err := w.AddTensor(x.name, x.typ, x.ne, x.data); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), a+"-"+v.Model+".gguf")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// llamaTensors returns the tensors of a llama-architecture model with
// deterministic pseudo-random weights, the matrices in typ (F32 or Q8_0),
// and the f32 values llama.cpp will see, by name: Q8_0 matrices
// dequantized.
func llamaTensors(m model, nVocab int, typ tensor.DType) ([]ggufTensor, map[string][]float32) {
	rng := rand.New(rand.NewPCG(1, 2))
	values := map[string][]float32{}
	var out []ggufTensor
	add := func(name string, typ tensor.DType, ne ...int) {
		n := 1
		var ne64 []int64
		for _, d := range ne {
			n *= d
			ne64 = append(ne64, int64(d))
		}
		v := make([]float32, n)
		for i := range v {
			if len(ne) == 1 {
				v[i] = 1 + 0.1*float32(rng.NormFloat64()) // a norm's scale
			} else {
				v[i] = 0.08 * float32(rng.NormFloat64())
			}
		}
		var data []byte
		if typ == tensor.Q8_0 {
			data = tensor.Quantize(nil, tensor.Q8_0, v)
			v = tensor.Dequantize(nil, tensor.Q8_0, data, n)
		} else {
			data = make([]byte, 4*n)
			for i, x := range v {
				binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(x))
			}
		}
		values[name] = v
		out = append(out, ggufTensor{name: name, typ: typ, ne: ne64, data: data})
	}
	add("token_embd.weight", tensor.F32, m.nEmbd, nVocab)
	for l := 0; l < m.nLayer; l++ {
		b := fmt.Sprintf("blk.%d.", l)
		add(b+"attn_norm.weight", tensor.F32, m.nEmbd)
		add(b+"attn_q.weight", typ, m.nEmbd, m.nEmbd)
		add(b+"attn_k.weight", typ, m.nEmbd, m.nEmbd)
		add(b+"attn_v.weight", typ, m.nEmbd, m.nEmbd)
		add(b+"attn_output.weight", typ, m.nEmbd, m.nEmbd)
		add(b+"ffn_norm.weight", tensor.F32, m.nEmbd)
		add(b+"ffn_gate.weight", typ, m.nEmbd, m.nFF)
		add(b+"ffn_up.weight", typ, m.nEmbd, m.nFF)
		add(b+"ffn_down.weight", typ, m.nFF, m.nEmbd)
	}
	add("output_norm.weight", tensor.F32, m.nEmbd)
	add("output.weight", typ, m.nEmbd, nVocab)
	return out, values
}

// spmVocab is a SentencePiece vocabulary of <unk>, <s>, </s>, the 256 byte
// tokens and pieces whose score grows with their length.
func spmVocab() tokenizer.Vocab {
	v := tokenizer.Vocab{Model: "llama", BOS: 1, EOS: 2, UNK: 0, PAD: tokenizer.NoToken, EOT: tokenizer.NoToken, AddBOS: true, AddSpacePrefix: true}
	add := func(s string, score float32, typ tokenizer.TokenType) {
		v.Tokens = append(v.Tokens, s)
		v.Scores = append(v.Scores, score)
		v.Types = append(v.Types, typ)
	}
	add("<unk>", 0, tokenizer.Unknown)
	add("<s>", 0, tokenizer.Control)
	add("</s>", 0, tokenizer.Control)
	for b := 0; b < 256; b++ {
		add(fmt.Sprintf("<0x%02X>", b), 0, tokenizer.Byte)
	}
	for i, p := range spmPieces() {
		// Distinct scores but for a few ties, to exercise leftmost-first.
		add(p, float32(-1000+10*len([]rune(p))+i%3), tokenizer.Normal)
	}
	return v
}

func spmPieces() []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.Fields("Hello world leading spaces tabs and newlines digits 123 3.14 café naïve 日本語 Ελληνικά emoji 😀 ok it's we'll THEY'RE mixed runs of whitespace special inside the a b c") {
		w = "▁" + w
		rs := []rune(w)
		for i := range rs {
			for j := i + 1; j <= len(rs) && j-i <= 4; j++ {
				p := string(rs[i:j])
				if !seen[p] {
					seen[p] = true
					out = append(out, p)
				}
			}
		}
	}
	for _, p := range []string{"▁▁", "▁▁▁", "\t", "\n", "\n\n"} {
		if !seen[p] {
			out = append(out, p)
		}
	}
	return out
}

// byteChars is GPT-2's bytes-to-unicode table.
func byteChars() [256]string {
	var out [256]string
	next := rune(256)
	for b := 0; b < 256; b++ {
		r := rune(b)
		if !(b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE) {
			r = next
			next++
		}
		out[b] = string(r)
	}
	return out
}

// bpeVocab is a byte-level BPE vocabulary: two control tokens, the 256
// byte characters, and the merges spelling a list of words left to right.
func bpeVocab(pre string) tokenizer.Vocab {
	v := tokenizer.Vocab{Model: "gpt2", Pre: pre, BOS: 0, EOS: 1, EOT: tokenizer.NoToken, UNK: tokenizer.NoToken, PAD: tokenizer.NoToken, AddBOS: pre != "qwen2"}
	add := func(s string, typ tokenizer.TokenType) {
		v.Tokens = append(v.Tokens, s)
		v.Types = append(v.Types, typ)
	}
	add("<|begin_of_text|>", tokenizer.Control)
	add("<|end_of_text|>", tokenizer.Control)
	chars := byteChars()
	have := map[string]bool{}
	for _, c := range chars {
		add(c, tokenizer.Normal)
		have[c] = true
	}
	spell := func(s string) []string {
		var out []string
		for i := 0; i < len(s); i++ {
			out = append(out, chars[s[i]])
		}
		return out
	}
	for _, w := range strings.Fields("Hello world leading spaces tabs and newlines digits 123 12 3.14 café naïve 日本語 Ελληνικά emoji 😀 ok 's 'll we THEY mixed runs of whitespace special inside the") {
		for _, form := range []string{w, " " + w} {
			cs := spell(form)
			prefix := cs[0]
			for _, c := range cs[1:] {
				merge := prefix + " " + c
				prefix += c
				if !have[prefix] {
					have[prefix] = true
					v.Merges = append(v.Merges, merge)
					add(prefix, tokenizer.Normal)
				}
			}
		}
	}
	for _, ws := range []string{"  ", "   ", "\n\n", " \n", "\t\t"} {
		cs := spell(ws)
		prefix := cs[0]
		for _, c := range cs[1:] {
			merge := prefix + " " + c
			prefix += c
			if !have[prefix] {
				have[prefix] = true
				v.Merges = append(v.Merges, merge)
				add(prefix, tokenizer.Normal)
			}
		}
	}
	return v
}
