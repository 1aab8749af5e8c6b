package tokenizer

import (
	"fmt"

	"github.com/graphc/graphc/gguf"
)

// TokenType is a token's kind as tokenizer.ggml.token_type stores it
// (llama.cpp's llama_token_type).
type TokenType int32

const (
	Undefined   TokenType = 0
	Normal      TokenType = 1
	Unknown     TokenType = 2
	Control     TokenType = 3
	UserDefined TokenType = 4
	Unused      TokenType = 5
	Byte        TokenType = 6
)

// NoToken marks a special token the vocabulary does not have.
const NoToken int32 = -1

// Vocab is a vocabulary as a GGUF file's tokenizer.ggml.* metadata holds
// it. FromGGUF fills one from a file; tests build small ones by hand.
type Vocab struct {
	// Model is tokenizer.ggml.model: "llama" (SPM) or "gpt2" (BPE).
	Model string
	// Pre is tokenizer.ggml.pre, the BPE pre-tokenizer: one of llama.cpp's
	// names, such as "llama-bpe", "qwen2" or "gpt-2" (docs/gguf.md lists
	// them); "" is llama.cpp's default.
	Pre    string
	Tokens []string
	// Scores rank SPM merges, higher first; missing scores are 0.
	Scores []float32
	// Types default to Normal where missing.
	Types []TokenType
	// Merges are BPE's merge rules, "left right", in rank order.
	Merges []string

	BOS, EOS, EOT, UNK, PAD int32
	AddBOS, AddEOS          bool
	// AddSpacePrefix prefixes SPM text with a space, as SentencePiece's
	// dummy prefix does.
	AddSpacePrefix bool
}

// metadata keys, llama.cpp's LLM_KV_TOKENIZER_*.
const (
	keyModel          = "tokenizer.ggml.model"
	keyPre            = "tokenizer.ggml.pre"
	keyTokens         = "tokenizer.ggml.tokens"
	keyScores         = "tokenizer.ggml.scores"
	keyTypes          = "tokenizer.ggml.token_type"
	keyMerges         = "tokenizer.ggml.merges"
	keyBOS            = "tokenizer.ggml.bos_token_id"
	keyEOS            = "tokenizer.ggml.eos_token_id"
	keyEOT            = "tokenizer.ggml.eot_token_id"
	keyUNK            = "tokenizer.ggml.unknown_token_id"
	keyPAD            = "tokenizer.ggml.padding_token_id"
	keyAddBOS         = "tokenizer.ggml.add_bos_token"
	keyAddEOS         = "tokenizer.ggml.add_eos_token"
	keyAddSpacePrefix = "tokenizer.ggml.add_space_prefix"
)

// VocabFromGGUF reads the vocabulary from f's metadata. Defaults for keys
// the file lacks are llama.cpp's: SPM has bos 1, eos 2, unk 0, adds bos
// and a space prefix; BPE has bos and eos 11 and adds bos only for the
// pre-tokenizers that llama.cpp says do (llama-bpe, tekken, chameleon).
func VocabFromGGUF(f *gguf.File) (*Vocab, error) {
	model, ok := f.MetaString(keyModel)
	if !ok {
		return nil, fmt.Errorf("tokenizer: the file has no %s; it carries no vocabulary (write one with the model's tokenizer, e.g. llama.cpp's convert_hf_to_gguf.py)", keyModel)
	}
	v := &Vocab{Model: model, BOS: NoToken, EOS: NoToken, EOT: NoToken, UNK: NoToken, PAD: NoToken}
	v.Pre, _ = f.MetaString(keyPre)
	tokens, _ := f.MetaValue(keyTokens)
	if v.Tokens, ok = tokens.([]string); !ok {
		return nil, fmt.Errorf("tokenizer: %s is %T, want an array of strings", keyTokens, tokens)
	}
	if s, found := f.MetaValue(keyScores); found {
		if v.Scores, ok = s.([]float32); !ok {
			return nil, fmt.Errorf("tokenizer: %s is %T, want an array of f32", keyScores, s)
		}
	}
	if t, found := f.MetaValue(keyTypes); found {
		ints, err := int32s(t)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %v", keyTypes, err)
		}
		for _, x := range ints {
			v.Types = append(v.Types, TokenType(x))
		}
	}
	if m, found := f.MetaValue(keyMerges); found {
		if v.Merges, ok = m.([]string); !ok {
			return nil, fmt.Errorf("tokenizer: %s is %T, want an array of strings", keyMerges, m)
		}
	}
	switch model {
	case "llama":
		v.BOS, v.EOS, v.UNK = 1, 2, 0
		v.AddBOS, v.AddSpacePrefix = true, true
	case "gpt2":
		// llama.cpp's BPE defaults; files nearly always override them.
		v.BOS, v.EOS = 11, 11
		if pre, err := findPreTokenizer(v.Pre); err == nil {
			v.AddBOS = pre.addBOS
			if pre.noBOS {
				v.BOS = NoToken
			}
		}
	}
	for key, id := range map[string]*int32{keyBOS: &v.BOS, keyEOS: &v.EOS, keyEOT: &v.EOT, keyUNK: &v.UNK, keyPAD: &v.PAD} {
		if n, found := f.MetaInt(key); found {
			*id = int32(n)
		}
	}
	for key, b := range map[string]*bool{keyAddBOS: &v.AddBOS, keyAddEOS: &v.AddEOS, keyAddSpacePrefix: &v.AddSpacePrefix} {
		if x, found := f.MetaValue(key); found {
			if *b, ok = x.(bool); !ok {
				return nil, fmt.Errorf("tokenizer: %s is %T, want a bool", key, x)
			}
		}
	}
	return v, nil
}

func int32s(v any) ([]int32, error) {
	switch v := v.(type) {
	case []int32:
		return v, nil
	case []uint32:
		out := make([]int32, len(v))
		for i, x := range v {
			out[i] = int32(x)
		}
		return out, nil
	}
	return nil, fmt.Errorf("is %T, want an array of i32", v)
}
