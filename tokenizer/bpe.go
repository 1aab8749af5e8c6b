package tokenizer

import (
	"container/heap"
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

type bpeBigram struct {
	left, right int
	text        string
	rank        int
}

// bpeQueue pops the lowest rank first, the leftmost on a tie.
type bpeQueue []bpeBigram

func (q bpeQueue) Len() int { return len(q) }
func (q bpeQueue) Less(i, j int) bool {
	if q[i].rank != q[j].rank {
		return q[i].rank < q[j].rank
	}
	return q[i].left < q[j].left
}
func (q bpeQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *bpeQueue) Push(x any)   { *q = append(*q, x.(bpeBigram)) }
func (q *bpeQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// encodeBPE appends the ids of text: split into words by the
// pre-tokenizer, each word spelled in byte-level characters and merged by
// rank. A piece left that is no token is spelled byte by byte, and bytes
// that are no token either are dropped, as llama.cpp does.
func (t *Tokenizer) encodeBPE(out []int32, text string) []int32 {
	for _, word := range t.words.split(text) {
		w := encodeByteLevel(word)
		if t.ignoreMerges {
			if id, ok := t.textID[w]; ok {
				out = append(out, id)
				continue
			}
		}
		for _, piece := range t.mergeWord(w) {
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
	}
	return out
}

// mergeWord applies the merges to w's characters, lowest rank first, and
// returns the pieces left.
func (t *Tokenizer) mergeWord(w string) []string {
	var syms []symbol
	for off := 0; off < len(w); {
		_, n := utf8.DecodeRuneInString(w[off:])
		syms = append(syms, symbol{prev: len(syms) - 1, next: len(syms) + 1, start: off, end: off + n})
		off += n
	}
	if len(syms) == 0 {
		return nil
	}
	syms[len(syms)-1].next = -1
	q := &bpeQueue{}
	tryPair := func(left, right int) {
		if left < 0 || right < 0 {
			return
		}
		l, r := w[syms[left].start:syms[left].end], w[syms[right].start:syms[right].end]
		rank, ok := t.ranks[[2]string{l, r}]
		if !ok {
			return
		}
		heap.Push(q, bpeBigram{left: left, right: right, text: l + r, rank: rank})
	}
	for i := 1; i < len(syms); i++ {
		tryPair(i-1, i)
	}
	for q.Len() > 0 {
		b := heap.Pop(q).(bpeBigram)
		l, r := &syms[b.left], &syms[b.right]
		// Skip pairs a merge since their push has changed.
		if l.end == l.start || r.end == r.start || l.end != r.start || w[l.start:r.end] != b.text {
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
	var pieces []string
	for i := 0; i >= 0; i = syms[i].next {
		pieces = append(pieces, w[syms[i].start:syms[i].end])
	}
	return pieces
}
