package passes

import (
	"errors"

	"github.com/graphc/graphc/ir"
)

// assignBackends is a placeholder being written (TODO before landing).
func assignBackends(g *ir.Graph, pc *Context) error { return errors.New("assign_backends: not written yet") }
