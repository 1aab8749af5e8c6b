//go:build !amd64 || noasm

package cpu

import "github.com/graphc/graphc/tensor"

func packedSmall2Asm(tensor.DType, int, []byte, []byte, []byte, []float32, []int32, int, []float32) bool {
	return false
}
