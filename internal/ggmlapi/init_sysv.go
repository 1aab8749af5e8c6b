//go:build amd64 && (darwin || freebsd || linux || netbsd)

package ggmlapi

import "github.com/ebitengine/purego"

// InitContext calls ggml_init(struct ggml_init_params {size_t mem_size;
// void *mem_buffer; bool no_alloc;}), which takes its 24-byte struct by
// value. purego's struct support is not trusted here (purego#520: amd64
// struct arguments ignore field offsets), so the call follows the SysV
// AMD64 ABI by hand: a struct larger than 16 bytes is class MEMORY and is
// passed in the caller's stack argument area, eightbyte by eightbyte, and
// takes no register. SyscallN puts its first six arguments in rdi…r9 and
// the rest on the stack in order, so six unused register arguments come
// first and the struct's three eightbytes follow; ggml_init has no other
// argument to take a register. TestInitParams checks it against the real
// library: the context reports the size and no_alloc it was given.
func (a *API) InitContext(memSize uintptr, noAlloc bool) Context {
	var na uintptr
	if noAlloc {
		na = 1
	}
	r, _, _ := purego.SyscallN(a.initSym, 0, 0, 0, 0, 0, 0, memSize, 0, na)
	return Context(r)
}
