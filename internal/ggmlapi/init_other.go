//go:build !((amd64 && (darwin || freebsd || linux || netbsd)) || (arm64 && (darwin || freebsd || linux || netbsd || windows)) || (windows && amd64))

package ggmlapi

// InitContext: ggml_init's by-value struct is coded for the SysV amd64,
// AAPCS64 and Windows x64 conventions only; elsewhere Load fails first.
func (a *API) InitContext(memSize uintptr, noAlloc bool) Context { return 0 }
