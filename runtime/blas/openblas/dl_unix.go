//go:build darwin || freebsd || linux || netbsd

package openblas

import "github.com/ebitengine/purego"

// openLibrary loads the shared library at path and returns its symbol
// lookup, 0 for a missing symbol.
func openLibrary(path string) (func(name string) uintptr, error) {
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
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
