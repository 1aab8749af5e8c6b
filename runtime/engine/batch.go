package engine

import "math"

// CausalBatch is the positions and attention mask of a batch of n tokens
// whose first goes to KV cache slot pos, as llama.cpp builds them: the
// positions pos…pos+n-1, and an n×(pos+n) mask (ne0 = pos+n) letting token
// t see slots up to pos+t and -inf beyond.
func CausalBatch(n, pos int) (positions []int32, mask []float32) {
	nKV := pos + n
	positions = make([]int32, n)
	mask = make([]float32, nKV*n)
	for t := range n {
		positions[t] = int32(pos + t)
		for j := pos + t + 1; j < nKV; j++ {
			mask[t*nKV+j] = float32(math.Inf(-1))
		}
	}
	return positions, mask
}
