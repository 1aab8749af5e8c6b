package codegen

import (
	"fmt"
	"strconv"
	"strings"
)

// backendKind is how generated code creates and drives one kind of
// backend: its runtime package, the type whose kernel methods it calls and
// its constructor.
type backendKind struct {
	path     string
	typ      string // the backend type, e.g. Sim in package cpu
	ctor     string // its constructor
	indexed  bool   // named <kind><N>: the constructor takes N before threads
	fallible bool   // the constructor returns an error too (the device may be missing)
	// host: synchronous and computing in host memory; the scheduler drives
	// it through runtime.NewHostBackend. Otherwise the type itself is a
	// runtime.Backend (asynchronous, with memory of its own).
	host bool
}

// backendKinds are the backends generated code can drive, by name without
// the device number.
var backendKinds = map[string]backendKind{
	"cpu":   {path: pkgCPU, typ: "Backend", ctor: "New", host: true},
	"blas":  {path: pkgOpenBLAS, typ: "Backend", ctor: "New", fallible: true, host: true},
	"sim":   {path: pkgCPU, typ: "Sim", ctor: "NewSim", indexed: true},
	"cuda":  {path: pkgCUDA, typ: "Backend", ctor: "New", indexed: true, fallible: true},
	"metal": {path: pkgMetal, typ: "Backend", ctor: "New", fallible: true},
}

// kindOf splits a backend name into its kind and device number.
func kindOf(name string) (backendKind, int, error) {
	base := strings.TrimRight(name, "0123456789")
	k, ok := backendKinds[base]
	if !ok {
		return k, 0, fmt.Errorf("backend %s: generated code cannot drive it (known: blas, cpu, cuda<N>, metal, sim<N>)", name)
	}
	n := 0
	if k.indexed {
		var err error
		if n, err = strconv.Atoi(name[len(base):]); err != nil {
			return k, 0, fmt.Errorf("backend %s: want a device number after %s", name, base)
		}
	} else if base != name {
		return k, 0, fmt.Errorf("backend %s: %s takes no device number", name, base)
	}
	return k, n, nil
}
