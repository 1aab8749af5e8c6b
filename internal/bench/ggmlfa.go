package bench

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unsafe"

	"github.com/graphc/graphc/internal/ggmlapi"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// -ggml's flash-attention cases: runtime/cpu's FlashAttnExt beside ggml's
// CPU ggml_flash_attn_ext on the same q, f16 K/V caches and causal mask,
// at Llama-3.2-1B's attention shapes (32 query heads over 8 K/V heads of
// 64): a generated token against 4096 cached keys (ggml's split-KV path)
// and a 512-token batch at that depth, against 4608 (its tiled path).

const (
	faHeadDim = 64
	faHeads   = 32
	faKVHeads = 8
)

// GGMLFlashAttnCases are -ggml's flash-attention cases, per thread count
// (nil: 1 and 2): kernel "flashattn", dtype the K/V caches', m the keys,
// n the tokens, k the head size.
func GGMLFlashAttnCases(threads []int) []Case {
	if len(threads) == 0 {
		threads = []int{1, 2}
	}
	var cs []Case
	for _, th := range threads {
		for _, s := range []struct{ n, kv int }{{1, 4096}, {512, 4608}} {
			cs = append(cs, Case{Kernel: "flashattn", DType: "f16", M: s.kv, N: s.n, K: faHeadDim, Threads: th})
		}
	}
	return cs
}

// faOperands are a case's q (f32 [dk, n, heads]), K and V (f16 [dk, kv,
// K/V heads]) and llama.cpp's causal mask (f16 [kv, n padded to 64]: the
// n tokens are the last of the kv positions; ggml asks for the padding,
// GGML_KQ_MASK_PAD, and runtime/cpu reads the first n rows).
func faOperands(n, kv int) (q, k, v, mask *tensor.Tensor) {
	q = filled(tensor.F32, 5, faHeadDim, n, faHeads)
	k = filled(tensor.F16, 6, faHeadDim, kv, faKVHeads)
	v = filled(tensor.F16, 7, faHeadDim, kv, faKVHeads)
	rows := (n + 63) &^ 63
	m := tensor.NewTensor(tensor.F16, [4]int{kv, rows, 1, 1})
	negInf := tensor.F32ToF16(float32(math.Inf(-1)))
	for i := range rows {
		for j := range kv {
			if j > kv-n+i {
				m.F16s()[i*kv+j] = negInf
			}
		}
	}
	return q, k, v, &m
}

// faParams are the cases' parameters: llama.cpp's scale, f32 precision.
var faParams = ops.FlashAttnParams{Scale: float32(1 / math.Sqrt(faHeadDim)), Prec: 32}

// compareFlashAttn measures a flash-attention case: graphc, then ggml
// with every tensor in its plain CPU buffer type buft ("" without ggml),
// in turns (race). The ratio is ggml's time over graphc's.
func compareFlashAttn(c *Case, buft string, minTime time.Duration) (_ *Comparison, err error) {
	q, k, v, mask := faOperands(c.N, c.M)
	var cs []*contender
	defer func() {
		for _, ct := range cs {
			ct.close()
		}
	}()
	be := cpu.New(c.Threads)
	d := filled(tensor.F32, 3, faHeadDim, faHeads, c.N)
	cs = append(cs, &contender{
		batch: func(n int) (time.Duration, error) {
			start := time.Now()
			for range n {
				be.FlashAttnExt(d, q, k, v, mask, faParams)
			}
			return time.Since(start), nil
		},
		result: func() []float32 { return d.F32s() },
		close:  be.Close,
	})
	cmp := &Comparison{Kernel: c.Kernel, DType: c.DType, M: c.M, N: c.N, K: c.K, Threads: c.Threads}
	if buft != "" {
		g, err := newGGMLFlashAttn(q, k, v, mask, faParams, c.Threads)
		if err != nil {
			return nil, err
		}
		cs = append(cs, &contender{
			batch: g.Run,
			result: func() []float32 {
				r := make([]float32, len(d.F32s()))
				g.Result(r)
				return r
			},
			close: g.Close,
		})
		cmp.GGML = []GGMLTime{{BufferType: buft}}
	}
	if err := race(cs, minTime); err != nil {
		return nil, err
	}
	cmp.Graphc = round3(cs[0].best)
	if len(cs) > 1 {
		t := &cmp.GGML[0]
		t.NsPerOp = round3(cs[1].best)
		t.Ratio = round3(cs[1].best / cs[0].best)
		if dd := maxRelDiff(cs[0].result(), cs[1].result()); dd > 1e-2 {
			cmp.Note = fmt.Sprintf("graphc differs from ggml's %s flash attention by %.2g of its largest value", buft, dd)
		}
	}
	return cmp, nil
}

// ggmlFlashAttn is ggml_flash_attn_ext(q, k, v, mask) on ggml's CPU
// backend, every tensor in the device's plain buffer: one graph of one
// node, as llama.cpp computes attention with -fa on.
type ggmlFlashAttn struct {
	a        *ggmlapi.API
	c        *cpuAPI
	be       ggmlapi.Backend
	ctx      ggmlapi.Context
	graph    ggmlapi.Graph
	buf      ggmlapi.Buffer
	dst      ggmlapi.Tensor
	threads  int
	tpParams []byte
}

// newGGMLFlashAttn prepares ggml_flash_attn_ext on threads threads: q
// f32, k and v dense of any type ggml takes, mask f16 or nil, p's scale,
// ALiBi bias, softcap and precision.
func newGGMLFlashAttn(q, k, v, mask *tensor.Tensor, p ops.FlashAttnParams, threads int) (_ *ggmlFlashAttn, err error) {
	a, c, err := cpuLib()
	if err != nil {
		return nil, err
	}
	if threads < 1 {
		return nil, fmt.Errorf("ggml CPU flash_attn_ext: %d threads", threads)
	}
	g := &ggmlFlashAttn{a: a, c: c, threads: threads, tpParams: make([]byte, 16<<10)}
	defer func() {
		if err != nil {
			g.Close()
		}
	}()
	g.ctx = a.InitContext(a.TensorOver()*8+a.GraphOver(8, false)+1024, true)
	if g.ctx == 0 {
		return nil, errors.New("ggml_init failed")
	}
	newT := func(t *tensor.Tensor) ggmlapi.Tensor {
		if !t.Contiguous() {
			panic(fmt.Sprintf("BUG: newGGMLFlashAttn: %s%v not dense", t.Type, t.Ne))
		}
		return a.NewTensor4d(g.ctx, int32(uint32(t.Type)), int64(t.Ne[0]), int64(t.Ne[1]), int64(t.Ne[2]), int64(t.Ne[3]))
	}
	ins := []*tensor.Tensor{q, k, v}
	if mask != nil {
		ins = append(ins, mask)
	}
	var ts []ggmlapi.Tensor
	for _, t := range ins {
		ts = append(ts, newT(t))
	}
	mt := ggmlapi.Tensor(0)
	if mask != nil {
		mt = ts[3]
	}
	g.dst = a.FlashAttnExt(g.ctx, ts[0], ts[1], ts[2], mt, p.Scale, p.MaxBias, p.LogitSoftcap)
	if w := p.GGML(); w[3] != 0 {
		a.FlashAttnExtSetPrec(g.dst, w[3])
	}
	plain := a.DevBufferType(c.dev)
	align := max(a.BuftAlignment(plain), 1)
	up := func(n uintptr) uintptr { return (n + align - 1) / align * align }
	size := up(a.Nbytes(g.dst))
	for _, t := range ts {
		size += up(a.Nbytes(t))
	}
	if g.buf = a.BuftAllocBuffer(plain, size); g.buf == 0 {
		return nil, fmt.Errorf("%s could not allocate %d bytes", a.BuftName(plain), size)
	}
	at := a.BufferBase(g.buf)
	for _, t := range append(ts, g.dst) {
		if st := a.TensorAlloc(g.buf, t, at); st != 0 {
			return nil, fmt.Errorf("placing flash_attn_ext's tensors: ggml status %d", st)
		}
		at += up(a.Nbytes(t))
	}
	if !a.DevSupportsOp(c.dev, g.dst) {
		return nil, fmt.Errorf("ggml's CPU device does not take flash_attn_ext with %s q, %s K, %s V", q.Type, k.Type, v.Type)
	}
	for i, t := range ins {
		if n := a.Nbytes(ts[i]); uintptr(len(t.Data)) >= n {
			a.TensorSet(ts[i], unsafe.Pointer(unsafe.SliceData(t.Data)), 0, n)
		} else {
			return nil, fmt.Errorf("ggml CPU flash_attn_ext: %s%v's data is shorter than its shape", t.Type, t.Ne)
		}
	}
	if g.be = a.DevInit(c.dev, 0); g.be == 0 {
		return nil, errors.New("ggml could not initialize its CPU backend")
	}
	c.setNThreads(g.be, int32(threads))
	g.graph = a.NewGraphCustom(g.ctx, 8, false)
	a.BuildForwardExpand(g.graph, g.dst)
	if desc := a.OpDesc(g.dst); !strings.Contains(strings.ToUpper(desc), "FLASH_ATTN") {
		return nil, fmt.Errorf("ggml built %s, not flash_attn_ext", desc)
	}
	return g, nil
}

// Run computes the attention n times and returns their time (see
// ggmlMulMat.Run).
func (g *ggmlFlashAttn) Run(n int) (time.Duration, error) {
	return g.c.computeN(g.be, g.graph, g.threads, g.tpParams, n)
}

// Result copies the attention (f32 [dv, heads, n]) into dst.
func (g *ggmlFlashAttn) Result(dst []float32) {
	n := g.a.Nbytes(g.dst)
	if uintptr(len(dst))*4 < n {
		panic("BUG: ggmlFlashAttn.Result: dst too short")
	}
	g.a.TensorGet(g.dst, unsafe.Pointer(unsafe.SliceData(dst)), 0, n)
}

// Close frees the backend, buffer and graph.
func (g *ggmlFlashAttn) Close() {
	a := g.a
	if g.be != 0 {
		a.BackendFree(g.be)
		g.be = 0
	}
	if g.buf != 0 {
		a.BufferFree(g.buf)
		g.buf = 0
	}
	if g.ctx != 0 {
		a.Free(g.ctx)
		g.ctx = 0
	}
}
