//go:build !amd64 || noasm

package cpu

// The Go bodies of exp_amd64.go's kernels, reached only from tests here.

func expRowAVX512(y, x []float32, s, m float32, _ *expConsts) float64 { return expRowGo(y, x, s, m) }

func siluAVX512(d, x []float32, _ *expConsts) { siluGo(d, x) }
