//go:build !amd64 || noasm

package cpu

// The Go bodies of f16_amd64.go's kernels, reached only from tests here.

func f16ToF32AVX512(d []float32, s []uint16) { f16ToF32Go(d, s) }

func f16ToF32AVX2(d []float32, s []uint16) { f16ToF32Go(d, s) }

func f32ToF16AVX512(d []uint16, s []float32) { f32ToF16Go(d, s) }

func f32ToF16AVX2(d []uint16, s []float32) { f32ToF16Go(d, s) }

func roundF16AVX512(d, s []float32) { roundF16Go(d, s) }

func roundF16AVX2(d, s []float32) { roundF16Go(d, s) }
