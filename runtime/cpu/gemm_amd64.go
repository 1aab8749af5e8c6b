//go:build !noasm

package cpu

// gemmKernel32x12 is the AVX-512 microkernel of the packed GEMM: a packed
// 32×k panel of A (a[32p+i] = A[i][p]) times a packed k×12 panel of B
// (b[12p+j] = B[p][j]) into a 32×12 block of C with column stride ldc,
// added to C when acc is set:
//
//	for j := 0; j < 12; j++ {
//		for i := 0; i < 32; i++ {
//			var s float32
//			for p := 0; p < k; p++ {
//				s += a[32*p+i] * b[12*p+j]
//			}
//			if acc {
//				s = c[j*ldc+i] + s
//			}
//			c[j*ldc+i] = s
//		}
//	}
//
// The products are fused (one rounding per step). The caller checks the
// lengths: len(a) >= 32k, len(b) >= 12k, len(c) >= 11·ldc+32.
//
//go:noescape
func gemmKernel32x12(k int, a, b, c []float32, ldc int, acc bool)

// gemmKernel16x6 is gemmKernel32x12 for AVX2: a 16×k panel of A times a
// k×6 panel of B into a 16×6 block of C:
//
//	for j := 0; j < 6; j++ {
//		for i := 0; i < 16; i++ {
//			var s float32
//			for p := 0; p < k; p++ {
//				s += a[16*p+i] * b[6*p+j]
//			}
//			if acc {
//				s = c[j*ldc+i] + s
//			}
//			c[j*ldc+i] = s
//		}
//	}
//
//go:noescape
func gemmKernel16x6(k int, a, b, c []float32, ldc int, acc bool)

// transpose8AVX is transpose8Go with AVX (both levels):
//
//	for i := 0; i < 8; i++ {
//		for p := 0; p < k; p++ {
//			dst[p*ldd+i] = src[i*lds+p]
//		}
//	}
//
// k is a multiple of 8; the caller checks the bounds.
//
//go:noescape
func transpose8AVX(dst []float32, ldd int, src []float32, lds, k int)
