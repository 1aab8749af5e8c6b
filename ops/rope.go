package ops

// RopeNeox is RopeParams.Mode for NEOX-style rotary embeddings, which rotate
// the pairs (x[i], x[i+NDims/2]); mode 0 rotates adjacent pairs
// (x[2i], x[2i+1]). The values are ggml's GGML_ROPE_TYPE_*.
const RopeNeox = 2

// RopeParams are the parameters of ggml_rope_ext.
type RopeParams struct {
	NDims    int // leading dimensions of each row that are rotated; even, ≤ Ne[0]
	Mode     int // 0 (normal) or RopeNeox
	NCtxOrig int // training context length, for the YaRN correction dims

	FreqBase   float32 // θ base, e.g. 10000
	FreqScale  float32 // position interpolation factor, 1 for none
	ExtFactor  float32 // YaRN extrapolation mix, 0 for none
	AttnFactor float32 // magnitude scale applied to cos and sin
	BetaFast   float32 // YaRN ramp bounds
	BetaSlow   float32
}
