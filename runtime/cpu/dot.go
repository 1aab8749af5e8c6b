package cpu

// The matrix-multiplication microkernels. Each is a small leaf function so
// that an assembly version can take its place behind build tags (see the
// package documentation); these Go loops are the reference and the noasm
// fallback. All accumulate in float32, one accumulator per output, like
// ggml's vec_dot_f32 / vec_dot_f16 up to the summation order.

// dotF32 returns Σ a[k]·x[k] over k < len(x).
func dotF32(a, x []float32) float32 {
	a = a[:len(x)]
	var s0, s1, s2, s3 float32
	for len(x) >= 4 && len(a) >= 4 {
		s0 += a[0] * x[0]
		s1 += a[1] * x[1]
		s2 += a[2] * x[2]
		s3 += a[3] * x[3]
		a, x = a[4:], x[4:]
	}
	for k := range x {
		s0 += a[k] * x[k]
	}
	return (s0 + s1) + (s2 + s3)
}

// dot4F32 returns the dots of four rows with one column x.
func dot4F32(a0, a1, a2, a3, x []float32) (s0, s1, s2, s3 float32) {
	n := len(x)
	a0, a1, a2, a3 = a0[:n], a1[:n], a2[:n], a3[:n]
	for k, u := range x {
		s0 += a0[k] * u
		s1 += a1[k] * u
		s2 += a2[k] * u
		s3 += a3[k] * u
	}
	return
}

// gemm4x2F32 returns the 4×2 block of dots of rows a0..a3 with columns x0,
// x1: c[2i+j] = a_i · x_j.
func gemm4x2F32(a0, a1, a2, a3, x0, x1 []float32) (c [8]float32) {
	n := len(x0)
	a0, a1, a2, a3, x1 = a0[:n], a1[:n], a2[:n], a3[:n], x1[:n]
	var c00, c01, c10, c11, c20, c21, c30, c31 float32
	for k, u := range x0 {
		v := x1[k]
		w := a0[k]
		c00 += w * u
		c01 += w * v
		w = a1[k]
		c10 += w * u
		c11 += w * v
		w = a2[k]
		c20 += w * u
		c21 += w * v
		w = a3[k]
		c30 += w * u
		c31 += w * v
	}
	return [8]float32{c00, c01, c10, c11, c20, c21, c30, c31}
}

// dotF16 returns Σ f32(a[k])·x[k]: an f16 row with a column of f16 values
// held as float32, so every product is exact, as in ggml_vec_dot_f16.
func dotF16(a []uint16, x []float32) float32 {
	a = a[:len(x)]
	tab := &f16Table
	var s0, s1 float32
	for len(x) >= 2 && len(a) >= 2 {
		s0 += tab[a[0]] * x[0]
		s1 += tab[a[1]] * x[1]
		a, x = a[2:], x[2:]
	}
	for k := range x {
		s0 += tab[a[k]] * x[k]
	}
	return s0 + s1
}

// dot4F16 is dot4F32 for four f16 rows.
func dot4F16(a0, a1, a2, a3 []uint16, x []float32) (s0, s1, s2, s3 float32) {
	n := len(x)
	a0, a1, a2, a3 = a0[:n], a1[:n], a2[:n], a3[:n]
	tab := &f16Table
	for k, u := range x {
		s0 += tab[a0[k]] * u
		s1 += tab[a1[k]] * u
		s2 += tab[a2[k]] * u
		s3 += tab[a3[k]] * u
	}
	return
}
