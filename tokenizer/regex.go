package tokenizer

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizers' regexes are matched as llama.cpp's
// unicode_regex_split matches them: with std::regex's ECMAScript grammar
// (leftmost alternative first, greedy quantifiers, atomic lookahead), on a
// view of the text in which a regex that names a Unicode category
// (\p{L} and the like) sees every non-ASCII character as a stand-in for its
// category, and any other regex sees characters as they are. Either way
// non-ASCII whitespace reads as \v, so that \s matches it. This file holds
// a small backtracking matcher for the subset of the grammar those regexes
// use.

// Stand-ins for non-ASCII characters in a category view: llama.cpp's
// collapsed bytes, and one of our own for Han, which is a letter to \p{L}
// and the only character \p{Han} matches.
const (
	symOther  = 0xD0
	symNumber = 0xD1
	symLetter = 0xD2
	symPunct  = 0xD3
	symMark   = 0xD4
	symSymbol = 0xD5
	symHan    = 0xD6
	symSpace  = 0x0B
)

// categorySym is the stand-in of a non-ASCII character in a category view.
func categorySym(r rune) rune {
	switch {
	case unicode.IsSpace(r):
		return symSpace
	case unicode.IsLetter(r):
		if isHan(r) {
			return symHan
		}
		return symLetter
	case unicode.IsNumber(r):
		return symNumber
	case unicode.IsPunct(r):
		return symPunct
	case unicode.IsMark(r):
		return symMark
	case unicode.IsSymbol(r):
		return symSymbol
	}
	return symOther
}

// isHan is llama.cpp's unicode_cpt_is_han: the CJK ideograph blocks.
func isHan(r rune) bool {
	switch {
	case r >= 0x4E00 && r <= 0x9FFF, r >= 0x3400 && r <= 0x4DBF,
		r >= 0x20000 && r <= 0x2A6DF, r >= 0x2A700 && r <= 0x2EBEF,
		r >= 0xF900 && r <= 0xFAFF, r >= 0x2F800 && r <= 0x2FA1F:
		return true
	}
	return false
}

// charSet is a set of view characters: a bitmap below 256, ranges above.
type charSet struct {
	low    [4]uint64
	ranges [][2]rune
	neg    bool
	// in is low with neg applied, what has reads: set by finish once the
	// set is built.
	in [4]uint64
}

// finish readies s for has.
func (s *charSet) finish() *charSet {
	for i, w := range s.low {
		if s.neg {
			w = ^w
		}
		s.in[i] = w
	}
	return s
}

func (s *charSet) addRange(lo, hi rune) {
	for r := lo; r <= hi && r < 256; r++ {
		s.low[r>>6] |= 1 << (r & 63)
	}
	if hi >= 256 {
		s.ranges = append(s.ranges, [2]rune{max(lo, 256), hi})
	}
}

func (s *charSet) add(o *charSet) {
	if o.neg {
		// Only \S, \D and \W are negated sets inside a class; as ASCII
		// classes their complement below 256 is exact, and above it
		// covers everything.
		for i := range s.low {
			s.low[i] |= ^o.low[i]
		}
		s.ranges = append(s.ranges, [2]rune{256, unicode.MaxRune})
		return
	}
	for i := range s.low {
		s.low[i] |= o.low[i]
	}
	s.ranges = append(s.ranges, o.ranges...)
}

func (s *charSet) has(r rune) bool {
	if r < 256 {
		return s.in[r>>6]&(1<<(r&63)) != 0
	}
	return s.hasHigh(r)
}

func (s *charSet) hasHigh(r rune) bool {
	for _, g := range s.ranges {
		if r >= g[0] && r <= g[1] {
			return !s.neg
		}
	}
	return s.neg
}

func setOf(spec string) *charSet {
	s := &charSet{}
	rs := []rune(spec)
	for i := 0; i < len(rs); i++ {
		if i+2 < len(rs) && rs[i+1] == '-' {
			s.addRange(rs[i], rs[i+2])
			i += 2
		} else {
			s.addRange(rs[i], rs[i])
		}
	}
	return s
}

// The classes as std::regex in the C locale has them, and the ASCII
// characters llama.cpp adds to each category's stand-in.
var (
	setSpace = setOf("\t-\r ")
	setDigit = setOf("0-9")
	setWord  = setOf("0-9A-Z_a-z")

	categories = map[string]*charSet{
		"N":   setOf(string(rune(symNumber)) + "0-9"),
		"L":   setOf(string([]rune{symLetter, symHan}) + "A-Za-z"),
		"P":   setOf(string(rune(symPunct)) + "!-#%-*,-/:-;?-@[-]_{}"),
		"M":   setOf(string(rune(symMark))),
		"S":   setOf(string(rune(symSymbol)) + "$+<->^`|~"),
		"Han": setOf(string(rune(symHan))),
	}
)

func init() {
	for _, c := range []string{"Lu", "Ll", "Lt", "Lm", "Lo"} {
		// llama.cpp's stand-ins do not keep case: these are all \p{L}.
		categories[c] = categories["L"]
	}
}

type opcode uint8

const (
	opSet   opcode = iota // one character in sets[x]
	opSplit               // go on at x, and failing that at y
	opJmp                 // go on at x
	opLook                // the lookahead at x (ending in opMatch) holds, or with neg does not; go on at y
	opEnd                 // at the end of the text
	opMatch
)

type inst struct {
	op   opcode
	neg  bool
	x, y int32
	// For opSplit, the sets (in regex.sets) a match of each branch must
	// start with, or -1: a branch the next character cannot start is
	// skipped.
	fx, fy int32
}

// regex is a compiled pre-tokenizer regex.
type regex struct {
	src      string
	prog     []inst
	sets     []*charSet
	first    *charSet // what a match can start with, or nil
	category bool     // matched on the category view
	// custom, when set, splits in place of the program.
	custom func(text []rune, lo, hi int, ends []int) []int
}

// node is a parsed regex.
type node struct {
	kind     byte // 'c' set, '|' alternation, '.' sequence, '*' repeat, '=' '!' lookahead, '$' end
	set      *charSet
	subs     []*node
	min, max int // repeat bounds; max -1 is unbounded
}

type parser struct {
	src      []rune
	pos      int
	category bool
}

// compileRegex compiles src, one of the regexes of the pre-tokenizer
// table.
func compileRegex(src string) (*regex, error) {
	cat := false
	for _, c := range []string{"N", "L", "P", "M", "S", "Lu", "Ll", "Lt", "Lm", "Lo", "Han"} {
		cat = cat || strings.Contains(src, `\p{`+c+`}`)
	}
	if cat {
		for _, r := range src {
			if r >= utf8.RuneSelf {
				// llama.cpp refuses these too.
				return nil, fmt.Errorf("regex %q has both Unicode categories and non-ASCII characters", src)
			}
		}
	}
	p := &parser{src: []rune(src), category: cat}
	n, err := p.alternation()
	if err == nil && p.pos < len(p.src) {
		err = p.errorf("unexpected %q", p.src[p.pos])
	}
	if err != nil {
		return nil, err
	}
	re := &regex{src: src, category: cat}
	re.emit(n)
	re.prog = append(re.prog, inst{op: opMatch})
	if re.first = re.firstSet(0, map[int32]bool{}); re.first != nil {
		re.first.finish()
	}
	for i := range re.prog {
		in := &re.prog[i]
		in.fx, in.fy = -1, -1
		if in.op != opSplit {
			continue
		}
		if f := re.firstSet(in.x, map[int32]bool{}); f != nil {
			re.sets = append(re.sets, f.finish())
			in.fx = int32(len(re.sets) - 1)
		}
		if f := re.firstSet(in.y, map[int32]bool{}); f != nil {
			re.sets = append(re.sets, f.finish())
			in.fy = int32(len(re.sets) - 1)
		}
	}
	return re, nil
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("regex %q at %d: %s", string(p.src), p.pos, fmt.Sprintf(format, args...))
}

func (p *parser) more() bool { return p.pos < len(p.src) }
func (p *parser) peek() rune { return p.src[p.pos] }
func (p *parser) eat(s string) bool {
	rs := []rune(s)
	if p.pos+len(rs) > len(p.src) || string(p.src[p.pos:p.pos+len(rs)]) != s {
		return false
	}
	p.pos += len(rs)
	return true
}

func (p *parser) alternation() (*node, error) {
	var alts []*node
	for {
		seq, err := p.sequence()
		if err != nil {
			return nil, err
		}
		alts = append(alts, seq)
		if !p.eat("|") {
			break
		}
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return &node{kind: '|', subs: alts}, nil
}

func (p *parser) sequence() (*node, error) {
	seq := &node{kind: '.'}
	for p.more() && p.peek() != '|' && p.peek() != ')' {
		atom, err := p.atom()
		if err != nil {
			return nil, err
		}
		if atom, err = p.quantifier(atom); err != nil {
			return nil, err
		}
		seq.subs = append(seq.subs, atom)
	}
	return seq, nil
}

func (p *parser) quantifier(atom *node) (*node, error) {
	if !p.more() {
		return atom, nil
	}
	lo, hi := 0, 0
	switch p.peek() {
	case '*':
		lo, hi = 0, -1
		p.pos++
	case '+':
		lo, hi = 1, -1
		p.pos++
	case '?':
		lo, hi = 0, 1
		p.pos++
	case '{':
		end := p.pos
		for end < len(p.src) && p.src[end] != '}' {
			end++
		}
		if end == len(p.src) {
			return nil, p.errorf("unclosed {")
		}
		body := string(p.src[p.pos+1 : end])
		a, b, comma := strings.Cut(body, ",")
		var err error
		if lo, err = strconv.Atoi(a); err != nil {
			return nil, p.errorf("bad repeat {%s}", body)
		}
		hi = lo
		if comma {
			hi = -1
			if b != "" {
				if hi, err = strconv.Atoi(b); err != nil || hi < lo {
					return nil, p.errorf("bad repeat {%s}", body)
				}
			}
		}
		p.pos = end + 1
	default:
		return atom, nil
	}
	if p.more() && (p.peek() == '?' || p.peek() == '+') {
		return nil, p.errorf("lazy and possessive quantifiers are not supported")
	}
	return &node{kind: '*', subs: []*node{atom}, min: lo, max: hi}, nil
}

func (p *parser) atom() (*node, error) {
	c := p.peek()
	switch c {
	case '(':
		p.pos++
		kind := byte('.')
		switch {
		case p.eat("?:"):
		case p.eat("?="):
			kind = '='
		case p.eat("?!"):
			kind = '!'
		case p.more() && p.peek() == '?':
			return nil, p.errorf("unsupported group")
		}
		n, err := p.alternation()
		if err != nil {
			return nil, err
		}
		if !p.eat(")") {
			return nil, p.errorf("missing )")
		}
		if kind == '.' {
			return n, nil
		}
		return &node{kind: kind, subs: []*node{n}}, nil
	case '[':
		s, err := p.class()
		if err != nil {
			return nil, err
		}
		return &node{kind: 'c', set: s}, nil
	case '$':
		p.pos++
		return &node{kind: '$'}, nil
	case '\\':
		s, err := p.escape()
		if err != nil {
			return nil, err
		}
		return &node{kind: 'c', set: s}, nil
	case '*', '+', '?', '{', ')', '.', '^':
		// No table regex has a bare . or ^.
		return nil, p.errorf("unexpected %q", c)
	}
	p.pos++
	return &node{kind: 'c', set: setOf(string(c))}, nil
}

// escape parses \x at pos into the set it stands for.
func (p *parser) escape() (*charSet, error) {
	p.pos++ // the backslash
	if !p.more() {
		return nil, p.errorf("trailing backslash")
	}
	c := p.peek()
	p.pos++
	switch c {
	case 's':
		return setSpace, nil
	case 'S':
		return &charSet{low: setSpace.low, neg: true}, nil
	case 'd':
		return setDigit, nil
	case 'D':
		return &charSet{low: setDigit.low, neg: true}, nil
	case 'w':
		return setWord, nil
	case 'W':
		return &charSet{low: setWord.low, neg: true}, nil
	case 'r':
		return setOf("\r"), nil
	case 'n':
		return setOf("\n"), nil
	case 't':
		return setOf("\t"), nil
	case 'v':
		return setOf("\v"), nil
	case 'f':
		return setOf("\f"), nil
	case 'p':
		end := p.pos
		for end < len(p.src) && p.src[end] != '}' {
			end++
		}
		if !p.eat("{") || end == len(p.src) {
			return nil, p.errorf(`bad \p`)
		}
		name := string(p.src[p.pos:end])
		s, ok := categories[name]
		if !ok {
			return nil, p.errorf(`unsupported category \p{%s}`, name)
		}
		p.pos = end + 1
		return s, nil
	}
	if c < utf8.RuneSelf && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
		return nil, p.errorf(`unsupported escape \%c`, c)
	}
	return setOf(string(c)), nil
}

// class parses [...] at pos.
func (p *parser) class() (*charSet, error) {
	p.pos++ // [
	s := &charSet{}
	if p.eat("^") {
		s.neg = true
	}
	first := true
	for {
		if !p.more() {
			return nil, p.errorf("missing ]")
		}
		if p.peek() == ']' && !first {
			p.pos++
			return s, nil
		}
		first = false
		var lo rune
		if p.peek() == '\\' {
			e, err := p.escape()
			if err != nil {
				return nil, err
			}
			r, single := singleRune(e)
			if !single {
				s.add(e)
				continue
			}
			lo = r
		} else {
			lo = p.peek()
			p.pos++
		}
		hi := lo
		if p.pos+1 < len(p.src) && p.peek() == '-' && p.src[p.pos+1] != ']' {
			p.pos++
			if p.peek() == '\\' {
				e, err := p.escape()
				if err != nil {
					return nil, err
				}
				r, single := singleRune(e)
				if !single {
					return nil, p.errorf("bad range")
				}
				hi = r
			} else {
				hi = p.peek()
				p.pos++
			}
			if hi < lo {
				return nil, p.errorf("bad range")
			}
		}
		s.addRange(lo, hi)
	}
}

// singleRune says whether s is one character, and which.
func singleRune(s *charSet) (rune, bool) {
	if s.neg {
		return 0, false
	}
	found, n := rune(0), 0
	for i, w := range s.low {
		for b := 0; b < 64; b++ {
			if w&(1<<b) != 0 {
				found, n = rune(i*64+b), n+1
			}
		}
	}
	for _, g := range s.ranges {
		found, n = g[0], n+int(g[1]-g[0])+1
	}
	return found, n == 1
}

func (re *regex) emit(n *node) {
	pc := func() int32 { return int32(len(re.prog)) }
	switch n.kind {
	case 'c':
		// A copy, as the shared sets must stay as they are.
		set := *n.set
		re.sets = append(re.sets, set.finish())
		re.prog = append(re.prog, inst{op: opSet, x: int32(len(re.sets) - 1)})
	case '.':
		for _, s := range n.subs {
			re.emit(s)
		}
	case '|':
		var jumps []int32
		for i, s := range n.subs {
			if i == len(n.subs)-1 {
				re.emit(s)
				break
			}
			split := pc()
			re.prog = append(re.prog, inst{op: opSplit, x: split + 1})
			re.emit(s)
			jumps = append(jumps, pc())
			re.prog = append(re.prog, inst{op: opJmp})
			re.prog[split].y = pc()
		}
		for _, j := range jumps {
			re.prog[j].x = pc()
		}
	case '*':
		for range n.min {
			re.emit(n.subs[0])
		}
		if n.max < 0 {
			// L: split body, out; body; jmp L
			loop := pc()
			re.prog = append(re.prog, inst{op: opSplit, x: loop + 1})
			re.emit(n.subs[0])
			re.prog = append(re.prog, inst{op: opJmp, x: loop})
			re.prog[loop].y = pc()
			break
		}
		var splits []int32
		for range n.max - n.min {
			splits = append(splits, pc())
			re.prog = append(re.prog, inst{op: opSplit, x: pc() + 1})
			re.emit(n.subs[0])
		}
		for _, s := range splits {
			re.prog[s].y = pc()
		}
	case '=', '!':
		look := pc()
		re.prog = append(re.prog, inst{op: opLook, neg: n.kind == '!', x: look + 1})
		re.emit(n.subs[0])
		re.prog = append(re.prog, inst{op: opMatch})
		re.prog[look].y = pc()
	case '$':
		re.prog = append(re.prog, inst{op: opEnd})
	}
}

// matcher runs regexes over one view of a text; its stack is reused.
type matcher struct {
	text  []rune
	stack []int32 // pairs of pc, pos
}

// match returns the end of the match of re's program from pc at pos
// within text[:hi], the first alternative first, or -1. A match that
// ends at reject does not count, so that backtracking goes on past it
// (std::regex's match_not_null, for reject = pos).
func (m *matcher) match(re *regex, pc int32, pos, hi, reject int) int {
	base := len(m.stack)
	text := m.text
	sets := re.sets
	for {
		in := &re.prog[pc]
		ok := true
		switch in.op {
		case opSet:
			if pos < hi && sets[in.x].has(text[pos]) {
				pos++
				pc++
			} else {
				ok = false
			}
		case opSplit:
			var c rune = -1
			if pos < hi {
				c = text[pos]
			}
			takeX := in.fx < 0 || c >= 0 && sets[in.fx].has(c)
			takeY := in.fy < 0 || c >= 0 && sets[in.fy].has(c)
			switch {
			case takeX && takeY:
				m.stack = append(m.stack, in.y, int32(pos))
				pc = in.x
			case takeX:
				pc = in.x
			case takeY:
				pc = in.y
			default:
				ok = false
			}
		case opJmp:
			pc = in.x
		case opLook:
			// Lookahead is atomic: its first match decides.
			held := m.match(re, in.x, pos, hi, -1) >= 0
			ok = held != in.neg
			pc = in.y
		case opEnd:
			ok = pos == hi
			pc++
		case opMatch:
			if pos != reject {
				m.stack = m.stack[:base]
				return pos
			}
			ok = false
		}
		if !ok {
			n := len(m.stack)
			if n == base {
				return -1
			}
			pc, pos = m.stack[n-2], int(m.stack[n-1])
			m.stack = m.stack[:n-2]
		}
	}
}

// split cuts text[lo:hi] as llama.cpp's std::regex_iterator loop does:
// each match is a piece and so is each run of text between matches. It
// appends the pieces' ends to ends; empty matches make no piece.
func (m *matcher) split(re *regex, lo, hi int, ends []int) []int {
	prev := lo // the end of the last piece
	start := lo
	for start <= hi {
		// The leftmost match from start.
		at, end := -1, -1
		for p := start; p <= hi; p++ {
			if re.first != nil && (p == hi || !re.first.has(m.text[p])) {
				continue
			}
			if e := m.match(re, 0, p, hi, -1); e >= 0 {
				at, end = p, e
				break
			}
		}
		if at < 0 {
			break
		}
		if at > prev {
			ends = append(ends, at)
		}
		prev = at
		if end == at {
			// An empty match: std::regex_iterator tries for a non-empty
			// one at the same place, then searches on from the next
			// character.
			if at == hi {
				break
			}
			if end = m.match(re, 0, at, hi, at); end < 0 {
				start = at + 1
				continue
			}
		}
		ends = append(ends, end)
		prev, start = end, end
	}
	if prev < hi {
		ends = append(ends, hi)
	}
	return ends
}

// firstSet returns the characters a match from pc can start with, or nil
// where it may start with an assertion or be empty.
func (re *regex) firstSet(pc int32, seen map[int32]bool) *charSet {
	if seen[pc] {
		return &charSet{}
	}
	seen[pc] = true
	in := re.prog[pc]
	switch in.op {
	case opSet:
		s := &charSet{}
		s.add(re.sets[in.x])
		return s
	case opJmp:
		return re.firstSet(in.x, seen)
	case opSplit:
		a, b := re.firstSet(in.x, seen), re.firstSet(in.y, seen)
		if a == nil || b == nil {
			return nil
		}
		a.add(b)
		return a
	}
	return nil
}
