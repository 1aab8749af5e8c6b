package passes

import (
	"errors"

	"github.com/graphc/graphc/ir"
)

// expandBackends is a placeholder being written (TODO before landing).
func expandBackends(g *ir.Graph, pc *Context) error { return errors.New("expand_backends: not written yet") }
