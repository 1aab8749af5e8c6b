package engine

import (
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/tensor"
)

// Kernels is the set of compute kernels a backend offers generated code. The
// semantics are ggml's CPU backend's for the op of the same name; dst is
// preallocated by the caller and every tensor may be a strided view.
type Kernels interface {
	// MulMat is ggml_mul_mat: dst[i0,i1,i2,i3] = Σk a[k,i0,i2/(x.ne2/a.ne2),i3/(x.ne3/a.ne3)]·x[k,i1,i2,i3].
	MulMat(dst, a, x *tensor.Tensor)
	// Add, Sub, Mul and Div compute dst = a op x, x repeated to a's shape.
	Add(dst, a, x *tensor.Tensor)
	Sub(dst, a, x *tensor.Tensor)
	Mul(dst, a, x *tensor.Tensor)
	Div(dst, a, x *tensor.Tensor)
	// Scale is dst = a·s.
	Scale(dst, a *tensor.Tensor, s float32)
	Relu(dst, a *tensor.Tensor)
	Gelu(dst, a *tensor.Tensor)
	Silu(dst, a *tensor.Tensor)
	// RMSNorm and Norm normalize each row (ggml_rms_norm, ggml_norm).
	RMSNorm(dst, a *tensor.Tensor, eps float32)
	Norm(dst, a *tensor.Tensor, eps float32)
	// SoftMax is ggml_soft_max_ext: softmax(a·scale + slope·mask) per row;
	// mask may be nil, maxBias 0 disables ALiBi.
	SoftMax(dst, a, mask *tensor.Tensor, scale, maxBias float32)
	// Rope is ggml_rope_ext with positions pos (i32, one per a.Ne[2]).
	Rope(dst, a, pos *tensor.Tensor, p ops.RopeParams)
	// GetRows is ggml_get_rows: dst row r = table row idx[r].
	GetRows(dst, table, idx *tensor.Tensor)
	// Cpy is ggml_cpy: copies src into dst element by element in logical
	// order, converting the type; the element counts must match.
	Cpy(dst, src *tensor.Tensor)
}
