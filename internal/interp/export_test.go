package interp

import (
	"github.com/graphc/graphc/ops"
)

// KernelOf reports whether the interpreter can call op's kernel.
func KernelOf(op ops.Op) error {
	_, err := kernelOf(op)
	return err
}
