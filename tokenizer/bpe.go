package tokenizer

import (
	"strings"
)

// byteChar and charByte are GPT-2's bytes-to-unicode table: the printable
// Latin-1 bytes stand for themselves, the other 68 bytes for U+0100 on, so
// that every byte has a visible character a vocabulary can hold.
var byteChar, charByte = byteLevelTables()

func byteLevelTables() ([256]string, map[rune]byte) {
	var toChar [256]string
	toByte := make(map[rune]byte, 256)
	next := rune(256)
	for b := 0; b < 256; b++ {
		r := rune(b)
		printable := b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE
		if !printable {
			r = next
			next++
		}
		toChar[b] = string(r)
		toByte[r] = byte(b)
	}
	return toChar, toByte
}

// encodeByteLevel spells each byte of s as its byte-level character.
func encodeByteLevel(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteString(byteChar[s[i]])
	}
	return b.String()
}

// decodeByteLevel maps a token's byte-level characters back to bytes;
// characters outside the table pass through unchanged.
func decodeByteLevel(s string) string {
	var b strings.Builder
	for _, r := range s {
		if c, ok := charByte[r]; ok {
			b.WriteByte(c)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// bpeMerge is a merge rule: its rank and the token it makes (or
// NoToken).
type bpeMerge struct {
	rank, id int32
}

func pairKey(left, right int32) uint64 { return uint64(uint32(left))<<32 | uint64(uint32(right)) }

// bpeSymbol is a piece of the word being merged, bytes [start, end) of
// it, linked to its neighbours; a symbol merged into its left neighbour is
// left empty.
type bpeSymbol struct {
	prev, next int32
	start, end int32
	id         int32 // the piece's token, or NoToken
}

// bpeBigram is a merge that may apply: the symbols left and right,
// spanning [start of left, mid) and [mid, end) when it was queued.
type bpeBigram struct {
	left, right int32
	mid, end    int32
	rank        int32
	id          int32
}

func (a bpeBigram) before(b bpeBigram) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.left < b.left
}

// bpeState is the scratch space of one Encode call.
type bpeState struct {
	syms  []bpeSymbol
	queue []bpeBigram // a binary heap, lowest rank first, the leftmost on a tie
	word  []byte
}

func (st *bpeState) push(b bpeBigram) {
	q := append(st.queue, b)
	for i := len(q) - 1; i > 0; {
		parent := (i - 1) / 2
		if !q[i].before(q[parent]) {
			break
		}
		q[i], q[parent] = q[parent], q[i]
		i = parent
	}
	st.queue = q
}

func (st *bpeState) pop() bpeBigram {
	q := st.queue
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q = q[:last]
	for i := 0; ; {
		l, r, least := 2*i+1, 2*i+2, i
		if l < len(q) && q[l].before(q[least]) {
			least = l
		}
		if r < len(q) && q[r].before(q[least]) {
			least = r
		}
		if least == i {
			break
		}
		q[i], q[least] = q[least], q[i]
		i = least
	}
	st.queue = q
	return top
}

// encodeBPE appends the ids of text: split into words by the
// pre-tokenizer, each word spelled in byte-level characters and merged by
// rank. A piece left that is no token is spelled byte by byte, and bytes
// that are no token either are dropped, as llama.cpp does.
func (t *Tokenizer) encodeBPE(out []int32, text string) []int32 {
	var st bpeState
	t.words.split(text, func(word string) {
		if t.ignoreMerges {
			st.word = st.word[:0]
			for i := 0; i < len(word); i++ {
				st.word = append(st.word, byteChar[word[i]]...)
			}
			if id, ok := t.textID[string(st.word)]; ok {
				out = append(out, id)
				return
			}
		}
		t.mergeWord(&st, word)
		for i := int32(0); len(st.syms) > 0 && i >= 0; i = st.syms[i].next {
			s := st.syms[i]
			if s.id != NoToken {
				out = append(out, s.id)
				continue
			}
			for j := s.start; j < s.end; j++ {
				out = append(out, t.byteIDs[word[j]]...)
			}
		}
	})
	return out
}

// mergeWord applies the merges to word's byte characters, lowest rank
// first, leaving the pieces in st.syms, linked from the first.
func (t *Tokenizer) mergeWord(st *bpeState, word string) {
	syms := st.syms[:0]
	for i := 0; i < len(word); i++ {
		syms = append(syms, bpeSymbol{prev: int32(i - 1), next: int32(i + 1), start: int32(i), end: int32(i + 1), id: t.charID[word[i]]})
	}
	st.syms = syms
	if len(syms) == 0 {
		return
	}
	syms[len(syms)-1].next = -1
	st.queue = st.queue[:0]
	tryPair := func(left, right int32) {
		if left < 0 || right < 0 {
			return
		}
		l, r := &syms[left], &syms[right]
		if l.id == NoToken || r.id == NoToken {
			return
		}
		m, ok := t.merges[pairKey(l.id, r.id)]
		if !ok {
			return
		}
		st.push(bpeBigram{left: left, right: right, mid: l.end, end: r.end, rank: m.rank, id: m.id})
	}
	for i := int32(1); i < int32(len(syms)); i++ {
		tryPair(i-1, i)
	}
	for len(st.queue) > 0 {
		b := st.pop()
		l, r := &syms[b.left], &syms[b.right]
		// Skip pairs a merge since their push has changed: symbols only
		// grow rightwards or empty.
		if l.start == l.end || l.end != b.mid || r.start != b.mid || r.end != b.end {
			continue
		}
		l.end = r.end
		l.id = b.id
		r.start = r.end
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = b.left
		}
		tryPair(l.prev, b.left)
		tryPair(b.left, l.next)
	}
}
