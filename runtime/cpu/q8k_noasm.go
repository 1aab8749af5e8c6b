//go:build !amd64 || noasm

package cpu

// The Go body of q8k_amd64.go's kernel: this build has no assembly, so only
// tests reach it (level is isaGo).

func quantizeQ8_KAVX2(dst []byte, x []float32) { quantizeQ8_KGo(dst[:0], x) }
