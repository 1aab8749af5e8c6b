package bench

import (
	"fmt"
	"math"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// fill gives every element of t a value in [-1, 1].
func fill(t *tensor.Tensor, k int) {
	tensor.Fill(t, func(i int, _ [4]int) float64 { return math.Sin(float64(i)*0.37 + float64(k)) })
}

// filled is a new tensor of dt and shape ne, filled by fill with k.
func filled(dt tensor.DType, k int, ne ...int) *tensor.Tensor {
	s := [4]int{1, 1, 1, 1}
	copy(s[:], ne)
	t := tensor.NewTensor(dt, s)
	fill(&t, k)
	return &t
}

// withBackend builds a Setup from a function that returns the op on a backend.
func withBackend(f func(be *cpu.Backend) func()) func(int) (func(), func()) {
	return func(threads int) (func(), func()) {
		be := cpu.New(threads)
		return f(be), be.Close
	}
}

// mulMatCase is dst[M, N] = a[K, M] (type at) · x[K, N] (f32), ggml_mul_mat.
func mulMatCase(kernel string, at tensor.DType, M, N, K, threads int) Case {
	return Case{
		Kernel: kernel, DType: at.String(), M: M, N: N, K: K, Threads: threads,
		Flops: 2 * float64(M) * float64(N) * float64(K),
		Bytes: matvecBytes(at, M, N, K),
		Setup: withBackend(func(be *cpu.Backend) func() {
			a, x, d := filled(at, 1, K, M), filled(tensor.F32, 2, K, N), filled(tensor.F32, 3, M, N)
			return func() { be.MulMat(d, a, x, ops.MulMatParams{}) }
		}),
	}
}

// quantNs are the column counts of the quantized products: a
// matrix-vector product (one generated token), a batch of 8 and of 32
// tokens, and a 512-token prompt, llama-bench's pp512.
var quantNs = []int{1, 8, 32, 512}

// quantMulMatCases are MulMat with q8_0 and q4_0 4096×4096 weights (x is
// quantized to q8_0 inside each call, as ggml does), n columns each of
// quantNs, once on the weight as given and once packed (Pack) first, as a
// model's weights are: kernel "matvec" or "gemm", and "matvec_packed" or
// "gemm_packed"; then the other types' (kquantTypes, x quantized to their
// vec_dot_type) on Llama-3.2-1B's largest shape, packed where
// backend.CPUPackable says
// runtime/cpu packs them. The GB/s of the matrix-vector products and the
// batches of 8 count the weight bytes read only (34 bytes per 32 q8_0
// weights, 18 per q4_0, 144 per 256 q4_K…), the traffic that bounds them;
// the larger batches are bound by arithmetic and report GFLOP/s only.
func quantMulMatCases(th int) []Case {
	var cs []Case
	for _, at := range []tensor.DType{tensor.Q8_0, tensor.Q4_0} {
		for _, n := range quantNs {
			for _, packed := range []bool{false, true} {
				cs = append(cs, quantMulMatCase(at, quantM, quantK, n, th, packed))
			}
		}
	}
	for _, at := range kquantTypes {
		for _, n := range quantNs {
			cs = append(cs, quantMulMatCase(at, kquantM, kquantK, n, th, false))
			if backend.CPUPackable(at) {
				cs = append(cs, quantMulMatCase(at, kquantM, kquantK, n, th, true))
			}
		}
	}
	return cs
}

// quantM and quantK are the q8_0 and q4_0 products' weight shape: a
// 4096-wide model's attention projection.
const quantM, quantK = 4096, 4096

// kquantTypes are the K-quant weights measured: Q4_K_M files' two types
// (q4_K, q6_K) and q5_K, then the other types llama.cpp's files hold
// (q2_K, q3_K, iq4_xs and, x quantized to q8_0 or q8_1, q5_0, q4_1,
// q5_1, iq4_nl); kquantM and kquantK their shape, Llama-3.2-1B's
// feed-forward up and gate projections.
var kquantTypes = []tensor.DType{tensor.Q4_K, tensor.Q6_K, tensor.Q5_K,
	tensor.Q2_K, tensor.Q3_K, tensor.IQ4_XS, tensor.Q5_0, tensor.Q4_1, tensor.Q5_1, tensor.IQ4_NL}

const kquantM, kquantK = 8192, 2048

func quantMulMatCase(at tensor.DType, m, k, n, th int, packed bool) Case {
	kernel := "matvec"
	if n > 1 {
		kernel = "gemm"
	}
	if packed {
		kernel += "_packed"
	}
	c := Case{
		Kernel: kernel, DType: at.String(), M: m, N: n, K: k, Threads: th,
		Flops: 2 * float64(m) * float64(n) * float64(k),
		Setup: withBackend(func(be *cpu.Backend) func() {
			a, x, d := quantOperands(at, m, k, n)
			if packed {
				mustPack(be, a)
			}
			return func() { be.MulMat(d, a, x, ops.MulMatParams{}) }
		}),
	}
	if n <= 8 {
		c.Bytes = float64(at.RowSize(k) * m)
	}
	return c
}

// quantOperands are a quantized product's weight (m rows of k), x (n
// columns) and result, the same values on every call: ggml's side of
// `graphc bench -ggml` computes the product graphc's does.
func quantOperands(at tensor.DType, m, k, n int) (a, x, d *tensor.Tensor) {
	return quantTensor(at, 1, k, m), filled(tensor.F32, 2, k, n), filled(tensor.F32, 3, m, n)
}

// mustPack packs weight a on be; a dense weight of a type
// backend.CPUPackable takes that does not pack is a broken backend.
func mustPack(be *cpu.Backend, a *tensor.Tensor) {
	if err := be.Pack(a, false); err != nil {
		panic(fmt.Sprintf("BUG: bench: Pack of a %s%v weight: %v", a.Type, a.Ne, err))
	}
}

// quantTensor is tensor for a block-quantized type: fill's values, quantized.
func quantTensor(dt tensor.DType, k, n0, n1 int) *tensor.Tensor {
	f := filled(tensor.F32, k, n0, n1)
	ne := [4]int{n0, n1, 1, 1}
	return &tensor.Tensor{Type: dt, Ne: ne, Nb: tensor.ContiguousStrides(dt, ne), Data: tensor.Quantize(nil, dt, f.F32s())}
}

// matvecBytes is what a matrix-vector product moves (its GB/s says how
// close it is to the memory's bandwidth); 0 for matrix products.
func matvecBytes(at tensor.DType, M, N, K int) float64 {
	if N > 1 {
		return 0
	}
	return float64(at.Size()*M*K + 4*N*K + 4*M*N)
}

// The bandwidth-bound ops run on 2^20 elements per tensor (4 MiB of f32):
// rows of 4096, the size of a large model's hidden state for 256 tokens.
const (
	bwRow  = 4096
	bwRows = 256
	bwN    = bwRow * bwRows
)

func bwCase(kernel, dtype string, bytes float64, threads int, f func(be *cpu.Backend) func()) Case {
	return Case{Kernel: kernel, DType: dtype, M: bwRow, N: bwRows, Threads: threads, Bytes: bytes, Setup: withBackend(f)}
}

func bandwidthCases(th int) []Case {
	const f32, f16 = 4 * bwN, 2 * bwN // bytes of one tensor
	return []Case{
		// memmove of a 4096² f32 matrix, 64 MiB each way, past the caches:
		// the memory's bandwidth, the ceiling of the matvec cases.
		{Kernel: "cpy", DType: "f32", M: 4096, N: 4096, Threads: th, Bytes: 2 * 4 * 4096 * 4096, Setup: withBackend(func(be *cpu.Backend) func() {
			a, d := filled(tensor.F32, 1, 4096, 4096), filled(tensor.F32, 2, 4096, 4096)
			return func() { be.Cpy(d, a) }
		})},
		bwCase("cpy", "f32", 2*f32, th, func(be *cpu.Backend) func() { // memmove in cache: the machine's reference
			a, d := filled(tensor.F32, 1, bwRow, bwRows), filled(tensor.F32, 2, bwRow, bwRows)
			return func() { be.Cpy(d, a) }
		}),
		bwCase("cpy", "f32->f16", f32+f16, th, func(be *cpu.Backend) func() {
			a, d := filled(tensor.F32, 1, bwRow, bwRows), filled(tensor.F16, 2, bwRow, bwRows)
			return func() { be.Cpy(d, a) }
		}),
		bwCase("cpy", "f16->f32", f16+f32, th, func(be *cpu.Backend) func() {
			a, d := filled(tensor.F16, 1, bwRow, bwRows), filled(tensor.F32, 2, bwRow, bwRows)
			return func() { be.Cpy(d, a) }
		}),
		bwCase("add", "f32", 3*f32, th, func(be *cpu.Backend) func() {
			a, x, d := filled(tensor.F32, 1, bwRow, bwRows), filled(tensor.F32, 2, bwRow, bwRows), filled(tensor.F32, 3, bwRow, bwRows)
			return func() { be.Add(d, a, x) }
		}),
		bwCase("mul", "f32", 3*f32, th, func(be *cpu.Backend) func() {
			a, x, d := filled(tensor.F32, 1, bwRow, bwRows), filled(tensor.F32, 2, bwRow, bwRows), filled(tensor.F32, 3, bwRow, bwRows)
			return func() { be.Mul(d, a, x) }
		}),
		bwCase("mul_row", "f32", 2*f32, th, func(be *cpu.Backend) func() { // x one row, broadcast: rms_norm's weight
			a, x, d := filled(tensor.F32, 1, bwRow, bwRows), filled(tensor.F32, 2, bwRow), filled(tensor.F32, 3, bwRow, bwRows)
			return func() { be.Mul(d, a, x) }
		}),
		bwCase("scale", "f32", 2*f32, th, func(be *cpu.Backend) func() {
			a, d := filled(tensor.F32, 1, bwRow, bwRows), filled(tensor.F32, 2, bwRow, bwRows)
			return func() { be.Scale(d, a, ops.ScaleParams{S: 0.125}) }
		}),
		bwCase("silu", "f32", 2*f32, th, func(be *cpu.Backend) func() {
			a, d := filled(tensor.F32, 1, bwRow, bwRows), filled(tensor.F32, 2, bwRow, bwRows)
			return func() { be.Silu(d, a) }
		}),
		bwCase("rms_norm", "f32", 2*f32, th, func(be *cpu.Backend) func() {
			a, d := filled(tensor.F32, 1, bwRow, bwRows), filled(tensor.F32, 2, bwRow, bwRows)
			return func() { be.RMSNorm(d, a, ops.NormParams{Eps: 1e-5}) }
		}),
		bwCase("soft_max", "f32", 2*f32, th, func(be *cpu.Backend) func() {
			a, d := filled(tensor.F32, 1, bwRow, bwRows), filled(tensor.F32, 2, bwRow, bwRows)
			return func() { be.SoftMax(d, a, nil, ops.SoftMaxParams{Scale: 0.125, MaxBias: 0}) }
		}),
		bwCase("rope", "f32", 2*f32, th, func(be *cpu.Backend) func() {
			// 256 tokens of 32 heads of 128: a, pos, rotated by NEOX pairs
			a, d := filled(tensor.F32, 1, 128, 32, bwRows), filled(tensor.F32, 2, 128, 32, bwRows)
			pos := tensor.NewTensor(tensor.I32, [4]int{bwRows, 1, 1, 1})
			for i := range pos.I32s() {
				pos.I32s()[i] = int32(i)
			}
			p := ops.RopeParams{NDims: 128, Mode: ops.RopeNeox, FreqBase: 10000, FreqScale: 1, AttnFactor: 1}
			return func() { be.Rope(d, a, &pos, nil, p) }
		}),
		bwCase("get_rows", "f32", 2*f32, th, func(be *cpu.Backend) func() {
			tab, d := filled(tensor.F32, 1, bwRow, 4*bwRows), filled(tensor.F32, 2, bwRow, bwRows)
			idx := tensor.NewTensor(tensor.I32, [4]int{bwRows, 1, 1, 1})
			for i := range idx.I32s() {
				idx.I32s()[i] = int32(i * 37 % (4 * bwRows))
			}
			return func() { be.GetRows(d, tab, &idx) }
		}),
		bwCase("get_rows", "f16->f32", f16+f32, th, func(be *cpu.Backend) func() {
			tab, d := filled(tensor.F16, 1, bwRow, 4*bwRows), filled(tensor.F32, 2, bwRow, bwRows)
			idx := tensor.NewTensor(tensor.I32, [4]int{bwRows, 1, 1, 1})
			for i := range idx.I32s() {
				idx.I32s()[i] = int32(i * 37 % (4 * bwRows))
			}
			return func() { be.GetRows(d, tab, &idx) }
		}),
	}
}
