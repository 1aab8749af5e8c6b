//go:build !amd64 || noasm

package cpu

// The Go bodies of vec_amd64.go's kernels, reached only from tests here.

func addF32AVX512(d, a, x []float32) { addF32Go(d, a, x) }

func subF32AVX512(d, a, x []float32) { subF32Go(d, a, x) }

func mulF32AVX512(d, a, x []float32) { mulF32Go(d, a, x) }

func divF32AVX512(d, a, x []float32) { divF32Go(d, a, x) }

func scaleF32AVX512(d, a []float32, s float32) { scaleF32Go(d, a, s) }

func addScaledF32AVX512(w, m []float32, s float32) { addScaledF32Go(w, m, s) }

func addF32AVX2(d, a, x []float32) { addF32Go(d, a, x) }

func subF32AVX2(d, a, x []float32) { subF32Go(d, a, x) }

func mulF32AVX2(d, a, x []float32) { mulF32Go(d, a, x) }

func divF32AVX2(d, a, x []float32) { divF32Go(d, a, x) }

func scaleF32AVX2(d, a []float32, s float32) { scaleF32Go(d, a, s) }

func addScaledF32AVX2(w, m []float32, s float32) { addScaledF32Go(w, m, s) }

func maxF32AVX512(x []float32) float32 { return maxF32Go(x) }

func sumSqF64AVX512(x []float32) float64 { return sumSqF64Go(x) }
