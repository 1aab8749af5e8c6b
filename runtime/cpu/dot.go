package cpu

// The dot kernels behind MulMat's small products and matrix-vector
// products: rows of a and columns of x are both contiguous along K, so each
// kernel multiplies whole vectors of K and sums the lanes at the end. They
// accumulate in float32, like ggml's vec_dot_f32 / vec_dot_f16 up to the
// summation order. Each dispatches on level to the AVX-512 or AVX2 assembly
// (dot_amd64.s) or to the Go loop, which is the reference; the AVX2 kernels
// take K in multiples of 8 and the wrappers finish the tail here.

// dotF32 returns Σ a[k]·x[k] over k < len(x).
func dotF32(a, x []float32) float32 {
	a = a[:len(x)]
	switch level {
	case isaAVX512:
		return dotF32AVX512(a, x)
	case isaAVX2:
		n := len(x) &^ 7
		return dotF32AVX2(a[:n], x[:n]) + dotF32Go(a[n:], x[n:])
	}
	return dotF32Go(a, x)
}

// dotF32Go is dotF32's loop.
func dotF32Go(a, x []float32) float32 {
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

// dot4x1F32 returns the dots of rows a[i·lda:][:len(x)], i < 4, with x.
func dot4x1F32(a []float32, lda int, x []float32) (c [4]float32) {
	k := len(x)
	if k == 0 {
		return
	}
	_ = a[3*lda+k-1]
	switch level {
	case isaAVX512:
		dot4x1F32AVX512(a, lda, x, &c)
		return
	case isaAVX2:
		n := k &^ 7
		if n > 0 {
			dot4x1F32AVX2(a, lda, x[:n], &c)
		}
		if n < k {
			t := dot4x1F32Go(a[n:], lda, x[n:])
			for i := range c {
				c[i] += t[i]
			}
		}
		return
	}
	return dot4x1F32Go(a, lda, x)
}

// dot4x1F32Go is dot4x1F32's loop.
func dot4x1F32Go(a []float32, lda int, x []float32) (c [4]float32) {
	n := len(x)
	a0, a1, a2, a3 := a[:n], a[lda:lda+n], a[2*lda:2*lda+n], a[3*lda:3*lda+n]
	var s0, s1, s2, s3 float32
	for k, u := range x {
		s0 += a0[k] * u
		s1 += a1[k] * u
		s2 += a2[k] * u
		s3 += a3[k] * u
	}
	return [4]float32{s0, s1, s2, s3}
}

// dot4x4F32 sets c[j·ldc+i] to the dot of row a[i·lda:][:k] with column
// x[j·ldx:][:k], i, j < 4: a 4×4 block of C, columns ldc apart.
func dot4x4F32(a []float32, lda int, x []float32, ldx, k int, c []float32, ldc int) {
	_ = c[3*ldc+3]
	if k == 0 {
		clear4x4(c, ldc)
		return
	}
	_, _ = a[3*lda+k-1], x[3*ldx+k-1]
	switch level {
	case isaAVX512:
		dot4x4F32AVX512(a, lda, x, ldx, k, c, ldc)
		return
	case isaAVX2:
		n := k &^ 7
		if n == k {
			dot4x4F32AVX2(a, lda, x, ldx, k, c, ldc)
			return
		}
		var t [16]float32
		dot4x4F32Go(a[n:], lda, x[n:], ldx, k-n, t[:], 4)
		if n > 0 {
			dot4x4F32AVX2(a, lda, x, ldx, n, c, ldc)
			for j := 0; j < 4; j++ {
				for i := 0; i < 4; i++ {
					c[j*ldc+i] += t[4*j+i]
				}
			}
		} else {
			for j := 0; j < 4; j++ {
				copy(c[j*ldc:j*ldc+4], t[4*j:4*j+4])
			}
		}
		return
	}
	dot4x4F32Go(a, lda, x, ldx, k, c, ldc)
}

// clear4x4 zeroes the 4×4 block of c, columns ldc apart.
func clear4x4(c []float32, ldc int) {
	for j := 0; j < 4; j++ {
		clear(c[j*ldc : j*ldc+4])
	}
}

// dot4x4F16 is dot4x4F32 for four f16 rows of a, converted to float32 as
// they load, at AVX2 and AVX-512 (MulMat's batches in fours).
func dot4x4F16(a []uint16, lda int, x []float32, ldx, k int, c []float32, ldc int) {
	_ = c[3*ldc+3]
	if k == 0 {
		clear4x4(c, ldc)
		return
	}
	_, _ = a[3*lda+k-1], x[3*ldx+k-1]
	if level == isaAVX512 {
		dot4x4F16AVX512(a, lda, x, ldx, k, c, ldc)
		return
	}
	n := k &^ 7
	if n > 0 {
		dot4x4F16AVX2(a, lda, x, ldx, n, c, ldc)
	} else {
		clear4x4(c, ldc)
	}
	if n == k {
		return
	}
	at := f16Tails(a, lda, n, k)
	var xt [4 * 8]float32
	for j := range 4 {
		copy(xt[8*j:8*j+8], x[j*ldx+n:j*ldx+k])
	}
	var t [16]float32
	dot4x4F16AVX2(at[:], 8, xt[:], 8, 8, t[:], 4)
	for j := 0; j < 4; j++ {
		for i := 0; i < 4; i++ {
			c[j*ldc+i] += t[4*j+i]
		}
	}
}

// f16Tails returns elements n to k (k-n < 8) of the four rows of a, lda
// apart, zero-padded to 8 each: the AVX2 f16 kernels take whole vectors,
// and their tails go through them from these copies rather than through
// the Go loop, whose table lookups cost as much as a short row's kernel
// call (an attention's V rows, n_kv long, at every token).
func f16Tails(a []uint16, lda, n, k int) (at [4 * 8]uint16) {
	for i := range 4 {
		copy(at[8*i:8*i+8], a[i*lda+n:i*lda+k])
	}
	return at
}

// dot4x4F32Go is dot4x4F32's loop: two columns at a time, eight
// accumulators.
func dot4x4F32Go(a []float32, lda int, x []float32, ldx, k int, c []float32, ldc int) {
	a0, a1, a2, a3 := a[:k], a[lda:lda+k], a[2*lda:2*lda+k], a[3*lda:3*lda+k]
	for j := 0; j < 4; j += 2 {
		x0, x1 := x[j*ldx:j*ldx+k], x[(j+1)*ldx:(j+1)*ldx+k]
		var c00, c01, c10, c11, c20, c21, c30, c31 float32
		for p, u := range x0 {
			v := x1[p]
			w := a0[p]
			c00 += w * u
			c01 += w * v
			w = a1[p]
			c10 += w * u
			c11 += w * v
			w = a2[p]
			c20 += w * u
			c21 += w * v
			w = a3[p]
			c30 += w * u
			c31 += w * v
		}
		c0, c1 := c[j*ldc:j*ldc+4], c[(j+1)*ldc:(j+1)*ldc+4]
		c0[0], c0[1], c0[2], c0[3] = c00, c10, c20, c30
		c1[0], c1[1], c1[2], c1[3] = c01, c11, c21, c31
	}
}

// dotPanelF32 is dot4x4F32 for m rows (a multiple of 4): c[j·ldc+i] =
// row i of a · column j of x, i < m, j < 4.
func dotPanelF32(m int, a []float32, lda int, x []float32, ldx, k int, c []float32, ldc int) {
	if m == 0 {
		return
	}
	_ = c[3*ldc+m-1]
	if k > 0 {
		_, _ = a[(m-1)*lda+k-1], x[3*ldx+k-1]
	}
	if level == isaAVX512 && k > 0 {
		dotPanelF32AVX512(m, a, lda, x, ldx, k, c, ldc)
		return
	}
	dotPanelF32Go(m, a, lda, x, ldx, k, c, ldc)
}

// dotPanelF32Go is dotPanelF32 through dot4x4F32 (at the current level).
func dotPanelF32Go(m int, a []float32, lda int, x []float32, ldx, k int, c []float32, ldc int) {
	for i0 := 0; i0+4 <= m; i0 += 4 {
		dot4x4F32(a[i0*lda:], lda, x, ldx, k, c[i0:], ldc)
	}
}

// dotF16 returns Σ f32(a[k])·x[k]: an f16 row with a column of f16 values
// held as float32, so every product is exact, as in ggml_vec_dot_f16.
func dotF16(a []uint16, x []float32) float32 {
	a = a[:len(x)]
	switch {
	case level == isaAVX512 && !narrowF16:
		return dotF16AVX512(a, x)
	case level >= isaAVX2:
		n := len(x) &^ 7
		return dotF16AVX2(a[:n], x[:n]) + dotF16Go(a[n:], x[n:])
	}
	return dotF16Go(a, x)
}

// dotF16Go is dotF16's loop.
func dotF16Go(a []uint16, x []float32) float32 {
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

// dot4x1F16 is dot4x1F32 for four f16 rows.
func dot4x1F16(a []uint16, lda int, x []float32) (c [4]float32) {
	k := len(x)
	if k == 0 {
		return
	}
	_ = a[3*lda+k-1]
	switch {
	case level == isaAVX512 && !narrowF16:
		dot4x1F16AVX512(a, lda, x, &c)
		return
	case level >= isaAVX2 && narrowF16 && lda == k && k <= oneStreamF16:
		for i := range c {
			c[i] = dotF16(a[i*k:(i+1)*k], x)
		}
		return
	case level >= isaAVX2:
		n := k &^ 7
		if n > 0 {
			dot4x1F16AVX2(a, lda, x[:n], &c)
		}
		if n < k {
			at := f16Tails(a, lda, n, k)
			var xt [8]float32
			copy(xt[:], x[n:])
			var t [4]float32
			dot4x1F16AVX2(at[:], 8, xt[:], &t)
			for i := range c {
				c[i] += t[i]
			}
		}
		return
	}
	return dot4x1F16Go(a, lda, x)
}

// dot4x1F16Go is dot4x1F16's loop.
func dot4x1F16Go(a []uint16, lda int, x []float32) (c [4]float32) {
	n := len(x)
	a0, a1, a2, a3 := a[:n], a[lda:lda+n], a[2*lda:2*lda+n], a[3*lda:3*lda+n]
	tab := &f16Table
	var s0, s1, s2, s3 float32
	for k, u := range x {
		s0 += tab[a0[k]] * u
		s1 += tab[a1[k]] * u
		s2 += tab[a2[k]] * u
		s3 += tab[a3[k]] * u
	}
	return [4]float32{s0, s1, s2, s3}
}
