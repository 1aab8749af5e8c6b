package cuda

import (
	"errors"
	"fmt"

	"github.com/graphc/graphc/runtime"
)

// Backend is CUDA device n as generated code drives it. This build of
// graphc has no CUDA execution layer: New always fails (see Available), and
// the type exists so that code generated for cuda targets compiles.
type Backend struct {
	runtime.Unavailable
}

// New opens CUDA device n with the given number of host threads, or
// reports why it cannot.
func New(n, threads int) (*Backend, error) {
	if ok, why := Available(); !ok {
		return nil, errors.New(fmt.Sprintf("cuda%d: ", n) + why)
	}
	return &Backend{runtime.Unavailable{BackendName: fmt.Sprintf("cuda%d", n), Reason: "not built"}}, nil
}
