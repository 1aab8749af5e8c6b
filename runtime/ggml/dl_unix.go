//go:build darwin || freebsd || linux || netbsd

package ggml

import "github.com/ebitengine/purego"

// openLibrary loads the shared library at path. RTLD_GLOBAL: the backend
// libraries ggml loads later resolve ggml-base's symbols against the copy
// already loaded.
func openLibrary(path string) (func(name string) uintptr, error) {
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, err
	}
	return func(name string) uintptr {
		p, err := purego.Dlsym(h, name)
		if err != nil {
			return 0
		}
		return p
	}, nil
}
