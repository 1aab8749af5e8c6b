package runtime

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

// Kernels is the set of compute kernels a backend offers generated code. The
// semantics are ggml's CPU backend's for the op of the same name; dst is
// preallocated by the caller and every tensor may be a strided view.
type Kernels interface {
	// MulMat is ggml_mul_mat: dst[i0,i1,i2,i3] = Σk a[k,i0,i2/(x.ne2/a.ne2),i3/(x.ne3/a.ne3)]·x[k,i1,i2,i3].
	MulMat(dst, a, x *Tensor)
	// Add, Sub, Mul and Div compute dst = a op x, x repeated to a's shape.
	Add(dst, a, x *Tensor)
	Sub(dst, a, x *Tensor)
	Mul(dst, a, x *Tensor)
	Div(dst, a, x *Tensor)
	// Scale is dst = a·s.
	Scale(dst, a *Tensor, s float32)
	Relu(dst, a *Tensor)
	Gelu(dst, a *Tensor)
	Silu(dst, a *Tensor)
	// RMSNorm and Norm normalize each row (ggml_rms_norm, ggml_norm).
	RMSNorm(dst, a *Tensor, eps float32)
	Norm(dst, a *Tensor, eps float32)
	// SoftMax is ggml_soft_max_ext: softmax(a·scale + slope·mask) per row;
	// mask may be nil, maxBias 0 disables ALiBi.
	SoftMax(dst, a, mask *Tensor, scale, maxBias float32)
	// Rope is ggml_rope_ext with positions pos (i32, one per a.Ne[2]).
	Rope(dst, a, pos *Tensor, p RopeParams)
	// GetRows is ggml_get_rows: dst row r = table row idx[r].
	GetRows(dst, table, idx *Tensor)
	// Cpy is ggml_cpy: copies src into dst element by element in logical
	// order, converting the type; the element counts must match.
	Cpy(dst, src *Tensor)
}
