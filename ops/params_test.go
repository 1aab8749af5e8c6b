package ops

import "testing"

// TestMulMatPrec: mul_mat's precision reaches ggml as GGML_PREC_F32 in
// op_params[0] (ggml_mul_mat_set_prec), and only 0 and 32 are taken.
func TestMulMatPrec(t *testing.T) {
	if w := (MulMatParams{Prec: 32}).GGML(); w[0] != ggmlPrecF32 {
		t.Errorf("prec 32 is op_params %v", w)
	}
	if w := (MulMatParams{}).GGML(); w != [16]int32{} {
		t.Errorf("the default precision is op_params %v", w)
	}
	if got := (MulMatParams{}).FromGGML(MulMatParams{Prec: 32}.GGML()); got != (MulMatParams{Prec: 32}) {
		t.Errorf("prec 32 reads back as %+v", got)
	}
	if _, err := (MulMatParams{Prec: 16}).Check(); err == nil {
		t.Error("prec 16 was taken")
	}
}
