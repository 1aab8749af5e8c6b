//go:build !amd64 || noasm

package cpu

import (
	"github.com/graphc/graphc/tensor"
)

func packedKernelAsm(tensor.DType, int, []byte, []byte, []float32, []int32, int, []float32) bool {
	return false
}

func quantizeColumnAsm([]float32, int, []byte, int, []float32, []int32, int, uint) bool { return false }

func packedVector2Asm(tensor.DType, []byte, []byte, []byte, []float32, []int32, int, []float32) bool {
	return false
}

func columnKernelAsm(tensor.DType) func(w, xq *byte, xd *float32, xc *int32, nb int, tile *float32) {
	return nil
}
