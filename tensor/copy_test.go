package tensor

import "testing"

// TestCopyStrided copies a transposed view into a tensor of another shape
// with the same element count: elements go in logical (ne0-fastest) order.
func TestCopyStrided(t *testing.T) {
	src := NewTensor(F32, [4]int{3, 2, 1, 1}) // rows [0 1 2] [3 4 5]
	for i := range src.F32s() {
		src.F32s()[i] = float32(i)
	}
	tr := Tensor{Type: F32, Ne: [4]int{2, 3, 1, 1}, Nb: [4]int{12, 4, 24, 24}, Data: src.Data} // its transpose
	dst := NewTensor(F32, [4]int{6, 1, 1, 1})
	Copy(&dst, &tr)
	want := []float32{0, 3, 1, 4, 2, 5}
	for i, w := range want {
		if dst.F32s()[i] != w {
			t.Fatalf("got %v, want %v", dst.F32s(), want)
		}
	}
	back := Tensor{Type: F32, Ne: [4]int{2, 3, 1, 1}, Nb: [4]int{12, 4, 24, 24}, Data: NewBuffer(24)}
	Copy(&back, &dst) // scatter into strided memory: the original layout again
	if c := Clone(&back); string(c.Data) != string(dst.Data) {
		t.Errorf("Clone of the strided copy %v, want %v", c.F32s(), dst.F32s())
	}
	for i := range src.F32s() {
		if castSlice[float32](back.Data)[i] != float32(i) {
			t.Fatalf("scattered %v", castSlice[float32](back.Data))
		}
	}
}
