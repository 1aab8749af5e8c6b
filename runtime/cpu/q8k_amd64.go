//go:build !noasm

package cpu

// quantizeQ8_KAVX2 writes x's len(x)/256 blocks as q8_K to dst with AVX2,
// byte for byte quantizeQ8_KGo's (NaN and ±Inf included): len(dst) ≥
// len(x)/256·q8_KSize is checked by the caller.
//
//go:noescape
func quantizeQ8_KAVX2(dst []byte, x []float32)
