package metal

import (
	"errors"

	"github.com/graphc/graphc/runtime"
)

// Backend is the Metal device as generated code drives it. This build of
// graphc has no Metal execution layer: New always fails (see Available),
// and the type exists so that code generated for metal targets compiles.
type Backend struct {
	runtime.Unavailable
}

// New opens the default Metal device with the given number of host
// threads, or reports why it cannot.
func New(threads int) (*Backend, error) {
	if ok, why := Available(); !ok {
		return nil, errors.New("metal: " + why)
	}
	return &Backend{runtime.Unavailable{BackendName: "metal", Reason: "not built"}}, nil
}
