//go:build !amd64 || noasm

package cpu

import (
	"github.com/graphc/graphc/ops"
)

// The Go bodies of rope_amd64.go's kernels, reached only from tests here.

func ropeNeoxAVX512(y, x, cs []float32) { ropeRowGo(y, x, cs, ops.RopeNeox) }

func ropePairsRowsAVX512(y, x, cs []float32, _ *[16]uint32, rows, ld int) {
	for r := 0; r < rows; r++ {
		ropeRowGo(y[r*ld:], x[r*ld:], cs, 0)
	}
}
