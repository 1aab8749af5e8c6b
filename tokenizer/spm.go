package tokenizer

import (
	"container/heap"
	"fmt"
	"strconv"
	"strings"
)

// spaceMarker is SentencePiece's stand-in for a space, U+2581.
const spaceMarker = "\u2581"

// symbol is a piece of the text being merged, linked to its neighbours;
// a symbol merged into its left neighbour is left empty.
type symbol struct {
	prev, next int
	start, end int
}

type spmBigram struct {
	left, right int
	score       float32
	size        int
}

// spmQueue pops the highest score first, the leftmost on a tie.
type spmQueue []spmBigram

func (q spmQueue) Len() int { return len(q) }
func (q spmQueue) Less(i, j int) bool {
	if q[i].score != q[j].score {
		return q[i].score > q[j].score
	}
	return q[i].left < q[j].left
}
func (q spmQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *spmQueue) Push(x any)   { *q = append(*q, x.(spmBigram)) }
func (q *spmQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// utf8Len is the length of the UTF-8 sequence lead byte b starts, judged
// by its top four bits alone as llama.cpp does (continuation and invalid
// bytes count as sequences of one).
func utf8Len(b byte) int {
	return [16]int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4}[b>>4]
}

// encodeSPM appends the ids of text: its characters merged pairwise,
// the pair whose merge is the highest-scoring token first, until no pair
// forms a token; what is left that is not a token is spelled in bytes.
func (t *Tokenizer) encodeSPM(out []int32, text string) []int32 {
	text = strings.ReplaceAll(text, " ", spaceMarker)
	var syms []symbol
	for off := 0; off < len(text); {
		n := min(utf8Len(text[off]), len(text)-off)
		syms = append(syms, symbol{prev: len(syms) - 1, next: len(syms) + 1, start: off, end: off + n})
		off += n
	}
	if len(syms) == 0 {
		return out
	}
	syms[len(syms)-1].next = -1
	q := &spmQueue{}
	tryPair := func(left, right int) {
		if left < 0 || right < 0 {
			return
		}
		s := text[syms[left].start:syms[right].end]
		id, ok := t.textID[s]
		if !ok {
			return
		}
		heap.Push(q, spmBigram{left: left, right: right, score: t.score(id), size: len(s)})
	}
	for i := 1; i < len(syms); i++ {
		tryPair(i-1, i)
	}
	for q.Len() > 0 {
		b := heap.Pop(q).(spmBigram)
		l, r := &syms[b.left], &syms[b.right]
		// Skip pairs a merge since their push has changed.
		if l.end == l.start || r.end == r.start || r.end-l.start != b.size || l.end != r.start {
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
	for i := 0; i >= 0; i = syms[i].next {
		s := text[syms[i].start:syms[i].end]
		if id, ok := t.textID[s]; ok {
			out = append(out, id)
			continue
		}
		for j := 0; j < len(s); j++ {
			out = append(out, t.byteToken(s[j]))
		}
	}
	return out
}

func (t *Tokenizer) score(id int32) float32 {
	if len(t.v.Scores) == 0 {
		return 0
	}
	return t.v.Scores[id]
}

// byteToken is the <0xXX> token of b, else the token whose text is the
// byte itself, else the unknown token.
func (t *Tokenizer) byteToken(b byte) int32 {
	if id, ok := t.textID[fmt.Sprintf("<0x%02X>", b)]; ok {
		return id
	}
	if id, ok := t.textID[string([]byte{b})]; ok {
		return id
	}
	return t.v.UNK
}

// parseByteToken reads the byte of a <0xXX> token.
func parseByteToken(s string) (byte, bool) {
	if len(s) != 6 || !strings.HasPrefix(s, "<0x") || s[5] != '>' {
		return 0, false
	}
	b, err := strconv.ParseUint(s[3:5], 16, 8)
	return byte(b), err == nil
}
