//go:build !noasm

package cpu

// The vector loops of vec.go (vec_amd64.s). The callers check the lengths;
// the AVX2 versions take a multiple of 8 elements.

// addF32AVX512 is
//
//	for i := range d {
//		d[i] = a[i] + x[i]
//	}
//
//go:noescape
func addF32AVX512(d, a, x []float32)

// subF32AVX512 is
//
//	for i := range d {
//		d[i] = a[i] - x[i]
//	}
//
//go:noescape
func subF32AVX512(d, a, x []float32)

// mulF32AVX512 is
//
//	for i := range d {
//		d[i] = a[i] * x[i]
//	}
//
//go:noescape
func mulF32AVX512(d, a, x []float32)

// divF32AVX512 is
//
//	for i := range d {
//		d[i] = a[i] / x[i]
//	}
//
//go:noescape
func divF32AVX512(d, a, x []float32)

// scaleF32AVX512 is
//
//	for i := range d {
//		d[i] = a[i] * s
//	}
//
//go:noescape
func scaleF32AVX512(d, a []float32, s float32)

// addScaledF32AVX512 is
//
//	for i := range w {
//		w[i] = fma(s, m[i], w[i])
//	}
//
//go:noescape
func addScaledF32AVX512(w, m []float32, s float32)

// addF32AVX2 is
//
//	for i := range d {
//		d[i] = a[i] + x[i]
//	}
//
//go:noescape
func addF32AVX2(d, a, x []float32)

// subF32AVX2 is
//
//	for i := range d {
//		d[i] = a[i] - x[i]
//	}
//
//go:noescape
func subF32AVX2(d, a, x []float32)

// mulF32AVX2 is
//
//	for i := range d {
//		d[i] = a[i] * x[i]
//	}
//
//go:noescape
func mulF32AVX2(d, a, x []float32)

// divF32AVX2 is
//
//	for i := range d {
//		d[i] = a[i] / x[i]
//	}
//
//go:noescape
func divF32AVX2(d, a, x []float32)

// scaleF32AVX2 is
//
//	for i := range d {
//		d[i] = a[i] * s
//	}
//
//go:noescape
func scaleF32AVX2(d, a []float32, s float32)

// addScaledF32AVX2 is
//
//	for i := range w {
//		w[i] = fma(s, m[i], w[i])
//	}
//
//go:noescape
func addScaledF32AVX2(w, m []float32, s float32)

// maxF32AVX512 is maxF32Go: the largest element, NaNs skipped, -Inf for none.
//
//go:noescape
func maxF32AVX512(x []float32) float32

// sumSqF64AVX512 is
//
//	var s float64
//	for _, v := range x {
//		s += float64(v * v)
//	}
//	return s
//
//go:noescape
func sumSqF64AVX512(x []float32) float64
