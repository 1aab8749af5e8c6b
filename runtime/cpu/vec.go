package cpu

import "math"

// Elementwise float32 loops behind the bandwidth-bound ops (Add, Sub, Mul,
// Div, Scale, the mask of SoftMax, RMSNorm's sum of squares, SoftMax's
// max). Each dispatches on level to vec_amd64.s or runs its Go loop, which
// is the reference; the AVX2 kernels take a multiple of 8 elements and the
// Go loop finishes the tail.

// vecSplit is where an AVX2 kernel stops and the Go tail starts.
func vecSplit(n int) int {
	if level == isaAVX2 {
		return n &^ 7
	}
	return 0
}

// addF32 sets d[i] = a[i] + x[i], i < len(d); d may be a or x.
func addF32(d, a, x []float32) {
	a, x = a[:len(d)], x[:len(d)]
	switch level {
	case isaAVX512:
		addF32AVX512(d, a, x)
		return
	case isaAVX2:
		n := vecSplit(len(d))
		addF32AVX2(d[:n], a[:n], x[:n])
		d, a, x = d[n:], a[n:], x[n:]
	}
	addF32Go(d, a, x)
}

func addF32Go(d, a, x []float32) {
	a, x = a[:len(d)], x[:len(d)]
	for i := range d {
		d[i] = a[i] + x[i]
	}
}

// subF32 sets d[i] = a[i] - x[i].
func subF32(d, a, x []float32) {
	a, x = a[:len(d)], x[:len(d)]
	switch level {
	case isaAVX512:
		subF32AVX512(d, a, x)
		return
	case isaAVX2:
		n := vecSplit(len(d))
		subF32AVX2(d[:n], a[:n], x[:n])
		d, a, x = d[n:], a[n:], x[n:]
	}
	subF32Go(d, a, x)
}

func subF32Go(d, a, x []float32) {
	a, x = a[:len(d)], x[:len(d)]
	for i := range d {
		d[i] = a[i] - x[i]
	}
}

// mulF32 sets d[i] = a[i] · x[i].
func mulF32(d, a, x []float32) {
	a, x = a[:len(d)], x[:len(d)]
	switch level {
	case isaAVX512:
		mulF32AVX512(d, a, x)
		return
	case isaAVX2:
		n := vecSplit(len(d))
		mulF32AVX2(d[:n], a[:n], x[:n])
		d, a, x = d[n:], a[n:], x[n:]
	}
	mulF32Go(d, a, x)
}

func mulF32Go(d, a, x []float32) {
	a, x = a[:len(d)], x[:len(d)]
	for i := range d {
		d[i] = a[i] * x[i]
	}
}

// divF32 sets d[i] = a[i] / x[i].
func divF32(d, a, x []float32) {
	a, x = a[:len(d)], x[:len(d)]
	switch level {
	case isaAVX512:
		divF32AVX512(d, a, x)
		return
	case isaAVX2:
		n := vecSplit(len(d))
		divF32AVX2(d[:n], a[:n], x[:n])
		d, a, x = d[n:], a[n:], x[n:]
	}
	divF32Go(d, a, x)
}

func divF32Go(d, a, x []float32) {
	a, x = a[:len(d)], x[:len(d)]
	for i := range d {
		d[i] = a[i] / x[i]
	}
}

// scaleF32 sets d[i] = a[i] · s; d may be a.
func scaleF32(d, a []float32, s float32) {
	a = a[:len(d)]
	switch level {
	case isaAVX512:
		scaleF32AVX512(d, a, s)
		return
	case isaAVX2:
		n := vecSplit(len(d))
		scaleF32AVX2(d[:n], a[:n], s)
		d, a = d[n:], a[n:]
	}
	scaleF32Go(d, a, s)
}

func scaleF32Go(d, a []float32, s float32) {
	a = a[:len(d)]
	for i := range d {
		d[i] = a[i] * s
	}
}

// addScaledF32 is w[i] += s·m[i], fused as gcc compiles ggml's loop (the
// vector kernels fuse with an FMA; s = 1 is then a plain add).
func addScaledF32(w, m []float32, s float32) {
	m = m[:len(w)]
	switch level {
	case isaAVX512:
		addScaledF32AVX512(w, m, s)
		return
	case isaAVX2:
		n := vecSplit(len(w))
		addScaledF32AVX2(w[:n], m[:n], s)
		w, m = w[n:], m[n:]
	}
	addScaledF32Go(w, m, s)
}

func addScaledF32Go(w, m []float32, s float32) {
	m = m[:len(w)]
	if s == 1 {
		for i := range w {
			w[i] += m[i]
		}
		return
	}
	for i := range w {
		w[i] = fmaf(s, m[i], w[i])
	}
}

// maxF32 returns the largest element of x, NaNs skipped; -Inf if none.
func maxF32(x []float32) float32 {
	if level == isaAVX512 {
		return maxF32AVX512(x)
	}
	return maxF32Go(x)
}

func maxF32Go(x []float32) float32 {
	mx := float32(math.Inf(-1))
	for _, v := range x {
		if v > mx {
			mx = v
		}
	}
	return mx
}

// sumSqF64 returns Σ float64(x[i]·x[i]) (the float32 squares).
func sumSqF64(x []float32) float64 {
	if level == isaAVX512 {
		return sumSqF64AVX512(x)
	}
	return sumSqF64Go(x)
}

// sumSqF64Go adds the squares in four float64 partial sums (ggml adds them
// in order; they differ by float64 rounding only).
func sumSqF64Go(x []float32) float64 {
	var s0, s1, s2, s3 float64
	for v := x; len(v) > 0; {
		if len(v) < 4 {
			for _, e := range v {
				s0 += float64(e * e)
			}
			break
		}
		s0 += float64(v[0] * v[0])
		s1 += float64(v[1] * v[1])
		s2 += float64(v[2] * v[2])
		s3 += float64(v[3] * v[3])
		v = v[4:]
	}
	return (s0 + s1) + (s2 + s3)
}
