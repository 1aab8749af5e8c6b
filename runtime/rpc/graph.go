package rpc

import (
	"math"

	"github.com/graphc/graphc/ops"
)

// opEncoding is how one Kernels method is written as a ggml node: the
// node's enum ggml_op value and, for GGML_OP_UNARY, its enum ggml_unary_op
// (op_params[0]); -1 when not unary. The numbers are ggml commit
// d99724f2's, the op table's (ir/ops.go); TestEveryOpEncodes keeps the two
// in step.
type opEncoding struct {
	GGMLOp uint32
	Unary  int32
}

// kernelOps maps each Kernels method to its ggml op. cont has no entry of
// its own: graphc computes it with Cpy into contiguous memory, which
// ggml-cpu computes as it computes CONT (both are its dup).
var kernelOps = map[string]opEncoding{
	"MulMat":  {29, -1},
	"Add":     {2, -1},
	"Sub":     {6, -1},
	"Mul":     {7, -1},
	"Div":     {8, -1},
	"Scale":   {32, -1},
	"Relu":    {91, 6},
	"Gelu":    {91, 8},
	"Silu":    {91, 10},
	"RMSNorm": {25, -1},
	"Norm":    {24, -1},
	"SoftMax": {46, -1},
	"Rope":    {48, -1},
	"GetRows": {40, -1},
	"Cpy":     {34, -1},
}

// opParams is a node's op_params: 16 int32s, floats stored by their bits,
// as ggml_set_op_params copies them.
type opParams [maxOpParams]int32

func f32bits(v float32) int32 { return int32(math.Float32bits(v)) }

// unaryParams: ggml_unary_impl stores the sub-op in op_params[0].
func unaryParams(e opEncoding) opParams {
	var p opParams
	if e.Unary >= 0 {
		p[0] = e.Unary
	}
	return p
}

// epsParams: ggml_norm_impl and ggml_rms_norm_impl store eps, a float.
func epsParams(eps float32) opParams { return opParams{f32bits(eps)} }

// scaleParams: ggml_scale_impl stores {s, b}, dst = a·s + b; graphc's
// scale has no bias.
func scaleParams(s float32) opParams { return opParams{f32bits(s), f32bits(0)} }

// softMaxParams: ggml_soft_max_impl stores {scale, max_bias}.
func softMaxParams(scale, maxBias float32) opParams {
	return opParams{f32bits(scale), f32bits(maxBias)}
}

// ropeParams: ggml_rope_impl stores n_past (0), n_dims, mode, n_ctx (0),
// n_ctx_orig, then freq_base, freq_scale, ext_factor, attn_factor,
// beta_fast, beta_slow as floats, 4 M-RoPE sections (0: not M-RoPE) and
// n_offs (0).
func ropeParams(r ops.RopeParams) opParams {
	return opParams{
		0, int32(r.NDims), int32(r.Mode), 0, int32(r.NCtxOrig),
		f32bits(r.FreqBase), f32bits(r.FreqScale), f32bits(r.ExtFactor),
		f32bits(r.AttnFactor), f32bits(r.BetaFast), f32bits(r.BetaSlow),
	}
}

// graph is the ggml graph of the kernels a backend has been given since
// it last sent one: nodes in launch order, and every tensor they name.
// Each kernel's sources are leaves of their own (op NONE) naming memory:
// the server computes nodes in order, so a leaf over memory an earlier
// node wrote reads that node's result, as it does in graphc's stream.
type graph struct {
	nodes   []uint64
	tensors []wireTensor
	nextID  uint64
}

func (g *graph) add(t wireTensor) uint64 {
	g.nextID++
	t.ID = g.nextID
	g.tensors = append(g.tensors, t)
	return t.ID
}

func (g *graph) reset() {
	g.nodes, g.tensors, g.nextID = g.nodes[:0], g.tensors[:0], 0
}
