package runtime

// RopeParams are ggml_rope_ext's parameters.
type RopeParams struct {
	NDims      int
	Mode       int // 0: rotate adjacent pairs; RopeNeox: rotate (i, i+NDims/2)
	NCtxOrig   int
	FreqBase   float32
	FreqScale  float32
	ExtFactor  float32
	AttnFactor float32
	BetaFast   float32
	BetaSlow   float32
}

// RopeNeox is the GPT-NeoX rotation mode (GGML_ROPE_TYPE_NEOX).
const RopeNeox = 2

// Kernels is the set of compute calls generated code makes on a backend.
// dst is always preallocated by the caller; shapes and types were checked
// by the compiler.
type Kernels interface {
	MulMat(dst, a, x *Tensor)
	Add(dst, a, x *Tensor)
	Sub(dst, a, x *Tensor)
	Mul(dst, a, x *Tensor)
	Div(dst, a, x *Tensor)
	Scale(dst, a *Tensor, s float32)
	Relu(dst, a *Tensor)
	Gelu(dst, a *Tensor)
	Silu(dst, a *Tensor)
	RMSNorm(dst, a *Tensor, eps float32)
	Norm(dst, a *Tensor, eps float32)
	SoftMax(dst, a, mask *Tensor, scale, maxBias float32)
	Rope(dst, a, pos *Tensor, p RopeParams)
	GetRows(dst, table, idx *Tensor)
	Cpy(dst, src *Tensor)
}
