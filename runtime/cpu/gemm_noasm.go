//go:build !amd64 || noasm

package cpu

// gemmKernel32x12: see gemm_amd64.go. This build has no assembly; the loop
// is the reference and is only reached from tests (level is isaGo).
func gemmKernel32x12(k int, a, b, c []float32, ldc int, acc bool) {
	gemmKernelRef(32, 12, k, a, b, c, ldc, acc)
}

// gemmKernel16x6: see gemm_amd64.go.
func gemmKernel16x6(k int, a, b, c []float32, ldc int, acc bool) {
	gemmKernelRef(16, 6, k, a, b, c, ldc, acc)
}

// transpose8AVX: see gemm_amd64.go.
func transpose8AVX(dst []float32, ldd int, src []float32, lds, k int) {
	transpose8Go(dst, ldd, src, lds, k)
}
