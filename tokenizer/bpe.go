package tokenizer

import (
	"strings"
	"unicode/utf8"
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

// bpeBigram is a merge that may apply: the symbols left and right,
// spanning [start of left, mid) and [mid, end) when it was queued.
type bpeBigram struct {
	left, right int
	mid, end    int
	rank        int
}

func (a bpeBigram) before(b bpeBigram) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.left < b.left
}

// bpeState is the scratch space of one Encode call.
type bpeState struct {
	syms  []symbol
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
		st.word = st.word[:0]
		for i := 0; i < len(word); i++ {
			st.word = append(st.word, byteChar[word[i]]...)
		}
		w := string(st.word)
		if t.ignoreMerges {
			if id, ok := t.textID[w]; ok {
				out = append(out, id)
				return
			}
		}
		t.mergeWord(&st, w)
		for i := 0; len(st.syms) > 0 && i >= 0; i = st.syms[i].next {
			piece := w[st.syms[i].start:st.syms[i].end]
			if id, ok := t.textID[piece]; ok {
				out = append(out, id)
				continue
			}
			for j := 0; j < len(piece); j++ {
				if id, ok := t.textID[piece[j:j+1]]; ok {
					out = append(out, id)
				}
			}
		}
	})
	return out
}

// mergeWord applies the merges to w's characters, lowest rank first,
// leaving the pieces in st.syms, linked from the first.
func (t *Tokenizer) mergeWord(st *bpeState, w string) {
	syms := st.syms[:0]
	for off := 0; off < len(w); {
		_, n := utf8.DecodeRuneInString(w[off:])
		syms = append(syms, symbol{prev: len(syms) - 1, next: len(syms) + 1, start: off, end: off + n})
		off += n
	}
	st.syms = syms
	if len(syms) == 0 {
		return
	}
	syms[len(syms)-1].next = -1
	st.queue = st.queue[:0]
	tryPair := func(left, right int) {
		if left < 0 || right < 0 {
			return
		}
		l, r := syms[left], syms[right]
		rank, ok := t.ranks[[2]string{w[l.start:l.end], w[r.start:r.end]}]
		if !ok {
			return
		}
		st.push(bpeBigram{left: left, right: right, mid: l.end, end: r.end, rank: rank})
	}
	for i := 1; i < len(syms); i++ {
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
		r.start = r.end
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = b.left
		}
		tryPair(l.prev, b.left)
		tryPair(b.left, l.next)
	}
}
