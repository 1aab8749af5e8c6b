package tokenizer

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/graphc/graphc/gguf"
)

// Tokenizer encodes text into token ids and decodes ids into text. It is
// safe for concurrent use.
type Tokenizer struct {
	v       Vocab
	textID  map[string]int32
	special []int32 // control, user-defined and unknown tokens, longest text first
	// bpe only
	merges  map[uint64]bpeMerge // by pairKey of the parts' ids
	charID  [256]int32          // the token of each byte's character
	byteIDs [256][]int32        // the single-byte tokens of each byte's character
	words   *splitter           // the pre-tokenizer
	// ignoreMerges emits a word that is a whole token as it is, before
	// any merge, as the pre-tokenizer asks.
	ignoreMerges bool
}

// FromGGUF builds the tokenizer of f's vocabulary.
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	v, err := VocabFromGGUF(f)
	if err != nil {
		return nil, err
	}
	return New(*v)
}

// New builds a tokenizer for v, which it keeps (callers must not change
// v's slices afterwards).
func New(v Vocab) (*Tokenizer, error) {
	n := len(v.Tokens)
	if n == 0 {
		return nil, fmt.Errorf("tokenizer: the vocabulary has no tokens")
	}
	if len(v.Scores) != 0 && len(v.Scores) != n {
		return nil, fmt.Errorf("tokenizer: %d scores for %d tokens", len(v.Scores), n)
	}
	if len(v.Types) != 0 && len(v.Types) != n {
		return nil, fmt.Errorf("tokenizer: %d token types for %d tokens", len(v.Types), n)
	}
	for name, id := range map[string]int32{"bos": v.BOS, "eos": v.EOS, "eot": v.EOT, "unknown": v.UNK, "padding": v.PAD} {
		if id < NoToken || id >= int32(n) {
			return nil, fmt.Errorf("tokenizer: %s token id %d is outside the vocabulary [0, %d)", name, id, n)
		}
	}
	if v.AddBOS && v.BOS == NoToken {
		return nil, fmt.Errorf("tokenizer: the vocabulary adds a bos token but has none")
	}
	if v.AddEOS && v.EOS == NoToken {
		return nil, fmt.Errorf("tokenizer: the vocabulary adds an eos token but has none")
	}
	t := &Tokenizer{v: v, textID: make(map[string]int32, n)}
	for i, s := range v.Tokens {
		// Later duplicates win, as in llama.cpp's token_to_id.
		t.textID[s] = int32(i)
		switch t.Type(int32(i)) {
		case Control, UserDefined, Unknown:
			if s != "" {
				t.special = append(t.special, int32(i))
			}
		}
	}
	sort.SliceStable(t.special, func(a, b int) bool {
		return len(v.Tokens[t.special[a]]) > len(v.Tokens[t.special[b]])
	})
	switch v.Model {
	case "llama":
	case "gpt2":
		pre, err := findPreTokenizer(v.Pre)
		if err != nil {
			return nil, err
		}
		if t.words, err = newSplitter(pre); err != nil {
			return nil, err
		}
		t.ignoreMerges = pre.ignoreMerges
		if len(v.Merges) == 0 {
			return nil, fmt.Errorf("tokenizer: the BPE vocabulary has no merges (tokenizer.ggml.merges)")
		}
		t.merges = make(map[uint64]bpeMerge, len(v.Merges))
		for rank, m := range v.Merges {
			// The separator is searched from the second byte on, so that a
			// merge whose left part is a space still splits right.
			i := strings.IndexByte(m[min(1, len(m)):], ' ')
			if i < 0 {
				return nil, fmt.Errorf("tokenizer: merge %d %q has no space between its two parts", rank, m)
			}
			i += min(1, len(m))
			left, lok := t.textID[m[:i]]
			right, rok := t.textID[m[i+1:]]
			if !lok || !rok {
				// Merges are looked up by their parts' ids; Hugging Face
				// refuses such a vocabulary too.
				return nil, fmt.Errorf("tokenizer: merge %d %q has a part that is no token", rank, m)
			}
			key := pairKey(left, right)
			if _, dup := t.merges[key]; dup {
				continue // the first rank counts, as in llama.cpp
			}
			id, ok := t.textID[m[:i]+m[i+1:]]
			if !ok {
				id = NoToken
			}
			t.merges[key] = bpeMerge{rank: int32(rank), id: id}
		}
		for b := range 256 {
			t.charID[b] = NoToken
			if id, ok := t.textID[byteChar[b]]; ok {
				t.charID[b] = id
			}
			// What llama.cpp emits for a piece that is no token: the
			// single-byte tokens of its spelling.
			for j := 0; j < len(byteChar[b]); j++ {
				if id, ok := t.textID[byteChar[b][j:j+1]]; ok {
					t.byteIDs[b] = append(t.byteIDs[b], id)
				}
			}
		}
	default:
		return nil, fmt.Errorf("tokenizer: tokenizer model %q is not supported; supported: llama (SPM), gpt2 (BPE)", v.Model)
	}
	return t, nil
}

// Len is the number of tokens in the vocabulary.
func (t *Tokenizer) Len() int { return len(t.v.Tokens) }

// Vocab returns the vocabulary (shared, not copied).
func (t *Tokenizer) Vocab() *Vocab { return &t.v }

// Type is the token's type.
func (t *Tokenizer) Type(id int32) TokenType {
	if len(t.v.Types) == 0 {
		return Normal
	}
	return t.v.Types[id]
}

// BOS and EOS are the begin- and end-of-sequence tokens, or NoToken.
func (t *Tokenizer) BOS() int32 { return t.v.BOS }
func (t *Tokenizer) EOS() int32 { return t.v.EOS }

// EndOfGeneration says whether generating id should stop generation: the
// eos or eot token.
func (t *Tokenizer) EndOfGeneration(id int32) bool {
	return id != NoToken && (id == t.v.EOS || id == t.v.EOT)
}

// Encode returns text's token ids. addSpecial adds the bos and eos tokens
// the vocabulary asks for; parseSpecial lets control tokens' text in the
// input (such as "<s>") become those tokens rather than plain text. They
// are llama_tokenize's add_special and parse_special.
func (t *Tokenizer) Encode(text string, addSpecial, parseSpecial bool) []int32 {
	var out []int32
	if addSpecial && t.v.AddBOS {
		out = append(out, t.v.BOS)
	}
	prevSpecial := true // SPM prefixes a space to text at the start or after a special token
	for _, f := range t.partition(text, parseSpecial) {
		if f.token != NoToken {
			out = append(out, f.token)
			prevSpecial = true
			continue
		}
		if t.v.Model == "llama" {
			if t.v.AddSpacePrefix && prevSpecial {
				f.text = " " + f.text
			}
			out = t.encodeSPM(out, f.text)
		} else {
			out = t.encodeBPE(out, f.text)
		}
		prevSpecial = false
	}
	if addSpecial && t.v.AddEOS {
		out = append(out, t.v.EOS)
	}
	return out
}

// fragment is a special token or a run of text between them.
type fragment struct {
	token int32
	text  string
}

// partition cuts the special tokens out of text, longest token first,
// each at every place it occurs in the text left by the longer ones.
func (t *Tokenizer) partition(text string, parseSpecial bool) []fragment {
	if text == "" {
		// No fragment at all, so that SPM adds no space prefix.
		return nil
	}
	frags := []fragment{{token: NoToken, text: text}}
	for _, id := range t.special {
		typ := t.Type(id)
		if !parseSpecial && (typ == Control || typ == Unknown) {
			// User-defined tokens are matched even so, as Hugging Face's
			// tokenizers do.
			continue
		}
		s := t.v.Tokens[id]
		var next []fragment
		for _, f := range frags {
			if f.token != NoToken || !strings.Contains(f.text, s) {
				next = append(next, f)
				continue
			}
			rest := f.text
			for {
				i := strings.Index(rest, s)
				if i < 0 {
					break
				}
				if i > 0 {
					next = append(next, fragment{token: NoToken, text: rest[:i]})
				}
				next = append(next, fragment{token: id})
				rest = rest[i+len(s):]
			}
			if rest != "" {
				next = append(next, fragment{token: NoToken, text: rest})
			}
		}
		frags = next
	}
	return frags
}

// Piece is the text of one token: ▁ unescaped to a space for SPM, the raw
// byte of a byte token, BPE's byte characters mapped back to bytes.
// Control tokens have no text unless special is set. It may be part of a
// UTF-8 sequence; Decoder joins such parts.
func (t *Tokenizer) Piece(id int32, special bool) string {
	if id < 0 || int(id) >= len(t.v.Tokens) {
		return ""
	}
	s := t.v.Tokens[id]
	switch t.Type(id) {
	case Control:
		if special {
			return s
		}
		return ""
	case Unknown, UserDefined:
		return s
	case Normal:
		if t.v.Model == "llama" {
			return strings.ReplaceAll(s, spaceMarker, " ")
		}
		return decodeByteLevel(s)
	case Byte:
		if t.v.Model == "llama" {
			if b, ok := parseByteToken(s); ok {
				return string([]byte{b})
			}
		}
	}
	return ""
}

// Decode returns the text of ids, control tokens left out. Like llama.cpp's
// llama_detokenize, it drops the space an SPM vocabulary's space prefix
// put at the start.
func (t *Tokenizer) Decode(ids []int32) string {
	var b strings.Builder
	for i, id := range ids {
		p := t.Piece(id, false)
		if i == 0 && t.v.Model == "llama" && t.v.AddSpacePrefix {
			p = strings.TrimPrefix(p, " ")
		}
		b.WriteString(p)
	}
	return b.String()
}

// Decoder decodes tokens one at a time, as they are generated, returning
// only whole UTF-8 characters: a character split across tokens (byte
// tokens, BPE bytes) comes out when its last byte arrives.
type Decoder struct {
	t       *Tokenizer
	pending []byte
	started bool
}

// NewDecoder starts decoding tokens. atStart says they begin the
// sequence, so that the space an SPM space prefix added is dropped; text
// generated after a prompt keeps its first space.
func (t *Tokenizer) NewDecoder(atStart bool) *Decoder { return &Decoder{t: t, started: !atStart} }

// Add decodes one more token and returns the text now complete.
func (d *Decoder) Add(id int32) string {
	p := d.t.Piece(id, false)
	if !d.started && d.t.v.Model == "llama" && d.t.v.AddSpacePrefix {
		p = strings.TrimPrefix(p, " ")
	}
	d.started = true
	d.pending = append(d.pending, p...)
	cut := len(d.pending)
	// Hold back a trailing sequence that is the valid start of a
	// character; FullRune says true for bytes that can never become one.
	for i := max(0, len(d.pending)-utf8.UTFMax+1); i < len(d.pending); i++ {
		if utf8.RuneStart(d.pending[i]) && !utf8.FullRune(d.pending[i:]) {
			cut = i
			break
		}
	}
	out := string(d.pending[:cut])
	d.pending = append(d.pending[:0], d.pending[cut:]...)
	return out
}

// Flush returns what is held back: the bytes of an unfinished character.
func (d *Decoder) Flush() string {
	out := string(d.pending)
	d.pending = d.pending[:0]
	return out
}
