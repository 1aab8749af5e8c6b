package codegen

import (
	"strings"
	"unicode"

	"github.com/graphc/graphc/backend"
)

// namer turns tensor and dim names into unique Go identifiers.
type namer struct{ used map[string]bool }

func newNamer(taken ...string) *namer {
	n := &namer{used: map[string]bool{}}
	for _, r := range taken {
		n.used[r] = true
	}
	return n
}

// initialisms are the words camel writes in capitals, as Go names do:
// "n_kv" is NKV, "cpu" CPU.
var initialisms = map[string]bool{
	"blas": true, "cpu": true, "cuda": true, "gpu": true, "id": true, "json": true,
	"kq": true, "kqv": true, "kv": true, "rpc": true,
}

// camel converts "blk.0.attn_q.weight" to "Blk0AttnQWeight" and "n_kv" to
// "NKV".
func camel(s string) string {
	var b strings.Builder
	words := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		letters := strings.TrimRightFunc(w, unicode.IsDigit)
		if initialisms[strings.ToLower(letters)] {
			b.WriteString(strings.ToUpper(letters) + w[len(letters):])
			continue
		}
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	if b.Len() == 0 || unicode.IsDigit(rune(b.String()[0])) {
		return "X" + b.String()
	}
	return b.String()
}

// exported returns a unique exported identifier for name, with prefix.
func (n *namer) exported(prefix, name string) string { return n.unique(prefix + camel(name)) }

// local returns a unique unexported identifier for name.
func (n *namer) local(prefix, name string) string {
	c := camel(name)
	if prefix == "" {
		r := []rune(c)
		i := 0
		for i < len(r) && unicode.IsUpper(r[i]) {
			i++
		}
		if i > 1 && i < len(r) {
			i-- // keep the capital of the next word: "KQMask" -> "kqMask"
		}
		for k := 0; k < i || k == 0; k++ {
			r[k] = unicode.ToLower(r[k])
		}
		c = string(r)
	} else {
		c = prefix + c
	}
	if reserved[c] {
		c += "_"
	}
	return n.unique(c)
}

func (n *namer) unique(s string) string {
	base, k := s, 2
	for n.used[s] {
		s = base + "_" + itoa(k)
		k++
	}
	n.used[s] = true
	return s
}

func itoa(k int) string {
	if k < 10 {
		return string(rune('0' + k))
	}
	return itoa(k/10) + string(rune('0'+k%10))
}

// reserved are Go keywords and the identifiers generated code uses itself,
// the backends' package names among them: a local of that name would hide
// the package.
var reserved = map[string]bool{
	"break": true, "case": true, "chan": true, "const": true, "continue": true, "default": true,
	"defer": true, "else": true, "fallthrough": true, "for": true, "func": true, "go": true, "goto": true,
	"if": true, "import": true, "interface": true, "map": true, "package": true, "range": true,
	"return": true, "select": true, "struct": true, "switch": true, "type": true, "var": true,
	"d": true, "m": true, "in": true, "out": true, "err": true, "runtime": true, "fmt": true,
	"math": true, "sync": true, "os": true, "flag": true, "errors": true,
	"c": true, "p": true, "i": true, "s": true, "w": true, "t": true, "k": true, "lo": true, "hi": true, "be": true,
	"regionParts": true, "regions": true, "hostBytes": true, "weightBytes": true, "packedBytes": true,
	"regionMethods": true, "viewChecks": true, "reuse": true,
	"tensor": true, "ops": true, "backend": true, "engine": true, "mainutil": true, "gguf": true, "lm": true, "lmcli": true,
}

func init() {
	for _, k := range backend.Kinds {
		reserved[k.PackageName()] = true
	}
}
