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

// ParallelBatch is step step of seqs sequences decoded together from an
// empty cache, one token of each per evaluation, as a program batching
// sequences builds it: sequence s's token at step p goes to slot p·seqs+s
// at position p, and the seqs×((step+1)·seqs) mask lets it see its own
// sequence's slots up to that one.
func ParallelBatch(seqs, step int) (positions []int32, mask []float32) {
	nKV := (step + 1) * seqs
	positions = make([]int32, seqs)
	mask = make([]float32, nKV*seqs)
	inf := float32(math.Inf(-1))
	for s := range seqs {
		positions[s] = int32(step)
		row := mask[s*nKV : (s+1)*nKV]
		for j := range row {
			if j%seqs != s {
				row[j] = inf
			}
		}
	}
	return positions, mask
}

// SlidingWindowMask is CausalBatch's mask for a batch's sliding-window
// attention layers over window positions, as llama.cpp builds its
// KQ_mask_swa (LLAMA_SWA_TYPE_STANDARD): token t, at position pos+t, sees
// the slots of positions pos+t-window+1 … pos+t and -inf elsewhere.
func SlidingWindowMask(n, pos, window int) []float32 {
	_, mask := CausalBatch(n, pos)
	nKV := pos + n
	for t := range n {
		for j := range max(0, pos+t-window+1) {
			mask[t*nKV+j] = float32(math.Inf(-1))
		}
	}
	return mask
}
