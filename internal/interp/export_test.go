package interp

import "github.com/graphc/graphc/ir"

// KernelOf reports whether the interpreter can call op's kernel.
func KernelOf(op ir.Op) error {
	_, err := kernelOf(op)
	return err
}
