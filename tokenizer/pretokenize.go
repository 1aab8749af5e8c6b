package tokenizer

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// preTokenizer is how a BPE vocabulary cuts text into words before their
// merges: the regexes of llama.cpp's pre-tokenizer type, each cutting the
// pieces the ones before it left, and the flags llama.cpp sets for it.
type preTokenizer struct {
	// names are the tokenizer.ggml.pre values llama.cpp maps to it.
	names   []string
	regexes []string
	// ignoreMerges takes a word that is a whole token as it is, before any
	// merge, as Hugging Face's tokenizer does for these vocabularies.
	ignoreMerges bool
	// addBOS is tokenizer.ggml.add_bos_token's default.
	addBOS bool
	// noBOS: without tokenizer.ggml.bos_token_id there is no bos token
	// (rather than BPE's default, 11).
	noBOS bool
}

// Regexes several pre-tokenizers share.
const (
	reContractions = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])`
	reGPT2         = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)`
	reLlama3       = reContractions + `|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	reQwen2        = reContractions + `|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	reDeepseek3    = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+"
	reCJKKana      = `[一-龥぀-ゟ゠-ヿ]+`
	reBloom        = ` ?[^(\s|.,!?…。，、।۔،)]+`
	reUpperLower   = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+` + reContractions + `?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*` + reContractions + `?`
	reGPT4o        = `[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+` + reContractions + `?|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*` + reContractions + `?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// reAFMoEDigits stands for llama.cpp's own splitter (afmoeDigits).
	reAFMoEDigits = `\p{AFMoE_digits}`
)

// preTokenizers are the pre-tokenizers of llama.cpp's llm_tokenizer_bpe
// whose regexes graphc matches as llama.cpp does. Where llama.cpp runs a
// hand-written splitter for a regex (llama3, qwen2, gpt-2 and kimi-k2),
// the regex here is what that splitter does.
var preTokenizers = []preTokenizer{
	{names: []string{"llama-bpe", "llama3", "llama-v3", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano"},
		regexes: []string{reLlama3}, ignoreMerges: true, addBOS: true},
	{names: []string{"dbrx", "smaug-bpe"}, regexes: []string{reLlama3}},
	{names: []string{"glm4", "chatglm-bpe"}, regexes: []string{reLlama3}, noBOS: true},
	{names: []string{"jais-2"}, regexes: []string{reContractions + `|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}`}},
	{names: []string{"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "stablelm2", "hunyuan", "solar-open"},
		regexes: []string{reQwen2}},
	{names: []string{"grok-2"}, regexes: []string{reQwen2}},
	{names: []string{"qwen35"}, regexes: []string{reContractions + `|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`}},
	{names: []string{"ufakzeka"}, regexes: []string{`[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`}},
	{names: []string{"laguna"}, regexes: []string{`[^\n]+|[\n]+`, reQwen2}},
	{names: []string{"seed-coder"}, regexes: []string{reContractions + `|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+`}},
	{names: []string{"bailingmoe", "bailingmoe2", "llada-moe"}, regexes: []string{`'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+`}},
	{names: []string{"exaone-moe"}, regexes: []string{reContractions + `|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+`}},
	{names: []string{"minicpm5"}, regexes: []string{`\p{N}{1,3}`, reContractions + `|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`}, ignoreMerges: true},
	{names: []string{"gpt-2", "phi-2", "mpt", "olmo", "jais", "trillion", "granite-docling", "exaone4", "gigachat", "a.x-4.0", "mellum", "modern-bert",
		"jina-es", "jina-de", "jina-v2-es", "jina-v2-de", "jina-v1-en", "jina-v2-code", "roberta-bpe"},
		regexes: []string{reGPT2}},
	{names: []string{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2"},
		regexes: []string{`\p{N}`, reGPT2}},
	{names: []string{"falcon"}, regexes: []string{"[\\p{P}\\$\\+<=>\\^~\\|`]+", reGPT2, `[0-9][0-9][0-9]`}},
	{names: []string{"default", ""}, regexes: []string{`[\p{P}\$\+<=>\^~\|]+`, reGPT2, `\p{N}+`, `[0-9][0-9][0-9]`}},
	{names: []string{"deepseek-llm"}, regexes: []string{
		`[\r\n]`,
		"\\s?[A-Za-z\u00B5\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u01BA\u01BC-\u01BF\u01C4-\u0293\u0295-\u02AF\u0370-\u0373\u0376\u0377\u037B-\u037D\u037F\u0386\u0388-\u038A\u038C\u038E-\u03A1\u03A3-\u03F5\u03F7-\u0481\u048A-\u052F\u0531-\u0556\u10A0-\u10C5\u13A0-\u13F5\u13F8-\u13FD\u1C90-\u1CBA\u1CBD-\u1CBF\u1D00-\u1D2B\u1D6B-\u1D77\u1D79-\u1D9A\u1E00-\u1F15\u1F18-\u1F1D\u1F20-\u1F45\u1F48-\u1F4D\u1F50-\u1F57\u1F59\u1F5B\u1F5D\u1F5F-\u1F7D\u1F80-\u1FB4\u1FB6-\u1FBC\u1FBE\u1FC2-\u1FC4\u1FC6-\u1FCC\u1FD0-\u1FD3\u1FD6-\u1FDB\u1FE0-\u1FEC\u1FF2-\u1FF4\u1FF6-\u1FFC\u2102\u2107\u210A-\u2113\u2115\u2119-\u211D\u2124\u2126\u2128\u212A-\u212D\u212F-\u2134\u2139\u213C-\u213F\u2145-\u2149\u214E\u2183\u2184\u2C00-\u2C7B\u2C7E-\u2CE4\u2CEB-\u2CEE\u2CF2\u2CF3\uA640-\uA66D\uA680-\uA69B\uA722-\uA76F\uA771-\uA787\uA78B-\uA78E\uAB70-\uABBF\uFB00-\uFB06\uFB13-\uFB17\uFF21-\uFF3A\uFF41-\uFF5A\U00010400-\U0001044F\U000104B0-\U000104D3\U000104D8-\U000104FB\U00010C80-\U00010CB2\U00010CC0-\U00010CF2\U000118A0-\U000118DF\U0001E900-\U0001E943]+",
		`\s?[!-/:-~！-／：-～‘-‟　-。]+`,
		`\s+$`,
		`[一-龥ࠀ-一가-퟿]+`,
		`\p{N}+`,
	}},
	{names: []string{"deepseek-coder"}, regexes: []string{`[\r\n]`, `\s?\p{L}+`, `\s?\p{P}+`, `[一-龥ࠀ-一가-퟿]+`, `\p{N}`}},
	{names: []string{"deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"},
		regexes: []string{`\p{N}{1,3}`, reCJKKana, reDeepseek3 + `[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`}},
	{names: []string{"spark2_5"}, regexes: []string{`\p{N}{1,3}`, reCJKKana, reDeepseek3 + `|[\r\n]|\s+(?!\S)|\s+`, `\p{N}`}},
	{names: []string{"afmoe"}, regexes: []string{reAFMoEDigits, "[\u4E00-\u9FFF\u3400-\u4DBF\uF900-\uFAFF\u3040-\u309F\u30A0-\u30FF\uFF65-\uFF9F\u2F00-\u2FDF\u0E40-\u0E7F\u0E80-\u0EFF\u1780-\u17FF\u1000-\u109F\uAA60-\uAA7F\uA9E0-\uA9FF\uAC00-\uD7AF\u1100-\u11FF]+", reDeepseek3 + `[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`}},
	{names: []string{"youtu"}, regexes: []string{`[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+`,
		reUpperLower + `|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`}, ignoreMerges: true},
	// llama.cpp splits tiny_aya's \d{1,3}(?=(?:\d{3})*\b) with AFMoE's
	// splitter.
	{names: []string{"tiny_aya", "cohere2moe"}, regexes: []string{reAFMoEDigits,
		reUpperLower + `|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`}},
	{names: []string{"poro-chat", "bloom", "gpt3-finnish"}, regexes: []string{reBloom}},
	{names: []string{"viking"}, regexes: []string{reBloom, `\p{N}`}},
	{names: []string{"tekken"}, regexes: []string{`[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`},
		ignoreMerges: true, addBOS: true},
	{names: []string{"gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"}, regexes: []string{reGPT4o}},
	{names: []string{"granite-embed-multi-97m"}, regexes: []string{strings.ReplaceAll(reGPT4o, `(?=[\p{L}])`, `(?=[\p{L}\p{M}])`)}, ignoreMerges: true},
	{names: []string{"chameleon"}, regexes: []string{`<sentinel:[0-9]+>`, `(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z`, "([\\t\\n]|    |  )", `\p{N}`, "[\\p{P}!-/:-@\\[-`{-~]", reGPT2}, addBOS: true},
	{names: []string{"superbpe"}, regexes: []string{`\p{N}+`, `(?=(\d{3})+(?!\d))`}},
	{names: []string{"kimi-k2"}, regexes: []string{`\p{Han}+|[^\r\n\p{L}\p{N}]?(?:(?!\p{Han})\p{L})+` + reContractions + `?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`}},
}

// unsupportedPre are pre-tokenizers llama.cpp knows that graphc does not:
// they run BPE on raw UTF-8 with spaces escaped as ▁, not on GPT-2's
// byte characters.
var unsupportedPre = []string{"gemma4", "granite-embed-multi-311m", "sarvam-moe"}

// PreTokenizers returns the BPE pre-tokenizers (tokenizer.ggml.pre
// values) graphc supports, sorted; "" stands for a file without one.
func PreTokenizers() []string {
	var names []string
	for _, p := range preTokenizers {
		names = append(names, p.names...)
	}
	sort.Strings(names)
	return names
}

// findPreTokenizer returns the pre-tokenizer named name.
func findPreTokenizer(name string) (*preTokenizer, error) {
	for i := range preTokenizers {
		for _, n := range preTokenizers[i].names {
			if n == name {
				return &preTokenizers[i], nil
			}
		}
	}
	known := PreTokenizers()[1:] // less ""
	why := ""
	for _, n := range unsupportedPre {
		if n == name {
			why = " (it runs BPE on raw UTF-8, not byte characters)"
		}
	}
	return nil, fmt.Errorf("tokenizer: BPE pre-tokenizer %q is not supported%s; supported: %s", name, why, strings.Join(known, ", "))
}

// splitScratch is split's working memory, reused across calls.
type splitScratch struct {
	runes, cat, plain []rune
	ends, next        []int
	m                 matcher
}

var scratchPool = sync.Pool{New: func() any { return new(splitScratch) }}

// splitter is a pre-tokenizer's regexes compiled.
type splitter struct {
	regexes []*regex
}

func newSplitter(p *preTokenizer) (*splitter, error) {
	s := &splitter{}
	for _, src := range p.regexes {
		var re *regex
		if src == reAFMoEDigits {
			re = &regex{src: src, custom: afmoeDigits, category: true}
		} else {
			var err error
			if re, err = compileRegex(src); err != nil {
				return nil, fmt.Errorf("tokenizer: pre-tokenizer %s: %v", p.names[0], err)
			}
		}
		s.regexes = append(s.regexes, re)
	}
	return s, nil
}

// split cuts text into words and passes each to word in turn. Bytes that
// are not UTF-8 become U+FFFD first, as in llama.cpp.
func (s *splitter) split(text string, word func(string)) {
	sc := scratchPool.Get().(*splitScratch)
	defer scratchPool.Put(sc)
	cs := sc.runes[:0]
	for _, r := range text {
		cs = append(cs, r) // U+FFFD for each byte that is not UTF-8
	}
	sc.runes = cs
	if !utf8.ValidString(text) {
		text = string(cs)
	}
	catView, plainView := sc.cat[:0], sc.plain[:0]
	ends := append(sc.ends[:0], len(cs))
	next := sc.next[:0]
	m := &sc.m
	for _, re := range s.regexes {
		if re.category {
			if len(catView) != len(cs) {
				for _, r := range cs {
					if r >= utf8.RuneSelf {
						r = categorySym(r)
					}
					catView = append(catView, r)
				}
			}
			m.text = catView
		} else {
			if len(plainView) != len(cs) {
				for _, r := range cs {
					if r >= utf8.RuneSelf && unicode.IsSpace(r) {
						r = symSpace
					}
					plainView = append(plainView, r)
				}
			}
			m.text = plainView
		}
		next = next[:0]
		lo := 0
		for _, hi := range ends {
			if re.custom != nil {
				next = re.custom(m.text, lo, hi, next)
			} else {
				next = m.split(re, lo, hi, next)
			}
			lo = hi
		}
		ends, next = next, ends
	}
	sc.cat, sc.plain, sc.ends, sc.next = catView, plainView, ends, next
	// The ends count characters; walk text to turn them into bytes.
	at, off := 0, 0
	for _, hi := range ends {
		start := off
		for ; at < hi; at++ {
			if cs[at] < utf8.RuneSelf {
				off++
			} else {
				off += utf8.RuneLen(cs[at])
			}
		}
		word(text[start:off])
	}
}

// words returns split's words.
func (s *splitter) words(text string) []string {
	var out []string
	s.split(text, func(w string) { out = append(out, w) })
	return out
}

// afmoeDigits is llama.cpp's splitter for AFMoE's digits: a run of digits
// is cut into threes from its end, and each piece ends after a group, so
// that the text before a run goes with the run's first group.
func afmoeDigits(text []rune, lo, hi int, ends []int) []int {
	prev := lo
	isNum := func(i int) bool { return i < hi && (text[i] == symNumber || text[i] >= '0' && text[i] <= '9') }
	for pos := lo; pos < hi; {
		if !isNum(pos) {
			pos++
			continue
		}
		start := pos
		for pos < hi && isNum(pos) {
			pos++
		}
		at := start + (pos-start)%3
		if at == start {
			at += 3
		}
		for ; at <= pos; at += 3 {
			ends = append(ends, at)
			prev = at
		}
	}
	if prev < hi {
		ends = append(ends, hi)
	}
	return ends
}
