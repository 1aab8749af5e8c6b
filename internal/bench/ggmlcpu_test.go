package bench

import (
	"errors"
	"math"
	"os"
	"testing"

	"github.com/graphc/graphc/internal/ggmlapi"
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
