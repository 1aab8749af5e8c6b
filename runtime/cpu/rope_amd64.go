//go:build !noasm

package cpu

// ropeNeoxAVX512 is ropeRowGo's NEOX loop with AVX-512 (n = len(cs), h = n/2):
//
//	for i := 0; i < h; i++ {
//		c, s, u, v := cs[i], cs[h+i], x[i], x[h+i]
//		y[i], y[h+i] = fma(u, c, -(v*s)), fma(u, s, v*c)
//	}
//
// len(x), len(y) >= len(cs) is checked by the caller.
//
//go:noescape
func ropeNeoxAVX512(y, x, cs []float32)

// ropePairsRowsAVX512 is ropeRowGo's mode-0 loop with AVX-512 on rows rows
// of y and x, ld elements apart, all rotated by cs (the heads of one
// token); idx is ropePairIdx:
//
//	for r := 0; r < rows; r++ {
//		y, x := y[r*ld:], x[r*ld:]
//		for i := 0; i < h; i++ {
//			c, s, u, v := cs[i], cs[h+i], x[2*i], x[2*i+1]
//			y[2*i], y[2*i+1] = fma(u, c, -(v*s)), fma(u, s, v*c)
//		}
//	}
//
// The caller checks the bounds.
//
//go:noescape
func ropePairsRowsAVX512(y, x, cs []float32, idx *[16]uint32, rows, ld int)
