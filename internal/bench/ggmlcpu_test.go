package bench

import (
	"errors"
	"math"
	"os"
	"testing"
	"time"

	"github.com/graphc/graphc/internal/ggmlapi"
	"github.com/graphc/graphc/runtime/cpu"
	"github.com/graphc/graphc/tensor"
)

// needGGML skips the test where ggml's libraries are missing, saying how
// to get them ($GRAPHC_REQUIRE_GGML makes that a failure).
func needGGML(t *testing.T) {
	t.Helper()
	if _, _, err := ggmlapi.Load(); err != nil {
		if os.Getenv("GRAPHC_REQUIRE_GGML") != "" {
			t.Fatal(err)
		}
		t.Skipf("%v (for -ggml: %s)", err, GGMLHowTo)
	}
}

// TestGGMLMulMatExtraBufferTypes computes a small q4_0 and q8_0 product on
// ggml's CPU backend with the weight in the plain buffer type and in each
// extra one: the plain product matches the dequantized weight's to x's
// q8_0 rounding, every extra buffer type that takes the weight stores
// other bytes than it was given (it repacked) and computes the plain
// product to float rounding, and one that declines says so.
func TestGGMLMulMatExtraBufferTypes(t *testing.T) {
	needGGML(t)
	info, err := ggmlCPU()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ggml %s (%s), %s; features %v; buffer types %s + extra %v", info.Version, info.Commit, info.Library, info.Features, info.BufferType, info.ExtraBufferTypes)
	const K, M, N = 256, 64, 3
	wf := make([]float32, K*M)
	for i := range wf {
		wf[i] = float32(math.Sin(float64(i) * 0.37))
	}
	x := tensor.NewTensor(tensor.F32, [4]int{K, N, 1, 1})
	for i := range x.F32s() {
		x.F32s()[i] = float32(math.Cos(float64(i) * 0.11))
	}
	for _, dt := range []tensor.DType{tensor.Q4_0, tensor.Q8_0} {
		ne := [4]int{K, M, 1, 1}
		w := tensor.Tensor{Type: dt, Ne: ne, Nb: tensor.ContiguousStrides(dt, ne), Data: tensor.Quantize(nil, dt, wf)}
		deq := tensor.Dequantize(nil, dt, w.Data, K*M)
		product := func(buft string) ([]float32, *ggmlMulMat, error) {
			m, err := newGGMLMulMat(buft, &w, &x, 2)
			if err != nil {
				return nil, nil, err
			}
			defer m.Close()
			if _, err := m.Run(2); err != nil {
				t.Fatalf("%s %s: %v", dt, buft, err)
			}
			got := make([]float32, M*N)
			m.Result(got)
			return got, m, nil
		}
		plain, pm, err := product(info.BufferType)
		if err != nil {
			t.Fatalf("%s plain: %v", dt, err)
		}
		if pm.Repacked {
			t.Errorf("%s: the plain buffer type changed the weight's bytes", dt)
		}
		for j := range N {
			for i := range M {
				var want float64
				for k := range K {
					want += float64(deq[i*K+k]) * float64(x.F32s()[j*K+k])
				}
				// x is quantized to q8_0 (1/254 of each block's largest).
				if got := float64(plain[j*M+i]); math.Abs(got-want) > 0.02*math.Sqrt(K) {
					t.Fatalf("%s plain [%d,%d] = %g, want %g", dt, i, j, got, want)
				}
			}
		}
		for _, buft := range info.ExtraBufferTypes {
			got, m, err := product(buft)
			if errors.Is(err, errDeclined) {
				t.Logf("%s %s: %v", dt, buft, err)
				continue
			}
			if err != nil {
				t.Fatalf("%s %s: %v", dt, buft, err)
			}
			if !m.Repacked {
				t.Errorf("%s %s took the weight but kept its bytes as given", dt, buft)
			}
			if d := maxRelDiff(got, plain); d > 1e-4 {
				t.Errorf("%s %s: differs from the plain product by %.3g of its largest value", dt, buft, d)
			}
			t.Logf("%s %s: repacked (%q), within %.2g of the plain product", dt, buft, m.Log, maxRelDiff(got, plain))
		}
	}
	if _, err := newGGMLMulMat("NO_SUCH", &x, &x, 1); err == nil {
		t.Error("an unknown buffer type was accepted")
	}
}

// TestGGMLFlashAttn races graphc's flash attention against ggml's CPU
// flash_attn_ext on the one-token case: both are timed, and graphc's
// attention agrees with ggml's (compareFlashAttn notes a difference above
// 1% of the largest value, here held to 1e-3 as well).
func TestGGMLFlashAttn(t *testing.T) {
	needGGML(t)
	info, err := ggmlCPU()
	if err != nil {
		t.Fatal(err)
	}
	c := GGMLFlashAttnCases([]int{1})[0]
	if c.N != 1 || c.M != 4096 {
		t.Fatalf("first case %s, want the one-token one", c.Name())
	}
	cmp, err := compareFlashAttn(&c, info.BufferType, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmp.GGML) != 1 || cmp.Graphc <= 0 || cmp.GGML[0].NsPerOp <= 0 || cmp.GGML[0].Ratio <= 0 || cmp.Note != "" {
		t.Fatalf("comparison %+v", cmp)
	}
	q, k, v, mask := faOperands(c.N, c.M)
	g, err := newGGMLFlashAttn(q, k, v, mask, faParams, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.Run(1); err != nil {
		t.Fatal(err)
	}
	want := make([]float32, faHeadDim*faHeads)
	g.Result(want)
	be := cpu.New(1)
	defer be.Close()
	d := filled(tensor.F32, 3, faHeadDim, faHeads, 1)
	be.FlashAttnExt(d, q, k, v, mask, faParams)
	if dd := maxRelDiff(d.F32s(), want); dd > 1e-3 {
		t.Fatalf("graphc's attention differs from ggml's by %.2g of its largest value", dd)
	}
}
