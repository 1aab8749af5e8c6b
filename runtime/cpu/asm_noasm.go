//go:build !amd64 || noasm

package cpu

// haveAsm: this build has only the Go loops (see isa.go).
const haveAsm = false
