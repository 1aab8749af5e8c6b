//go:build darwin || freebsd || linux || netbsd

package native

import "github.com/ebitengine/purego"

// Open loads the shared library at path and returns its symbol lookup, 0
// for a missing symbol. global (RTLD_GLOBAL) lets libraries loaded later
// resolve symbols against this one, as ggml's backend libraries do
// against ggml-base.
func Open(path string, global bool) (func(name string) uintptr, error) {
	mode := purego.RTLD_NOW | purego.RTLD_LOCAL
	if global {
		mode = purego.RTLD_NOW | purego.RTLD_GLOBAL
	}
	h, err := purego.Dlopen(path, mode)
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
