//go:build !noasm

package cpu

// haveAsm: this build has the assembly kernels (see isa.go).
const haveAsm = true
