package ggml

import "syscall"

// openLibrary loads the DLL at path. Untested: graphc's CI has no Windows
// machine.
func openLibrary(path string) (func(name string) uintptr, error) {
	h, err := syscall.LoadLibrary(path)
	if err != nil {
		return nil, err
	}
	return func(name string) uintptr {
		p, err := syscall.GetProcAddress(h, name)
		if err != nil {
			return 0
		}
		return p
	}, nil
}
