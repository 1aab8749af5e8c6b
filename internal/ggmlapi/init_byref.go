//go:build (arm64 && (darwin || freebsd || linux || netbsd || windows)) || (windows && amd64)

package ggmlapi

import (
	"unsafe"

	"github.com/ebitengine/purego"
)

// initParams is struct ggml_init_params as the C compiler lays it out on
// 64-bit targets: 8 + 8 + 1 bytes, padded to 24.
type initParams struct {
	memSize   uintptr
	memBuffer uintptr
	noAlloc   bool
	_         [7]byte
}

// InitContext calls ggml_init(struct ggml_init_params), which takes its
// 24-byte struct by value. AAPCS64 (and Apple's arm64 variant of it, and
// Windows on Arm) passes a composite larger than 16 bytes by reference:
// the caller copies it to memory and passes the copy's address in the
// register the argument would take, x0 here. purego's own struct
// support is not relied on (purego#520). The Windows x64 convention
// passes a struct whose size is not 1, 2, 4 or 8 bytes the same way, in
// rcx. Built and vetted for darwin/arm64 and windows/amd64 but not run
// there: only linux/amd64 (init_sysv.go) is tested against the real
// library.
func (a *API) InitContext(memSize uintptr, noAlloc bool) Context {
	p := &initParams{memSize: memSize, noAlloc: noAlloc}
	r, _, _ := purego.SyscallN(a.initSym, uintptr(unsafe.Pointer(p)))
	return Context(r)
}
