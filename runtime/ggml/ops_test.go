package ggml_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/graphc/graphc/backend"
	"github.com/graphc/graphc/ops"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/runtime/engine"
	"github.com/graphc/graphc/runtime/ggml"
	"github.com/graphc/graphc/tensor"
)

// HowToTest says how to get ggml's libraries and a Vulkan device on a
// Debian/Ubuntu machine without a GPU, for the tests that skip without.
const howToTest = "cd /tmp && npm pack @node-llama-cpp/linux-x64-vulkan@3.22.1 && tar xzf node-llama-cpp-linux-x64-vulkan-3.22.1.tgz; " +
	"export GRAPHC_GGML_PATH=/tmp/package/bins/linux-x64-vulkan; " +
	"for Vulkan: apt-get install mesa-vulkan-drivers libvulkan1 and export GGML_VK_VISIBLE_DEVICES=0 (lavapipe is a CPU-type device ggml skips otherwise)"

// openDevice opens ggml device devName as a backend, or skips saying how
// to get it (fails with $GRAPHC_REQUIRE_GGML set).
func openDevice(t *testing.T, devName string) *ggml.Backend {
	t.Helper()
	b, err := ggml.Open("test-"+strings.ToLower(devName), devName, backend.BufferType{Name: devName, Alignment: 256})
	if err != nil {
		if os.Getenv("GRAPHC_REQUIRE_GGML") != "" {
			t.Fatal(err)
		}
		t.Skipf("%v\n(%s)", err, howToTest)
	}
	t.Cleanup(b.Close)
	return b
}

func randomHost(r *rand.Rand, typ tensor.DType, ne [4]int) tensor.Tensor {
	t := tensor.NewTensor(typ, ne)
	tensor.Fill(&t, func(i int, _ [4]int) float64 {
		if typ == tensor.I32 {
			return float64(r.IntN(ne[0]))
		}
		return r.Float64()*2 - 1
	})
	return t
}

// pair is one gtensor on the CPU and its copy on the device; a view of
// another pair has the same strides in both memories.
type pair struct {
	host, dev tensor.Tensor
}

// tolerance is how far a device result may be from the CPU's: |got-want|
// ≤ abs + rel·|want| per element.
type tolerance struct{ abs, rel float64 }

// gpuUnderTest is ggml's name of the device the tests run on: Vulkan0, or
// the one $GRAPHC_TEST_GPU names (cuda0 is CUDA0: scripts/cuda-check).
func gpuUnderTest() string {
	if n, ok := strings.CutPrefix(os.Getenv("GRAPHC_TEST_GPU"), "cuda"); ok {
		return "CUDA" + n
	} else if n, ok := strings.CutPrefix(os.Getenv("GRAPHC_TEST_GPU"), "vulkan"); ok {
		return "Vulkan" + n
	}
	return "Vulkan0"
}

// TestOpsMatchCPU runs every op of the IR table, in the variants graphc's
// plans use (types, strided and permuted operands, optional sources left
// out), on a ggml device and on graphc's CPU kernels, and compares. It runs
// the whole sequence twice: the second evaluation reuses the built graph.
//
// Tolerances: the CPU's and ggml's kernels round differently (ggml's
// Vulkan matrix products may convert the right operand to f16; gelu is
// ggml's tanh approximation read from an f16 table on the CPU device;
// exp-based ops use different approximations), so each op states its own.
//
// The device is gpuUnderTest's, then ggml's CPU. The ops
// $GRAPHC_TEST_GGML_WITHOUT lists (flash_attn_ext,…: what the GPU's ggml
// build compiled out) are only asked on the GPU, which must refuse them.
func TestOpsMatchCPU(t *testing.T) {
	for _, dev := range []string{gpuUnderTest(), "CPU"} {
		t.Run(dev, func(t *testing.T) { testOps(t, dev) })
	}
}

func testOps(t *testing.T, devName string) {
	g := openDevice(t, devName)
	r := rand.New(rand.NewPCG(7, 8))
	c := cpu.New(2)
	defer c.Close()
	upload := func(h tensor.Tensor) *pair {
		mem, err := g.Alloc(h.Span())
		if err != nil {
			t.Fatal(err)
		}
		d := tensor.Tensor{Type: h.Type, Ne: h.Ne, Nb: h.Nb, Data: mem}
		g.SetTensor(&d, &h)
		return &pair{host: h, dev: d}
	}
	in := func(typ tensor.DType, ne ...int) *pair {
		n := [4]int{1, 1, 1, 1}
		copy(n[:], ne)
		h := randomHost(r, typ, n)
		if typ.Quantized() {
			f := randomHost(r, tensor.F32, n)
			h = tensor.NewTensor(typ, n)
			tensor.Quantize(h.Data[:0], typ, f.F32s())
		}
		return upload(h)
	}
	// view is a strided view of p with shape ne and strides nb at offset
	// off, in both memories.
	view := func(p *pair, off int, ne, nb [4]int) *pair {
		v := &pair{host: tensor.Tensor{Type: p.host.Type, Ne: ne, Nb: nb}, dev: tensor.Tensor{Type: p.host.Type, Ne: ne, Nb: nb}}
		span := v.host.Span()
		v.host.Data = p.host.Data[off : off+span]
		v.dev.Data = p.dev.Data[off : off+span]
		return v
	}
	a, b := in(tensor.F32, 64, 48, 2), in(tensor.F32, 64, 48, 2)
	bias := in(tensor.F32, 64)
	w16 := in(tensor.F16, 64, 40)
	w8 := in(tensor.Q8_0, 64, 40)
	w4 := in(tensor.Q4_0, 64, 40)
	x := in(tensor.F32, 64, 9)
	rows := in(tensor.F32, 16, 48, 2)
	mask := in(tensor.F32, 16, 48)
	pos := in(tensor.I32, 48)
	idx := in(tensor.I32, 5)
	kv := in(tensor.F16, 64, 48, 2)
	// a transposed: [48, 64, 2] reading a's memory column by column.
	aT := view(a, 0, [4]int{48, 64, 2, 1}, [4]int{256, 4, 256 * 48, 256 * 96})
	// rows 8…23 of every slice of a: strided in dimension 1.
	aRows := view(a, 8*256, [4]int{64, 16, 2, 1}, [4]int{4, 256, 256 * 48, 256 * 96})
	out := func(typ tensor.DType, ne ...int) *pair { return in(typ, ne...) }
	// freqs are llama3-style rope frequency factors, 1 to 8, one a pair.
	freqs := upload(func() tensor.Tensor {
		h := tensor.NewTensor(tensor.F32, [4]int{8, 1, 1, 1})
		tensor.Fill(&h, func(i int, _ [4]int) float64 { return 1 + 7*r.Float64() })
		return h
	}())
	// q is rewritten between two products reading it through one permuted
	// view, as the memory planner puts two layers' queries in one place.
	q := out(tensor.F32, 16, 4, 9)
	qPermuted := view(q, 0, [4]int{16, 9, 4, 1}, [4]int{4, 256, 64, 256 * 9})
	wq := in(tensor.F16, 16, 12, 4)
	// kvSlot is rows 4…12 of kv, where a cpy writes.
	kvSlot := view(kv, 4*128, [4]int{64, 8, 2, 1}, [4]int{2, 128, 128 * 48, 128 * 96})

	// Attention over a cache of 48 (600: ggml's split-KV path for one
	// token; 64 queries: its tiled path) keys, 4 query heads sharing 2
	// K/V heads, under a causal f16 mask. ggml's CPU is graphc's to 1.5e-7
	// but where the keys are split (per-thread chunks' f16 sums: 2.3e-4);
	// lavapipe's sums of f16 products differ by up to 5e-4.
	causal := func(nkv, n int) *pair {
		h := tensor.NewTensor(tensor.F16, [4]int{nkv, n, 1, 1})
		tensor.Fill(&h, func(_ int, c [4]int) float64 {
			if c[0] <= nkv-n+c[1] {
				return 0
			}
			return math.Inf(-1)
		})
		return upload(h)
	}
	kc, vc := in(tensor.F16, 16, 48, 2), in(tensor.F16, 16, 48, 2)
	kLong, vLong := in(tensor.F16, 16, 600, 2), in(tensor.F16, 16, 600, 2)
	kc32, vc32 := in(tensor.F32, 16, 48, 2), in(tensor.F32, 16, 48, 2)
	kTile, vTile := in(tensor.F16, 16, 96, 2), in(tensor.F16, 16, 96, 2)
	fa := ops.FlashAttnParams{Scale: 0.25, Prec: 32}
	// Quantized caches (llama.cpp's -ctk, -ctv), heads of 32: ggml's CPU
	// converts q to K's vec_dot_type and decodes V rows to f32, as graphc's
	// (seen: 6e-8; its cpy into q8_0 and q4_0 is graphc's byte for byte);
	// Vulkan0 5.8e-4.
	kq8, vq8 := in(tensor.Q8_0, 32, 48, 2), in(tensor.Q8_0, 32, 48, 2)
	kq4, vq4 := in(tensor.Q4_0, 32, 48, 2), in(tensor.Q4_0, 32, 48, 2)
	faQ := ops.FlashAttnParams{Scale: 0.18, Prec: 32}

	// A mixture of 6 experts, 3 used per token, 9 tokens: each token's
	// experts are a random choice (distinct, as argsort's are) in the
	// first 3 of 6 columns, viewed as llama.cpp's ggml_argsort_top_k views
	// argsort's result.
	chosen := upload(func() tensor.Tensor {
		h := tensor.NewTensor(tensor.I32, [4]int{6, 9, 1, 1})
		ids := h.I32s()
		for tok := range 9 {
			for i, e := range r.Perm(6) {
				ids[tok*6+i] = int32(e)
			}
		}
		return h
	}())
	ids := view(chosen, 0, [4]int{3, 9, 1, 1}, [4]int{4, 24, 24 * 9, 24 * 9})
	xTok := in(tensor.F32, 64, 1, 9)  // one column per token, shared by its experts
	xUsed := in(tensor.F32, 64, 3, 9) // a column per token and expert
	xK := in(tensor.F32, 256, 1, 9)
	probs := in(tensor.F32, 6, 9)

	type step struct {
		op      ops.Op
		variant string
		dst     *pair
		srcs    []*pair
		params  []any
		tol     tolerance
	}
	exact := tolerance{}
	rope := ops.RopeParams{NDims: 16, FreqBase: 10000, FreqScale: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}
	ropeNeox := rope
	ropeNeox.Mode = ops.RopeNeox
	steps := []step{
		{ops.MulMat, "f32", out(tensor.F32, 48, 48, 2), []*pair{a, b}, []any{ops.MulMatParams{}}, tolerance{2e-2, 2e-2}},
		{ops.MulMat, "f16", out(tensor.F32, 40, 9), []*pair{w16, x}, []any{ops.MulMatParams{}}, tolerance{2e-2, 2e-2}},
		// With f32 sums (llama.cpp's attention scores against the f16 KV
		// cache) an f16 product is the CPU's to float rounding (lavapipe:
		// 1.9e-6, 1.4e-2 at the default precision, which sums in f16).
		{ops.MulMat, "f16 prec f32", out(tensor.F32, 40, 9), []*pair{w16, x}, []any{ops.MulMatParams{Prec: 32}}, tolerance{1e-5, 1e-5}},
		{ops.MulMat, "q8_0", out(tensor.F32, 40, 9), []*pair{w8, x}, []any{ops.MulMatParams{}}, tolerance{5e-2, 2e-2}},
		{ops.MulMat, "q4_0", out(tensor.F32, 40, 9), []*pair{w4, x}, []any{ops.MulMatParams{}}, tolerance{5e-2, 2e-2}},
		{ops.Scale, "query of layer 0", q, []*pair{in(tensor.F32, 16, 4, 9)}, []any{ops.ScaleParams{S: 1}}, exact},
		{ops.MulMat, "permuted operand", out(tensor.F32, 12, 9, 4), []*pair{wq, qPermuted}, []any{ops.MulMatParams{}}, tolerance{2e-2, 2e-2}},
		{ops.Scale, "query of layer 1, same place", q, []*pair{in(tensor.F32, 16, 4, 9)}, []any{ops.ScaleParams{S: 1}}, exact},
		{ops.MulMat, "the same view, rewritten", out(tensor.F32, 12, 9, 4), []*pair{wq, qPermuted}, []any{ops.MulMatParams{}}, tolerance{2e-2, 2e-2}},
		{ops.MulMat, "transposed operand", out(tensor.F32, 64, 64, 2), []*pair{aT, aT}, []any{ops.MulMatParams{}}, tolerance{2e-2, 2e-2}},
		{ops.Add, "", out(tensor.F32, 64, 48, 2), []*pair{a, b}, nil, tolerance{1e-6, 1e-6}},
		{ops.Add, "broadcast", out(tensor.F32, 64, 48, 2), []*pair{a, bias}, nil, tolerance{1e-6, 1e-6}},
		{ops.Sub, "", out(tensor.F32, 64, 48, 2), []*pair{a, b}, nil, tolerance{1e-6, 1e-6}},
		{ops.Mul, "strided", out(tensor.F32, 64, 16, 2), []*pair{aRows, aRows}, nil, tolerance{1e-6, 1e-6}},
		{ops.Div, "", out(tensor.F32, 64, 48, 2), []*pair{a, b}, nil, tolerance{1e-5, 1e-5}},
		{ops.Scale, "", out(tensor.F32, 64, 48, 2), []*pair{a}, []any{ops.ScaleParams{S: 0.3}}, tolerance{1e-6, 1e-6}},
		{ops.Relu, "", out(tensor.F32, 64, 48, 2), []*pair{a}, nil, exact},
		{ops.Gelu, "", out(tensor.F32, 64, 48, 2), []*pair{a}, nil, tolerance{2e-3, 2e-3}},
		{ops.Silu, "", out(tensor.F32, 64, 48, 2), []*pair{a}, nil, tolerance{1e-5, 1e-5}},
		{ops.Tanh, "", out(tensor.F32, 64, 48, 2), []*pair{a}, nil, tolerance{1e-5, 1e-5}},
		{ops.Sigmoid, "", out(tensor.F32, 64, 48, 2), []*pair{a}, nil, tolerance{1e-5, 1e-5}},
		{ops.RMSNorm, "", out(tensor.F32, 64, 48, 2), []*pair{a}, []any{ops.NormParams{Eps: 1e-5}}, tolerance{1e-5, 1e-5}},
		{ops.Norm, "", out(tensor.F32, 64, 48, 2), []*pair{a}, []any{ops.NormParams{Eps: 1e-5}}, tolerance{1e-5, 1e-5}},
		{ops.SoftMax, "", out(tensor.F32, 16, 48, 2), []*pair{rows, mask}, []any{ops.SoftMaxParams{Scale: 0.25}}, tolerance{1e-5, 1e-4}},
		{ops.SoftMax, "no mask", out(tensor.F32, 16, 48, 2), []*pair{rows, nil}, []any{ops.SoftMaxParams{Scale: 0.25}}, tolerance{1e-5, 1e-4}},
		{ops.Rope, "normal", out(tensor.F32, 16, 2, 48), []*pair{view(rows, 0, [4]int{16, 2, 48, 1}, [4]int{4, 64, 128, 128 * 48}), pos, nil}, []any{rope}, tolerance{1e-4, 1e-4}},
		{ops.Rope, "neox", out(tensor.F32, 16, 2, 48), []*pair{view(rows, 0, [4]int{16, 2, 48, 1}, [4]int{4, 64, 128, 128 * 48}), pos, nil}, []any{ropeNeox}, tolerance{1e-4, 1e-4}},
		{ops.Rope, "freq factors", out(tensor.F32, 16, 2, 48), []*pair{view(rows, 0, [4]int{16, 2, 48, 1}, [4]int{4, 64, 128, 128 * 48}), pos, freqs}, []any{rope}, tolerance{1e-4, 1e-4}},
		{ops.GetRows, "f32", out(tensor.F32, 64, 5), []*pair{x, idx}, nil, exact},
		{ops.GetRows, "f16", out(tensor.F32, 64, 5), []*pair{w16, idx}, nil, exact},
		{ops.GetRows, "q8_0", out(tensor.F32, 64, 5), []*pair{w8, idx}, nil, tolerance{1e-6, 1e-6}},
		{ops.Cpy, "f32 to f16", out(tensor.F16, 64, 48, 2), []*pair{a}, nil, exact},
		{ops.Cpy, "into a strided view", kvSlot, []*pair{view(a, 0, [4]int{64, 8, 2, 1}, [4]int{4, 256, 256 * 48, 256 * 96})}, nil, exact},
		{ops.Cont, "transposed", out(tensor.F32, 48, 64, 2), []*pair{aT}, nil, exact},
		{ops.FlashAttnExt, "one token", out(tensor.F32, 16, 4, 1), []*pair{in(tensor.F32, 16, 1, 4), kc, vc, causal(48, 1)}, []any{fa}, tolerance{2e-3, 2e-3}},
		{ops.FlashAttnExt, "batch", out(tensor.F32, 16, 4, 9), []*pair{in(tensor.F32, 16, 9, 4), kc, vc, causal(48, 9)}, []any{fa}, tolerance{2e-3, 2e-3}},
		{ops.FlashAttnExt, "f32 mask", out(tensor.F32, 16, 4, 9), []*pair{in(tensor.F32, 16, 9, 4), kc, vc, in(tensor.F32, 48, 9)}, []any{fa}, tolerance{2e-3, 2e-3}},
		{ops.FlashAttnExt, "f32 cache, no mask", out(tensor.F32, 16, 4, 9), []*pair{in(tensor.F32, 16, 9, 4), kc32, vc32, nil}, []any{fa}, tolerance{1e-3, 1e-3}},
		{ops.FlashAttnExt, "split keys", out(tensor.F32, 16, 4, 1), []*pair{in(tensor.F32, 16, 1, 4), kLong, vLong, causal(600, 1)}, []any{fa}, tolerance{2e-3, 2e-3}},
		{ops.FlashAttnExt, "tiled", out(tensor.F32, 16, 4, 64), []*pair{in(tensor.F32, 16, 64, 4), kTile, vTile, causal(96, 64)}, []any{fa}, tolerance{1e-3, 1e-3}},
		{ops.Cpy, "f32 to q8_0", out(tensor.Q8_0, 64, 48, 2), []*pair{a}, nil, exact},
		{ops.Cpy, "f32 to q4_0", out(tensor.Q4_0, 64, 48, 2), []*pair{a}, nil, exact},
		{ops.FlashAttnExt, "q8_0 cache, one token", out(tensor.F32, 32, 4, 1), []*pair{in(tensor.F32, 32, 1, 4), kq8, vq8, causal(48, 1)}, []any{faQ}, tolerance{2e-3, 2e-3}},
		{ops.FlashAttnExt, "q8_0 cache, batch", out(tensor.F32, 32, 4, 9), []*pair{in(tensor.F32, 32, 9, 4), kq8, vq8, causal(48, 9)}, []any{faQ}, tolerance{2e-3, 2e-3}},
		{ops.FlashAttnExt, "q4_0 cache, batch", out(tensor.F32, 32, 4, 9), []*pair{in(tensor.F32, 32, 9, 4), kq4, vq4, causal(48, 9)}, []any{faQ}, tolerance{2e-3, 2e-3}},
		// The experts' products are MulMat's per expert (seen on ggml's
		// CPU: to float rounding, 3.8e-6 for q4_K; lavapipe's q4_K 8.7e-2 at
		// sums over 256 of about 5).
		{ops.MulMatID, "f32", out(tensor.F32, 40, 3, 9), []*pair{in(tensor.F32, 64, 40, 6), xTok, ids}, nil, tolerance{2e-2, 2e-2}},
		{ops.MulMatID, "f16", out(tensor.F32, 40, 3, 9), []*pair{in(tensor.F16, 64, 40, 6), xTok, ids}, nil, tolerance{2e-2, 2e-2}},
		{ops.MulMatID, "q8_0", out(tensor.F32, 40, 3, 9), []*pair{in(tensor.Q8_0, 64, 40, 6), xTok, ids}, nil, tolerance{5e-2, 2e-2}},
		{ops.MulMatID, "q4_0, a column per expert", out(tensor.F32, 40, 3, 9), []*pair{in(tensor.Q4_0, 64, 40, 6), xUsed, ids}, nil, tolerance{5e-2, 2e-2}},
		{ops.MulMatID, "q4_K", out(tensor.F32, 24, 3, 9), []*pair{in(tensor.Q4_K, 256, 24, 6), xK, ids}, nil, tolerance{1.5e-1, 2e-2}},
		{ops.ArgSort, "descending", out(tensor.I32, 6, 9), []*pair{probs}, []any{ops.ArgSortParams{Order: 1}}, exact},
		{ops.ArgSort, "ascending", out(tensor.I32, 16, 48, 2), []*pair{rows}, []any{ops.ArgSortParams{}}, exact},
		// top_k's rows are sets (ggml leaves their order open): both
		// sides' rows are sorted before the comparison.
		{ops.TopK, "3 of 6", out(tensor.I32, 3, 9), []*pair{probs}, []any{ops.TopKParams{K: 3}}, exact},
		{ops.TopK, "4 of 16", out(tensor.I32, 4, 48, 2), []*pair{rows}, []any{ops.TopKParams{K: 4}}, exact},
		{ops.TopK, "1 of 16", out(tensor.I32, 1, 48, 2), []*pair{rows}, []any{ops.TopKParams{K: 1}}, exact},
		{ops.SumRows, "", out(tensor.F32, 1, 48, 2), []*pair{a}, nil, tolerance{1e-5, 1e-5}},
		{ops.FlashAttnExt, "q8_0 K, f16 V", out(tensor.F32, 32, 4, 9), []*pair{in(tensor.F32, 32, 9, 4), kq8, in(tensor.F16, 32, 48, 2), causal(48, 9)}, []any{faQ}, tolerance{2e-3, 2e-3}},
	}
	stepped := map[ops.Op]bool{}
	for _, st := range steps {
		stepped[st.op] = true
	}
	for _, op := range ops.All() {
		if op.Info().Kernel != "" && !stepped[op] {
			t.Errorf("op %s (kernel %s) has no step in TestOpsMatchCPU", op, op.Info().Kernel)
		}
	}
	if devName != "CPU" {
		without := ggmlWithout(t)
		for op := range without {
			if !stepped[op] {
				t.Fatalf("$%s names %s, which has no step here", withoutEnv, op)
			}
		}
		// A listed op's steps are asked, not run: the device must refuse
		// each (an accepted one runs and fails the test, so that the list
		// cannot hide a wrong answer).
		kept := steps[:0]
		for _, st := range steps {
			if !without[st.op] {
				kept = append(kept, st)
				continue
			}
			q := backend.OpQuery{Op: st.op, Type: st.dst.host.Type, Ne: ne64(st.dst.host.Ne)}
			srcs := st.srcs
			for len(srcs) > 0 && srcs[len(srcs)-1] == nil {
				srcs = srcs[:len(srcs)-1] // optional sources left out
			}
			if st.op.Info().Flags&ops.FlagWritesSrc != 0 {
				srcs = append(srcs[:len(srcs):len(srcs)], st.dst)
			}
			for _, p := range srcs {
				q.Src = append(q.Src, backend.OpSrc{Type: p.host.Type, Ne: ne64(p.host.Ne), Nb: ne64(p.host.Nb)})
			}
			name := fmt.Sprintf("%s %s", st.op, st.variant)
			if err := g.Check([]backend.OpQuery{q}); err == nil {
				t.Errorf("%s: $%s says %s's ggml lacks %s, but the device supports it: take it off the list", name, withoutEnv, devName, st.op)
				kept = append(kept, st)
			} else if want := "(ggml op " + ggmlOpName(st.op) + ")"; !strings.Contains(err.Error(), " does not support ") || !strings.Contains(err.Error(), want) {
				// A refused helper node (flash_attn_ext's mask cast) or a
				// failure to ask is not the op missing.
				t.Errorf("%s: asking the device: %v; want a refusal of %s", name, err, want)
			} else {
				t.Logf("%-28s refused, as $%s says: %v", name, withoutEnv, err)
			}
		}
		steps = kept
	}
	call := func(k engine.Kernels, st step, pick func(*pair) *tensor.Tensor) {
		args := []reflect.Value{reflect.ValueOf(pick(st.dst))}
		for _, p := range st.srcs {
			var t *tensor.Tensor
			if p != nil {
				t = pick(p)
			}
			args = append(args, reflect.ValueOf(t))
		}
		for _, v := range st.params {
			args = append(args, reflect.ValueOf(v))
		}
		reflect.ValueOf(k).MethodByName(st.op.Info().Kernel).Call(args)
	}
	for _, st := range steps {
		call(c, st, func(p *pair) *tensor.Tensor { return &p.host })
	}
	for eval := range 2 {
		for _, st := range steps {
			call(g, st, func(p *pair) *tensor.Tensor { return &p.dev })
		}
		g.Synchronize()
		if err := g.Err(); err != nil {
			t.Fatal(err)
		}
		for _, st := range steps {
			raw := tensor.NewTensor(st.dst.host.Type, st.dst.host.Ne)
			g.GetTensor(&raw, &st.dst.dev)
			got := tensor.NewTensor(tensor.F32, st.dst.host.Ne)
			want := tensor.NewTensor(tensor.F32, st.dst.host.Ne)
			switch {
			case raw.Type.Quantized():
				tensor.Dequantize(got.F32s()[:0], raw.Type, raw.Data, got.NElem())
				tensor.Dequantize(want.F32s()[:0], raw.Type, st.dst.host.Data, want.NElem())
			case raw.Type == tensor.I32: // argsort's and top_k's indices
				g, w := raw.I32s(), slices.Clone(st.dst.host.I32s())
				if st.op == ops.TopK {
					for r := 0; r < len(g); r += raw.Ne[0] {
						slices.Sort(g[r : r+raw.Ne[0]])
						slices.Sort(w[r : r+raw.Ne[0]])
					}
				}
				for i, v := range g {
					got.F32s()[i] = float32(v)
				}
				for i, v := range w {
					want.F32s()[i] = float32(v)
				}
			default:
				c.Cpy(&got, &raw)
				c.Cpy(&want, &st.dst.host)
			}
			worst, at := 0.0, -1
			for i, w := range want.F32s() {
				d := math.Abs(float64(got.F32s()[i] - w))
				if excess := d - (st.tol.abs + st.tol.rel*math.Abs(float64(w))); excess > 0 && (at < 0 || excess > worst) || math.IsNaN(d) {
					worst, at = d, i
				}
			}
			name := fmt.Sprintf("%s %s", st.op, st.variant)
			if at >= 0 {
				t.Errorf("eval %d: %s on %s: element %d is %g, the CPU's %g (tolerance %g + %g·|want|)", eval, name, devName, at, got.F32s()[at], want.F32s()[at], st.tol.abs, st.tol.rel)
			} else if eval == 0 {
				t.Logf("%-28s max |diff| %.3g", name, maxDiff(got.F32s(), want.F32s()))
			}
		}
	}
	if n := g.Graphs(); n != 1 {
		t.Errorf("%d graphs built for two evaluations of the same kernels, want 1", n)
	}
}

// withoutEnv names the ops the GPU's ggml build lacks, comma-separated
// (flash_attn_ext for ggml-cuda built with -DGGML_CUDA_FA=OFF, as
// scripts/cuda-check/run.sh builds it to fit its time box).
const withoutEnv = "GRAPHC_TEST_GGML_WITHOUT"

// ggmlWithout is the set of ops $GRAPHC_TEST_GGML_WITHOUT names; an
// unknown name fails the test rather than skipping nothing.
func ggmlWithout(t *testing.T) map[ops.Op]bool {
	t.Helper()
	set := map[ops.Op]bool{}
	for _, name := range strings.Split(os.Getenv(withoutEnv), ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		op, ok := ops.Lookup(name)
		if !ok {
			t.Fatalf("$%s: %q is no op of the IR table", withoutEnv, name)
		}
		set[op] = true
	}
	return set
}

// ggmlOpName is ggml_op_desc's name of the node computing op: its
// kernel's first op (cpy for cont), a unary op by its own name.
func ggmlOpName(op ops.Op) string {
	for _, k := range ops.All() {
		if k.Info().Kernel == op.Info().Kernel {
			op = k
			break
		}
	}
	if op.Info().GGML == "UNARY" {
		return strings.ToUpper(op.Info().Name)
	}
	return op.Info().GGML
}

func ne64(n [4]int) [4]int64 { return [4]int64{int64(n[0]), int64(n[1]), int64(n[2]), int64(n[3])} }

func maxDiff(a, b []float32) float64 {
	m := 0.0
	for i := range a {
		m = max(m, math.Abs(float64(a[i]-b[i])))
	}
	return m
}

// TestCheckRefuses: Check names the op, its types and shapes and the
// device when the device refuses an op. ggml's Vulkan backend has no
// f16 → q8_0 copy; ggml's CPU no matrix product by an f16 right operand.
func TestCheckRefuses(t *testing.T) {
	for _, c := range []struct {
		device string
		op     backend.OpQuery
		want   string
	}{
		{"Vulkan0", backend.OpQuery{Op: ops.Cpy, Type: tensor.Q8_0, Ne: [4]int64{64, 8, 1, 1}, Src: []backend.OpSrc{{Type: tensor.F16, Ne: [4]int64{64, 8, 1, 1}}, {Type: tensor.Q8_0, Ne: [4]int64{64, 8, 1, 1}}}},
			"test-vulkan0: ggml device Vulkan0 (%s) does not support cpy → q8_0[64 8 1 1] from f16[64 8 1 1] (ggml op CPY), which the plan puts on it; place it on another backend (-ot, or a target without test-vulkan0)"},
		{"CPU", backend.OpQuery{Op: ops.MulMat, Type: tensor.F32, Ne: [4]int64{8, 4, 1, 1}, Src: []backend.OpSrc{{Type: tensor.F32, Ne: [4]int64{64, 8, 1, 1}}, {Type: tensor.F16, Ne: [4]int64{64, 4, 1, 1}}}},
			"test-cpu: ggml device CPU (%s) does not support mul_mat → f32[8 4 1 1] from f32[64 8 1 1], f16[64 4 1 1] (ggml op MUL_MAT)"},
	} {
		t.Run(c.device, func(t *testing.T) {
			g := openDevice(t, c.device)
			ok := backend.OpQuery{Op: ops.Add, Type: tensor.F32, Ne: [4]int64{64, 8, 1, 1}, Src: []backend.OpSrc{{Type: tensor.F32, Ne: [4]int64{64, 8, 1, 1}}, {Type: tensor.F32, Ne: [4]int64{64, 1, 1, 1}}}}
			if err := g.Check([]backend.OpQuery{ok}); err != nil {
				t.Fatal(err)
			}
			err := g.Check([]backend.OpQuery{ok, c.op})
			want := fmt.Sprintf(c.want, g.Device().Description)
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Check = %v\nwant %s…", err, want)
			}
		})
	}
}

// TestCopyBetweenDevices: CopyTensorAsync copies between two ggml
// backends (gpuUnderTest's and ggml's CPU) both ways, and refuses a strided
// gtensor; SetTensor's staging lets the caller reuse its source at once.
func TestCopyBetweenDevices(t *testing.T) {
	v, c := openDevice(t, gpuUnderTest()), openDevice(t, "CPU")
	r := rand.New(rand.NewPCG(1, 2))
	host := randomHost(r, tensor.F32, [4]int{64, 8, 1, 1})
	want := append([]byte(nil), host.Data...)
	alloc := func(b *ggml.Backend) tensor.Tensor {
		mem, err := b.Alloc(host.Span())
		if err != nil {
			t.Fatal(err)
		}
		return tensor.Tensor{Type: host.Type, Ne: host.Ne, Nb: host.Nb, Data: mem}
	}
	onV, onC, back := alloc(v), alloc(c), alloc(v)
	v.SetTensor(&onV, &host)
	clear(host.Data) // the set must not read it any more
	if !v.CopyTensorAsync(c, &onC, &onV) || !c.CopyTensorAsync(v, &back, &onC) {
		t.Fatal("CopyTensorAsync between two ggml backends reported false")
	}
	v.Synchronize()
	c.Synchronize()
	got := tensor.NewTensor(host.Type, host.Ne)
	v.GetTensor(&got, &back)
	if !reflect.DeepEqual(got.Data, want) {
		t.Error("the gtensor copied to the CPU device and back differs")
	}
	strided := onV
	strided.Ne[0], strided.Nb[1] = 32, onV.Nb[1]
	strided.Data = onV.Data[:strided.Span()]
	if v.CopyTensorAsync(c, &strided, &strided) {
		t.Error("CopyTensorAsync of a strided gtensor reported true")
	}
	if err := v.Err(); err != nil {
		t.Fatal(err)
	}
}
