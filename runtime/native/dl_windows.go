package native

import "syscall"

// Open loads the DLL at path and returns its symbol lookup, 0 for a
// missing symbol; global has no meaning on Windows. Untested: graphc's CI
// has no Windows machine.
func Open(path string, global bool) (func(name string) uintptr, error) {
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
