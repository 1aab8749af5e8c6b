package tensor_test

import (
	"math"
	"testing"

	"github.com/graphc/graphc/tensor"
)

// TestTypeTable checks every row of the type table: one name per id, a
// block layout, and for a supported type whose values are floats a codec
// that writes RowSize bytes and reads back what it wrote within the
// type's rounding.
func TestTypeTable(t *testing.T) {
	names := map[string]tensor.DType{}
	for id := tensor.DType(0); id < 64; id++ {
		tr := id.Traits()
		if !id.Known() {
			if tr.Supported {
				t.Errorf("type %d: supported but has no name", id)
			}
			continue
		}
		if other, ok := names[tr.Name]; ok {
			t.Errorf("types %d and %d are both %q", other, id, tr.Name)
		}
		names[tr.Name] = id
		if got, ok := tensor.ParseDType(tr.Name); !ok || got != id {
			t.Errorf("ParseDType(%q) = %v, %v", tr.Name, got, ok)
		}
		if tr.Block < 1 || tr.Size < 1 {
			t.Errorf("%s: block of %d elements in %d bytes", id, tr.Block, tr.Size)
		}
		if !tr.Supported {
			continue
		}
		if tr.Doc == "" {
			t.Errorf("%s: supported, with no Doc for the DSL's reference", id)
		}
		if id == tensor.I32 {
			continue // integers: no float codec
		}
		if tr.Encode == nil || tr.Decode == nil {
			t.Errorf("%s: supported, but its row has no Encode or Decode (tensor/quant.go)", id)
			continue
		}
		n := 2 * tr.Block * max(1, 32/tr.Block)
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(math.Sin(float64(i)*0.7)) * 2
		}
		enc := tensor.Quantize(nil, id, src)
		if len(enc) != id.RowSize(n) {
			t.Errorf("%s: Encode wrote %d bytes for %d values, RowSize says %d", id, len(enc), n, id.RowSize(n))
			continue
		}
		dec := tensor.Dequantize(nil, id, enc, n)
		// A type of b bits a weight steps by about amax/2^(b-1) (q4_0:
		// amax/8); the values' amax is 2.
		bound := 0.26
		if bits := 8 * float64(tr.Size) / float64(tr.Block); bits < 4 {
			bound = 2 / math.Exp2(bits-1.5)
		}
		for i := range src {
			if d := math.Abs(float64(dec[i] - src[i])); d > bound || len(dec) != n {
				t.Errorf("%s: value %d: %g became %g", id, i, src[i], dec[i])
				break
			}
		}
	}
}

// TestTypesMatchGGML checks the type table against sizeof(block_*) and the QK
// constants of ggml-org/ggml src/ggml-common.h (at d99724f2), printed by a
// C program compiled against that header.
func TestTypesMatchGGML(t *testing.T) {
	for _, tc := range []struct {
		t          tensor.DType
		name       string
		blck, size int64
	}{
		{tensor.F32, "f32", 1, 4}, {tensor.F16, "f16", 1, 2}, {tensor.BF16, "bf16", 1, 2},
		{tensor.I8, "i8", 1, 1}, {tensor.I16, "i16", 1, 2}, {tensor.I32, "i32", 1, 4},
		{tensor.I64, "i64", 1, 8}, {tensor.F64, "f64", 1, 8},
		{tensor.Q4_0, "q4_0", 32, 18}, {tensor.Q4_1, "q4_1", 32, 20}, {tensor.Q5_0, "q5_0", 32, 22},
		{tensor.Q5_1, "q5_1", 32, 24}, {tensor.Q8_0, "q8_0", 32, 34}, {tensor.Q8_1, "q8_1", 32, 36},
		{tensor.Q2_K, "q2_K", 256, 84}, {tensor.Q3_K, "q3_K", 256, 110}, {tensor.Q4_K, "q4_K", 256, 144},
		{tensor.Q5_K, "q5_K", 256, 176}, {tensor.Q6_K, "q6_K", 256, 210}, {tensor.Q8_K, "q8_K", 256, 292},
		{tensor.IQ2_XXS, "iq2_xxs", 256, 66}, {tensor.IQ2_XS, "iq2_xs", 256, 74}, {tensor.IQ3_XXS, "iq3_xxs", 256, 98},
		{tensor.IQ1_S, "iq1_s", 256, 50}, {tensor.IQ4_NL, "iq4_nl", 32, 18}, {tensor.IQ3_S, "iq3_s", 256, 110},
		{tensor.IQ2_S, "iq2_s", 256, 82}, {tensor.IQ4_XS, "iq4_xs", 256, 136}, {tensor.IQ1_M, "iq1_m", 256, 56},
		{tensor.TQ1_0, "tq1_0", 256, 54}, {tensor.TQ2_0, "tq2_0", 256, 66}, {tensor.MXFP4, "mxfp4", 32, 17},
		{tensor.NVFP4, "nvfp4", 64, 36}, {tensor.Q1_0, "q1_0", 128, 18}, {tensor.Q2_0, "q2_0", 64, 18},
		{tensor.DType(4), "type(4)", 0, 0}, {tensor.DType(31), "type(31)", 0, 0}, {tensor.DType(43), "type(43)", 0, 0},
	} {
		if tc.t.String() != tc.name || int64(tc.t.BlockSize()) != tc.blck || int64(tc.t.Size()) != tc.size || tc.t.Known() != (tc.blck != 0) {
			t.Errorf("type %d: %s, block %d, size %d, known %v; want %s, %d, %d",
				uint32(tc.t), tc.t, tc.t.BlockSize(), tc.t.Size(), tc.t.Known(), tc.name, tc.blck, tc.size)
		}
	}
}
